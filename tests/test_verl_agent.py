"""verl's GUI-agent recipe on CPU: the mobile_use tool, the gui_agent loop through verl's own AgentLoopBase
machinery, the episode reward, generation with the tiny Qwen3-VL behind verl's server-client interface."""

from __future__ import annotations

import asyncio
import json
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


def trainer_config(**gui: object):
    from omegaconf import OmegaConf

    return OmegaConf.create({
        "actor_rollout_ref": {"rollout": {"prompt_length": 4096, "response_length": 8192}},
        "data": {"apply_chat_template_kwargs": {}, "mm_processor_kwargs": {}},
        "gui_agent": dict(gui),
    })


def make_loop(processor, grid: str = "grid999", **gui: object) -> gui_agent_loop.GUIAgentLoop:
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    config = trainer_config(**gui)
    tool = mut.MobileUseTool({"grid": grid, "max_steps": int(gui.get("max_turns", 20))})
    return gui_agent_loop.GUIAgentLoop(
        trainer_config=DictConfigWrap(config), server_manager=None, tokenizer=processor.tokenizer,
        processor=processor, dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data),
        hf_model_type="qwen3_vl", tools=ToolListWrap([tool]))


def gold_text(loop: gui_agent_loop.GUIAgentLoop) -> str:
    """The scripted policy: the session's next gold action as a recipe answer on the tool's grid."""
    (session,) = loop.tool.sessions.values()
    gold = session.info.get("gold_action") or Action(type="complete")
    w, h = session.episode.screen_size
    args = mut.regrid_arguments(to_mobile_use(gold, w, h), mut.CoordinateGrid("pixels"), loop.tool.grid, (w, h))
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
            inputs.update(pixel_values=vision["pixel_values"], image_grid_thw=vision["image_grid_thw"])
        with torch.no_grad():
            out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        ids = out[0, len(prompt_ids):].tolist()
        self.calls.append({"prompt_ids": list(prompt_ids), "token_ids": ids, "n_images": len(image_data or [])})
        return TokenOutput(token_ids=ids)


def run_episode(loop, server, row):
    loop.server_manager = server
    return asyncio.run(loop.run({"temperature": 1.0}, **row))


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
    assert first.size == session.episode.screen_size
    gold = session.info["gold_action"]
    w, h = session.episode.screen_size
    args = mut.regrid_arguments(to_mobile_use(gold, w, h), mut.CoordinateGrid("pixels"), tool.grid, (w, h))
    response, reward, metrics = asyncio.run(tool.execute(iid, args))
    assert response.image and response.image[0].size == (w, h)
    assert not metrics["invalid"] and session.episode.steps[-1].action.type == gold.type
    # a call the phone cannot take is recorded as invalid and the phone does not move
    before = session.obs.copy()
    response, _, metrics = asyncio.run(tool.execute(iid, {"action": "system_button", "button": "Power"}))
    assert metrics["invalid"] and "Invalid action" in response.text and (session.obs == before).all()
    asyncio.run(tool.release(iid))
    assert iid not in tool.sessions


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
