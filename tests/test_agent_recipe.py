"""The agent recipe file (core.agent_recipe, verl/gui_agent/recipe.yaml): `gui-agent rollout --recipe` builds the
model request exactly as verl's gui_agent loop does on the training data, and a bad file is one named error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.rl_env
pytest.importorskip("verl")
pytest.importorskip("gymnasium")

import test_verl_agent as agent  # noqa: E402
import test_verl_agent_data as data  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from core.agent_recipe import AgentRecipe, AgentRecipeError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "verl" / "gui_agent" / "recipe.yaml"
processor, qwen3_dir = agent.processor, agent.qwen3_dir  # the tiny Qwen3-VL and its processor (fixtures)
demo_dir = data.demo_dir  # prepare_gui_agent_data.py --create_demo output (module fixture)


def rollout(*args: str):
    from core.cli import app

    return CliRunner(env={"COLUMNS": "400"}).invoke(app, ["rollout", *args])


def test_the_recipe_file_is_the_documented_defaults_and_bad_values_name_their_key(tmp_path: Path) -> None:
    recipe = AgentRecipe.load(RECIPE)
    assert recipe == AgentRecipe() and (recipe.grid, recipe.max_turns) == ("grid999", 20)  # the README's values
    cases = {"max_turn: 3": "unknown key(s) ['max_turn']", "max_turns: 0": "max_turns: must be >= 1",
             "grid: grid998": "grid: must be one of grid999, grid1000, pixels", "on_invalid: retry": "on_invalid:",
             "prompt: 'Do {task}'": "prompt: only {instruction}, {width}, {height}", "screen_width: 1080":
             "screen_width/screen_height [1080]", "prompt: 'No task here'": "prompt: must contain {instruction}",
             "completion_bonus: .nan": "completion_bonus: must be a finite number"}
    for line, message in cases.items():
        path = tmp_path / "r.yaml"
        path.write_text(f"{line}\n")
        with pytest.raises(AgentRecipeError) as err:
            AgentRecipe.load(path)
        assert str(err.value).startswith(f"{path}: ") and message in str(err.value), str(err.value)
        assert "\n" not in str(err.value)
    (tmp_path / "list.yaml").write_text("- grid999\n")
    with pytest.raises(AgentRecipeError, match="a recipe is a YAML mapping"):
        AgentRecipe.load(tmp_path / "list.yaml")


def test_rollout_request_is_the_agent_loops_request_on_the_training_data(demo_dir: Path, processor) -> None:
    """One simulated-phone row of the training data played by verl's loop (its tokens are what GRPO trains on) and
    by `gui-agent rollout --recipe`'s session: at every turn the rollout's request, rendered by the processor with
    its tools and screenshots, is token for token the prompt the loop sent to the generation server, and the
    screenshots are the same pixels."""
    import numpy as np
    import pyarrow.parquet as pq

    from core.inference.requests import hf_messages
    from core.rollout.envs import get_env
    from core.rollout.recipe import RecipeSession

    row = pq.read_table(demo_dir / "test.parquet").to_pylist()[0]
    item = data.load_rlhf(demo_dir / "test.parquet", processor)[0]
    loop = agent.make_loop(processor)  # the loop's recipe: verl/gui_agent/recipe.yaml, as the run scripts pass it
    assert loop.gui == AgentRecipe.load(RECIPE)
    answers: list[str] = []

    def gold() -> str:
        (session,) = loop.tool.sessions.values()
        answers.append(session.gold_text())
        return answers[-1]

    server = agent.ScriptedServer(processor.tokenizer, gold)
    out = agent.run_episode(loop, server, {k: item[k] for k in ("raw_prompt", "extra_info", "agent_name")})
    assert out.extra_fields["error"] is None and out.extra_fields["episode"]["success"]
    n_turns = len(server.calls)
    assert n_turns >= 2

    extra = row["extra_info"]
    session = RecipeSession(get_env("sim-phone").make(), extra["task_id"], AgentRecipe.load(RECIPE),
                            seed=extra["seed"])
    for turn in range(n_turns):
        request = session.request()
        assert request.tools == loop.tool_schemas
        text = processor.apply_chat_template(hf_messages(request.messages), tools=request.tools, tokenize=False,
                                             add_generation_prompt=True)
        ids = processor(text=[text], images=request.images, return_tensors="pt")["input_ids"][0].tolist()
        assert ids == server.calls[turn]["prompt_ids"], f"turn {turn}"
        assert len(request.images) == server.calls[turn]["n_images"] == turn + 1
        session.act(answers[turn])
    assert session.done and session.episode.success and session.ended_by == out.extra_fields["ended_by"]
    loop_images = out.multi_modal_data["images"]
    assert [im.size for im in loop_images] == [im.size for im in session.images()] == [(512, 1152)] * n_turns
    for mine, theirs in zip(session.images(), loop_images, strict=True):
        assert np.array_equal(np.asarray(mine), np.asarray(theirs.convert("RGB")))


def test_rollout_recipe_scripted_and_random_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "scripted"
    result = rollout("--output", str(out), "--recipe", str(RECIPE), "--policy", "scripted", "--episodes", "10",
                     "--gallery", "0")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 10 and all(r["success"] and r["ended_by"] == "episode_end" for r in rows)
    assert all(r["recipe"] == str(RECIPE) and r["template"] == "qwen3vl-mobile-use" for r in rows)
    first = rows[0]["steps"][0]["model_text"]  # the recipe's answer format on its 0-999 grid
    assert first.startswith("Thought: ") and "\nAction: " in first and '"name": "mobile_use"' in first
    assert "success rate 100.0% (10/10 episodes)" in result.output
    # the random policy on the same recipe: the metric discriminates
    result = rollout("--output", str(tmp_path / "random"), "--recipe", str(RECIPE), "--policy", "random",
                     "--episodes", "10", "--gallery", "0")
    assert result.exit_code == 0 and "success rate 0.0% (0/10 episodes)" in result.output


def test_rollout_recipe_with_the_tiny_qwen3vl(tmp_path: Path) -> None:
    """`--policy model --backend hf` on the tiny random Qwen3-VL: the request with tools and capped screenshots
    reaches the model and its answers are judged by the recipe's rules (random weights: no valid call, so the
    recipe's on_invalid: end stops each episode after one turn)."""
    from core.testing import tiny_qwen3vl_path

    out = tmp_path / "tiny"
    result = rollout("--output", str(out), "--recipe", str(RECIPE), "--policy", "model", "--backend", "hf",
                     "--model", str(tiny_qwen3vl_path()), "--episodes", "2", "--max-new-tokens", "8",
                     "--device", "cpu", "--gallery", "0")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["error"] is None for r in rows)
    assert all(r["ended_by"] == "invalid" and r["n_steps"] == r["n_invalid"] == 1 for r in rows)


def test_rollout_recipe_refuses_the_options_it_replaces_and_bad_files(tmp_path: Path) -> None:
    for option in (["--template", "guir1-high"], ["--max-steps", "5"], ["--max-screenshots", "2"],
                   ["--level", "low"], ["--max-pixels", "100000"]):
        result = rollout("--output", str(tmp_path / "o"), "--recipe", str(RECIPE), "--policy", "scripted", *option)
        assert result.exit_code == 2
        assert result.output.strip() == f"error: {option[0]}: set by the recipe file {RECIPE}; drop it or edit the file"
    bad = tmp_path / "bad.yaml"
    bad.write_text(RECIPE.read_text().replace("max_turns: 20", "max_turns: twenty"))
    result = rollout("--output", str(tmp_path / "o"), "--recipe", str(bad), "--policy", "scripted")
    assert result.exit_code == 2 and result.output.strip().startswith(f"error: --recipe: {bad}: max_turns:")
    assert not (tmp_path / "o").exists()  # nothing written
    # a resumed run with another recipe is refused (its episodes would mix two settings)
    out = tmp_path / "run"
    assert rollout("--output", str(out), "--recipe", str(RECIPE), "--policy", "scripted", "--episodes", "2",
                   "--gallery", "0").exit_code == 0
    other = tmp_path / "other.yaml"
    other.write_text(RECIPE.read_text().replace("on_invalid: end", "on_invalid: feedback"))
    result = rollout("--output", str(out), "--recipe", str(other), "--policy", "scripted", "--episodes", "2",
                     "--gallery", "0")
    assert result.exit_code == 2 and "recipe" in result.output


def test_shell_values_for_the_run_scripts(tmp_path: Path) -> None:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "core.agent_recipe", "shell", str(RECIPE)], capture_output=True,
                          text=True, cwd=ROOT, check=True)
    values = {}
    for line in subprocess.run(["bash", "-c", f"{proc.stdout}\nset | grep ^RECIPE_"], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        key, _, value = line.partition("=")
        values[key] = value
    assert values["RECIPE_GRID"] == "grid999" and values["RECIPE_MAX_TURNS"] == "20"
    bad = tmp_path / "bad.yaml"
    bad.write_text("grid: nine\n")
    proc = subprocess.run([sys.executable, "-m", "core.agent_recipe", "shell", str(bad)], capture_output=True,
                          text=True, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        f"error: {bad}: grid: must be one of grid999, grid1000, pixels, got 'nine'")


def test_every_backend_hands_the_recipe_tools_to_the_chat_template(qwen3_dir: Path, processor) -> None:
    """hf (rendered by the processor), vLLM (the prompt its engine gets; fake engine, no GPU) and OpenAI-compatible
    servers (the request body's `tools`, rendered by the server) get the recipe's mobile_use schema."""
    from test_inference_vllm import fake_engine

    from core.inference.backends.openai import OpenAIBackend
    from core.inference.backends.vllm import VLLMBackend
    from core.inference.requests import hf_messages
    from core.rollout.envs import get_env
    from core.rollout.recipe import RecipeSession
    from core.world import list_tasks

    session = RecipeSession(get_env("sim-phone").make(), list_tasks("test")[0], AgentRecipe.load(RECIPE))
    request = session.request()
    expected = processor.apply_chat_template(hf_messages(request.messages), tools=request.tools, tokenize=False,
                                             add_generation_prompt=True)
    assert "<tools>" in expected and "relative 0-999 grid" in expected and "Task: " in expected
    backend = VLLMBackend(str(qwen3_dir), engine_factory=fake_engine, use_ray=False)
    (inputs,) = backend.engine_inputs([request])
    assert inputs["prompt"] == expected and inputs["multi_modal_data"]["image"][0].size == (512, 1152)
    server = OpenAIBackend("http://127.0.0.1:9/v1", served_model_name="m")
    assert server.payload(request)["tools"] == request.tools == AgentRecipe().tool_schemas()
    server.close()
