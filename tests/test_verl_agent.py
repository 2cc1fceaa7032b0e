"""verl's GUI-agent recipe on CPU: the mobile_use tool, the gui_agent loop through verl's own AgentLoopBase
machinery, the episode reward, generation with the tiny Qwen3-VL behind verl's server-client interface."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.rl_env

ROOT = Path(__file__).resolve().parents[1]
GUI_AGENT_DIR = ROOT / "verl" / "gui_agent"

torch = pytest.importorskip("torch")
pytest.importorskip("verl")
pytest.importorskip("gymnasium")
sys.path.insert(0, str(GUI_AGENT_DIR))  # how the run scripts import it (PYTHONPATH), never as `verl.*`

import gui_agent_loop  # noqa: E402
import mobile_use_tool as mut  # noqa: E402
from core import testing  # noqa: E402
from core.actions import Action, to_mobile_use  # noqa: E402


# ------------------------------------------------------------------------------------------ harness


@pytest.fixture(scope="module")
def qwen3_dir() -> Path:
    return testing.tiny_qwen3vl_path()


@pytest.fixture(scope="module")
def processor(qwen3_dir: Path):
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(qwen3_dir)


@pytest.fixture(scope="module")
def model(qwen3_dir: Path):
    from transformers import AutoModelForImageTextToText

    return AutoModelForImageTextToText.from_pretrained(qwen3_dir).eval()


def trainer_config(response_length: int = 8192, **gui: object):
    from omegaconf import OmegaConf

    return OmegaConf.create({
        "actor_rollout_ref": {"rollout": {"prompt_length": 8192, "response_length": response_length}},
        "data": {"apply_chat_template_kwargs": {}, "mm_processor_kwargs": {}},
        "gui_agent": dict(gui),
    })


def make_loop(processor, grid: str = "grid999", *, response_length: int = 8192, tool_config: dict | None = None,
              **gui: object) -> gui_agent_loop.GUIAgentLoop:
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    config = trainer_config(response_length, **gui)
    tool = mut.MobileUseTool({"grid": grid, "max_steps": int(gui.get("max_turns", 20)), **(tool_config or {})})
    return gui_agent_loop.GUIAgentLoop(
        trainer_config=DictConfigWrap(config), server_manager=None, tokenizer=processor.tokenizer,
        processor=processor, dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data),
        hf_model_type="qwen3_vl", tools=ToolListWrap([tool]))


def gold_text(loop: gui_agent_loop.GUIAgentLoop) -> str:
    """The scripted policy: the session's next gold action as a recipe answer on the tool's grid."""
    (session,) = loop.tool.sessions.values()
    return session_gold_text(loop.tool, session)


def session_gold_text(tool: mut.MobileUseTool, session) -> str:
    """A session's next gold action as a recipe answer on ``tool``'s grid."""
    gold = session.info.get("gold_action") or Action(type="complete")
    w, h = session.episode.screen_size
    args = mut.regrid_arguments(to_mobile_use(gold, w, h), mut.CoordinateGrid("pixels"), tool.grid, (w, h))
    return f"Thought: this is the next step.\nAction: {gold.type}.\n{mut.tool_call_text(args)}"


class ScriptedServer:
    """verl's LLM server client interface (``generate(request_id, prompt_ids=..., ...) -> TokenOutput``) answering
    with the tokens of a chosen text + ``<|im_end|>``, as vLLM returns them."""

    def __init__(self, tokenizer, answer):
        self.tokenizer, self.answer, self.calls = tokenizer, answer, []

    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        ids = self.tokenizer.encode(self.answer(), add_special_tokens=False) + [testing.IM_END_ID]
        self.calls.append({"prompt_ids": list(prompt_ids), "token_ids": ids, "n_images": len(image_data or [])})
        return TokenOutput(token_ids=ids)


class HFServer(ScriptedServer):
    """The same interface generating with a Hugging Face model on CPU (greedy, the rollout's token budget)."""

    def __init__(self, processor, model, max_new_tokens=12):
        self.processor, self.model, self.max_new_tokens, self.calls = processor, model, max_new_tokens, []

    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        inputs = {"input_ids": torch.tensor([prompt_ids]), "attention_mask": torch.ones(1, len(prompt_ids), dtype=torch.long)}
        if image_data:
            vision = self.processor.image_processor(images=image_data, return_tensors="pt")
            inputs.update(pixel_values=vision["pixel_values"], image_grid_thw=vision["image_grid_thw"],
                          mm_token_type_ids=torch.tensor(self.processor.create_mm_token_type_ids([prompt_ids])))
        with torch.no_grad():
            out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        ids = out[0, len(prompt_ids):].tolist()
        self.calls.append({"prompt_ids": list(prompt_ids), "token_ids": ids, "n_images": len(image_data or [])})
        return TokenOutput(token_ids=ids)


def run_episode(loop, server, row):
    loop.server_manager = server
    return loop.loop.run_until_complete(loop.run({"temperature": 1.0}, **row))  # verl's loop runs on its event loop


def sim_row(task, grid: mut.CoordinateGrid):
    """A dataset row for a simulated-phone task: the recipe prompt with the env's first screenshot."""
    import gymnasium
    from PIL import Image

    import core.world  # noqa: F401

    env = gymnasium.make("gui_agent/SimPhone-v0")
    obs, info = env.reset(options={"task": task})
    screen = info["screen_size"]
    prompt = [{"role": "user", "content": [
        {"type": "image", "image": Image.fromarray(obs)},
        {"type": "text", "text": f"Task: {info['instruction']}\nScreen: {screen[0]}x{screen[1]} pixels."}]}]
    return {"raw_prompt": prompt, "extra_info": {"task_id": task.id}, "agent_name": "gui_agent"}


def full_render(processor, loop, messages, images):
    """apply_chat_template of the WHOLE conversation (tools block included), tokenized with its images."""
    text = processor.apply_chat_template(messages, tools=loop.tool_schemas, tokenize=False)
    return processor(text=[text], images=images, return_tensors="pt")["input_ids"][0].tolist()


# ------------------------------------------------------------------------------------------ grid + tool


def test_grid_round_trips_and_describes_itself() -> None:
    screen = (1080, 2400)
    for name, extent in (("grid999", (999, 999)), ("grid1000", (1000, 1000)), ("pixels", screen)):
        grid = mut.CoordinateGrid(name)
        assert grid.extent(screen) == tuple(float(v) for v in extent)
        assert grid.from_screen(grid.to_screen((333, 777), screen), screen) == [333, 777]
        assert name in mut.mobile_use_tool_schema(grid)["function"]["description"] or name == "pixels" or \
            str(extent[0]) in mut.mobile_use_tool_schema(grid)["function"]["description"]
    assert mut.CoordinateGrid("grid999").from_screen((540, 1200), screen) == [500, 500]  # centre: 499.5 -> 500
    assert mut.CoordinateGrid("grid1000").from_screen((1080, 2400), screen) == [1000, 1000]
    with pytest.raises(ValueError, match="unknown coordinate grid"):
        mut.CoordinateGrid("grid100")
    assert mut.regrid_arguments({"action": "click", "coordinate": [999, 0]}, mut.CoordinateGrid("grid999"),
                                mut.CoordinateGrid("pixels"), screen)["coordinate"] == [1080, 0]
    # a malformed coordinate is left for the parser to name
    assert mut.regrid_arguments({"coordinate": ["a", 1]}, mut.CoordinateGrid(), mut.CoordinateGrid("pixels"),
                                screen)["coordinate"] == ["a", 1]


def test_tool_yaml_builds_the_tool_through_verls_registry() -> None:
    from verl.tools.tool_registry import initialize_tools_from_config

    (tool,) = initialize_tools_from_config(str(GUI_AGENT_DIR / "mobile_use_tool.yaml"))
    assert type(tool).__name__ == "MobileUseTool" and tool.name == "mobile_use"
    assert tool.grid.name == "grid999"
    schema = tool.tool_schema.model_dump(exclude_unset=True, exclude_none=True)
    assert schema["function"]["parameters"]["properties"]["action"]["enum"] == list(mut.RECIPE_ACTIONS)
    assert "0-999" in schema["function"]["description"]


def test_tool_executes_on_the_simulated_phone_and_answers_with_the_next_screenshot() -> None:
    from core.world import list_tasks

    tool = mut.MobileUseTool({"grid": "grid999"})
    task = list_tasks("test")[0]
    iid, _ = asyncio.run(tool.create(create_kwargs={"task_id": task.id}))
    session = tool.session(iid)
    first = tool.screenshot(iid)
    shown = mut.capped_size(session.episode.screen_size, tool.max_screenshot_pixels)  # within the pixel cap
    assert first.size == shown and shown[0] * shown[1] <= tool.max_screenshot_pixels
    gold = session.info["gold_action"]
    w, h = session.episode.screen_size
    args = mut.regrid_arguments(to_mobile_use(gold, w, h), mut.CoordinateGrid("pixels"), tool.grid, (w, h))
    response, reward, metrics = asyncio.run(tool.execute(iid, args))
    assert response.image and response.image[0].size == shown
    assert not metrics["invalid"] and session.episode.steps[-1].action.type == gold.type
    # a call the phone cannot take is recorded as invalid and the phone does not move
    before = session.obs.copy()
    response, _, metrics = asyncio.run(tool.execute(iid, {"action": "system_button", "button": "Power"}))
    assert metrics["invalid"] and "Invalid action" in response.text and (session.obs == before).all()
    asyncio.run(tool.release(iid))
    assert iid not in tool.sessions


@pytest.mark.parametrize("coordinate", [[float("nan"), 5], [float("inf"), 5], [10 ** 400, 5], [1e308, 1e308],
                                        ["a", 5]], ids=["nan", "inf", "400 digits", "1e308", "text"])
def test_tool_answers_non_finite_and_huge_coordinates_as_invalid_actions(coordinate) -> None:
    """The same 'Invalid action' reply as for text coordinates: the phone does not move, nothing raises."""
    from core.world import list_tasks

    tool = mut.MobileUseTool({"grid": "grid999"})
    iid, _ = asyncio.run(tool.create(create_kwargs={"task_id": list_tasks("test")[0].id}))
    before = tool.session(iid).obs.copy()
    response, reward, metrics = asyncio.run(tool.execute(iid, {"action": "click", "coordinate": coordinate}))
    assert metrics["invalid"] and response.text.startswith("Invalid action") and reward == 0.0
    assert (tool.session(iid).obs == before).all()
    asyncio.run(tool.release(iid))


def test_replay_source_serves_the_logged_screens_and_checks_the_expected_sequence() -> None:
    from PIL import Image

    screens = [Image.new("RGB", (200, 400), c) for c in ("red", "green", "blue")]
    expected = [{"action": "click", "coordinate": [500, 250]}, {"action": "type", "text": "hello world"},
                {"action": "terminate", "status": "success"}]
    tool = mut.MobileUseTool({"grid": "grid999"})
    kwargs = {"screenshots": screens, "expected_actions": expected, "instruction": "say hello"}
    iid, _ = asyncio.run(tool.create(create_kwargs=kwargs))
    session = tool.session(iid)
    assert session.info["gold_action"].point == pytest.approx((100.1, 100.1), abs=0.2)
    response, _, _ = asyncio.run(tool.execute(iid, {"action": "click", "coordinate": [510, 240]}))
    assert response.image[0].getpixel((0, 0)) == (0, 128, 0)  # the second logged screen, whatever was done
    asyncio.run(tool.execute(iid, {"action": "type", "text": "hello world"}))
    response, reward, metrics = asyncio.run(tool.execute(iid, {"action": "terminate", "status": "success"}))
    assert session.done and session.episode.success and reward == 1.0 and metrics["done"]
    # a wrong first step never succeeds, even if the rest matches
    iid2, _ = asyncio.run(tool.create(create_kwargs=kwargs))
    for args in ({"action": "click", "coordinate": [900, 900]}, expected[1], expected[2]):
        asyncio.run(tool.execute(iid2, args))
    assert tool.session(iid2).done and not tool.session(iid2).episode.success
    with pytest.raises(ValueError, match=r"expected_actions\[0\]"):
        mut.ReplayPhoneEnv(screens, [{"action": "fly"}], instruction="x", grid=mut.CoordinateGrid())


# ------------------------------------------------------------------------------------------ the agent loop


def conversation(row, output):
    """The whole conversation the loop built: the prompt, each answer, each screenshot it led to."""
    messages = [dict(m) for m in row["raw_prompt"]]
    images = output.multi_modal_data.get("images", [])
    texts = output.extra_fields["turn_texts"]
    shown = 1
    for i, text in enumerate(texts):
        messages.append({"role": "assistant", "content": text})
        if i in output.extra_fields["feedback"]:
            messages.append({"role": "user", "content": output.extra_fields["feedback"][i]})
        elif i + 1 < len(texts):
            messages.append({"role": "tool", "content": [{"type": "image"}]})
            shown += 1
    assert shown == len(images)
    return messages, images


def assert_tokens_match_the_template(processor, loop, row, output, server) -> None:
    """prompt+response ids == apply_chat_template of the whole conversation; mask 1 exactly on generated ids."""
    messages, images = conversation(row, output)
    ids = output.prompt_ids + output.response_ids
    # the template closes the last answer with "<|im_end|>\n"; generation stops at <|im_end|>
    newline = processor.tokenizer.encode("\n")
    assert ids + newline == full_render(processor, loop, messages, images)
    # the response starts right after the first prompt; every generated span is where the server put it, mask 1
    assert output.prompt_ids == server.calls[0]["prompt_ids"]
    mask = output.response_mask
    assert len(mask) == len(output.response_ids)
    expected = [0] * len(mask)
    for call in server.calls:
        start = len(call["prompt_ids"]) - len(output.prompt_ids)
        assert output.response_ids[start:start + len(call["token_ids"])] == call["token_ids"]
        expected[start:start + len(call["token_ids"])] = [1] * len(call["token_ids"])
        end = start + len(call["token_ids"])
        if end < len(mask):  # PR 6921: the "\n" after <|im_end|> is in the sequence, masked out
            assert output.response_ids[end - 1] == testing.IM_END_ID
            assert processor.tokenizer.decode(output.response_ids[end:end + 3]) == "\n<|im_start|>user"
    assert mask == expected


@pytest.fixture(scope="module")
def held_out_tasks():
    from core.world import list_tasks

    return list_tasks("test")


@pytest.mark.parametrize("grid", ["grid999", "grid1000", "pixels"])
def test_scripted_episode_tokens_mask_images_and_reward(processor, held_out_tasks, grid) -> None:
    task = next(t for t in held_out_tasks if t.family != held_out_tasks[0].family) if grid == "pixels" \
        else held_out_tasks[0]
    loop = make_loop(processor, grid=grid)
    server = ScriptedServer(processor.tokenizer, lambda: gold_text(loop))
    row = sim_row(task, loop.tool.grid)
    out = run_episode(loop, server, row)

    assert out.extra_fields["error"] is None, out.extra_fields["error"]
    assert out.extra_fields["ended_by"] == "episode_end"
    episode = out.extra_fields["episode"]
    assert episode["success"] and episode["n_invalid"] == 0
    n_turns = len(server.calls)
    assert n_turns == episode["n_steps"] >= 2
    # one new screenshot per executed step except the last; the server saw every screenshot so far
    assert len(out.multi_modal_data["images"]) == n_turns
    assert [c["n_images"] for c in server.calls] == list(range(1, n_turns + 1))
    assert_tokens_match_the_template(processor, loop, row, out, server)
    # gold answers score the maximum on every turn, plus the completion bonus
    parts = out.extra_fields["reward_extra_info"]
    assert parts["gui_agent/overall"] == pytest.approx(1.0) and parts["gui_agent/format"] == 1.0
    assert out.reward_score == pytest.approx(2.0)
    assert parts["gui_agent/tool_calls"] == n_turns and parts["gui_agent/invalid"] == 0
    # the episode's seconds in generation, on the phone and in its reward, apart
    timing = out.extra_fields["timing_s"]
    assert set(timing) == {"generate", "phone", "reward", "tokens"} and all(v > 0 for v in timing.values()), timing


@pytest.mark.parametrize("on_invalid", ["end", "feedback"])
def test_invalid_answers_end_the_episode_or_are_fed_back(processor, held_out_tasks, on_invalid) -> None:
    loop = make_loop(processor, on_invalid=on_invalid, max_turns=3)
    answers = iter(["I think I should tap somewhere.", 'Thought: x\nAction: y\n<tool_call>\n{"name": "mobile_use", '
                    '"arguments": {"action": "click", "coordinate": [1, 2]}}\n</tool_call>\n<tool_call>\n'
                    '{"name": "mobile_use", "arguments": {"action": "wait"}}\n</tool_call>', "<tool_call>{oops"])
    server = ScriptedServer(processor.tokenizer, lambda: next(answers))
    row = sim_row(held_out_tasks[0], loop.tool.grid)
    out = run_episode(loop, server, row)
    steps = out.extra_fields["episode"]["steps"]
    assert out.extra_fields["error"] is None
    if on_invalid == "end":
        assert out.extra_fields["ended_by"] == "invalid" and len(steps) == 1
    else:
        assert out.extra_fields["ended_by"] == "max_turns" and len(steps) == 3
        assert "expected exactly one tool call, got 2" in steps[1]["invalid"]
        feedback = processor.tokenizer.decode(out.response_ids)
        assert feedback.count("Your answer was not executed:") == 2
        assert len(out.multi_modal_data["images"]) == 1  # the phone never moved
    assert all(s["invalid"] for s in steps) and out.extra_fields["episode"]["n_invalid"] == len(steps)
    assert out.reward_score == pytest.approx(0.0)
    assert_tokens_match_the_template(processor, loop, row, out, server)


def test_a_broken_row_is_a_failed_episode_not_a_crashed_worker(processor) -> None:
    loop = make_loop(processor)
    row = {"raw_prompt": [{"role": "user", "content": "Task: nothing"}], "extra_info": {}}
    out = run_episode(loop, ScriptedServer(processor.tokenizer, lambda: "x"), row)
    assert out.reward_score == 0.0 and "task_id" in out.extra_fields["error"]


def test_tiny_qwen3vl_generates_whole_episodes_behind_the_server_interface(processor, model, held_out_tasks) -> None:
    loop = make_loop(processor, on_invalid="feedback", max_turns=2)
    server = HFServer(processor, model)
    row = sim_row(held_out_tasks[0], loop.tool.grid)
    out = run_episode(loop, server, row)
    assert out.extra_fields["error"] is None
    assert len(server.calls) == 2 and all(1 <= len(c["token_ids"]) <= 12 for c in server.calls)
    assert out.extra_fields["turn_texts"] == [processor.tokenizer.decode(c["token_ids"], skip_special_tokens=True)
                                              for c in server.calls]
    mask = out.response_mask
    for call in server.calls:  # model tokens carry the loss, the feedback turn between them does not
        start = len(call["prompt_ids"]) - len(out.prompt_ids)
        assert mask[start:start + len(call["token_ids"])] == [1] * len(call["token_ids"])
    assert sum(mask) == sum(len(c["token_ids"]) for c in server.calls) and 0 in mask
    assert out.prompt_ids + out.response_ids[:len(server.calls[1]["prompt_ids"]) - len(out.prompt_ids)] == \
        server.calls[1]["prompt_ids"]


def random_text(rng) -> str:
    """A uniformly random recipe call on the 0-999 grid (the random baseline)."""
    action = rng.choice(mut.RECIPE_ACTIONS)
    args: dict = {"action": action}
    if action in ("click", "long_press", "swipe"):
        args["coordinate"] = [rng.randint(0, 999), rng.randint(0, 999)]
    if action == "swipe":
        args["coordinate2"] = [rng.randint(0, 999), rng.randint(0, 999)]
    if action in ("type", "answer"):
        args["text"] = rng.choice(["hello", "wifi", "12", "Alice"])
    if action == "system_button":
        args["button"] = rng.choice(["Back", "Home", "Menu", "Enter"])
    if action == "terminate":
        args["status"] = rng.choice(["success", "failure"])
    return f"Thought: try.\nAction: {action}.\n{mut.tool_call_text(args)}"


def test_scripted_policy_solves_held_out_tasks_random_almost_none(processor, held_out_tasks) -> None:
    """Gold mobile_use calls through tool + loop + env: >= 95% of held-out tasks (every 6th of the 180 held-out
    tasks, both held-out splits, to keep CPU time down); uniformly random calls (10 turns) almost none."""
    import random

    sample = held_out_tasks[::6]
    assert {t.split for t in sample} == {"test_seed", "test_family"}
    rng = random.Random(0)
    solved = {"scripted": 0, "random": 0}
    for task in sample:
        for policy in solved:
            loop = make_loop(processor, max_turns=20 if policy == "scripted" else 10)
            answer = (lambda lp=loop: gold_text(lp)) if policy == "scripted" else (lambda: random_text(rng))
            out = run_episode(loop, ScriptedServer(processor.tokenizer, answer), sim_row(task, loop.tool.grid))
            assert out.extra_fields["error"] is None
            solved[policy] += out.extra_fields["episode"]["success"]
    assert solved["scripted"] >= 0.95 * len(sample)
    assert solved["random"] <= 0.1 * len(sample)


def test_recipe_readme_screen_size_keys_set_the_grid(processor) -> None:
    """The recipe README documents `gui_agent.screen_width/height` (999): they name the coordinate grid."""
    assert make_loop(processor, grid="grid999", screen_width=999, screen_height=999).gui.grid == "grid999"
    assert make_loop(processor, grid="grid1000", screen_width=1000, screen_height=1000).gui.grid == "grid1000"
    with pytest.raises(ValueError, match="disagrees with the mobile_use tool's grid 'grid1000'"):
        make_loop(processor, grid="grid1000", screen_width=999, screen_height=999)
    with pytest.raises(ValueError, match="gui_agent: screen_width/screen_height .* set by grid"):
        gui_agent_loop.GUIAgentConfig.from_mapping({"screen_width": 1080, "screen_height": 2400})
    with pytest.raises(ValueError, match="gui_agent: screen_width/screen_height .* set by grid"):
        gui_agent_loop.GUIAgentConfig.from_mapping({"screen_width": 999})
    with pytest.raises(ValueError, match="mean grid 'grid999' but grid is 'grid1000'"):
        gui_agent_loop.GUIAgentConfig.from_mapping({"screen_width": 999, "screen_height": 999, "grid": "grid1000"})
    with pytest.raises(ValueError, match=r"gui_agent: unknown key\(s\) \['screen'\]"):
        gui_agent_loop.GUIAgentConfig.from_mapping({"screen": 999})


def phone_screens(n: int, size=(1080, 2400)) -> list:
    """``n`` distinct phone-sized screens (a coloured bar moving down a white screen)."""
    from PIL import Image, ImageDraw

    screens = []
    for i in range(n):
        img = Image.new("RGB", size, "white")
        ImageDraw.Draw(img).rectangle([0, i * 100, size[0], i * 100 + 90], fill=(20 * i % 256, 90, 200))
        screens.append(img)
    return screens


@pytest.fixture(scope="module")
def released_bounds_processor(processor):
    """The tiny Qwen3-VL processor with the released Qwen3-VL image bounds (16,384 tokens of 32 x 32 px at most:
    a phone screenshot is not shrunk, 1080x2400 -> 2,550 tokens) instead of the tiny model's 256-token cap."""
    import copy

    real = copy.deepcopy(processor)
    low, high = 64 * 32 * 32, 16384 * 32 * 32
    real.image_processor.size = {"shortest_edge": low, "longest_edge": high}
    real.image_processor.min_pixels, real.image_processor.max_pixels = low, high
    grid = real.image_processor(images=[phone_screens(1)[0]], return_tensors="pt")["image_grid_thw"][0].tolist()
    assert grid[1] * grid[2] // 4 == 75 * 34  # 2400x1088 px: the full screen, 2,550 tokens
    return real


@pytest.mark.slow
@pytest.mark.parametrize("capped", [True, False])
def test_twenty_turns_of_a_1080x2400_phone_fit_the_recipe_budget(released_bounds_processor, capped: bool) -> None:
    """The run scripts' budget (MAX_RESPONSE_LENGTH 16,384, 20 turns): with the default screenshot cap all 20 turns
    fit, counted by the processor; full screens (2,550 tokens each) end the episode on the context budget."""
    import io

    processor = released_bounds_processor
    screens = phone_screens(21)
    cap = mut.DEFAULT_MAX_SCREENSHOT_PIXELS if capped else 0
    loop = make_loop(processor, response_length=16384, tool_config={"max_screenshot_pixels": cap, "max_steps": 30},
                     max_turns=20, max_screenshots=20)
    pngs = []
    for img in screens:
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        pngs.append(buf.getvalue())
    row = {"raw_prompt": [{"role": "user", "content": [
        {"type": "image", "image": mut.cap_screenshot(screens[0], cap)},
        {"type": "text", "text": "Task: wait until the update finishes.\nThe screen is 1080x2400 pixels."}]}],
        "extra_info": {"screenshots": pngs, "expected_actions": [{"action": "wait", "time": 1}] * 21,
                       "instruction": "wait until the update finishes"}, "agent_name": "gui_agent"}
    thought = ("Thought: The update is still running and the task says to wait until it finishes, so the right "
               "move is to wait a little longer and look at the screen again after that.\nAction: Wait one second.\n")
    server = ScriptedServer(processor.tokenizer, lambda: thought + mut.tool_call_text({"action": "wait", "time": 1}))
    out = run_episode(loop, server, row)
    parts = out.extra_fields["reward_extra_info"]
    assert out.extra_fields["error"] is None
    if capped:
        assert out.extra_fields["ended_by"] == "max_turns" and len(server.calls) == 20
        assert len(out.multi_modal_data["images"]) == 20 and parts["gui_agent/context_budget"] == 0.0
        assert {im.size for im in out.multi_modal_data["images"]} == {(512, 1152)}  # 576 tokens each
        # the loop's tokens are the processor's rendering of the whole conversation, and they fit the budget
        assert_tokens_match_the_template(processor, loop, row, out, server)
        assert 20 * 576 < len(out.response_ids) <= 16384
    else:
        assert out.extra_fields["ended_by"] == "context_budget" and len(server.calls) < 8
        assert parts["gui_agent/context_budget"] == 1.0
