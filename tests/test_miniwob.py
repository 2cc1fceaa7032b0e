"""MiniWoB++ in Chromium (core.envs.miniwob) through the same rollout loop the models use: the DOM-scripted policy
solves the named suite through parser + frames + env, random far less; core actions reach MiniWoB's action space;
a browser killed or frozen mid-episode becomes that episode's error and the next episode gets a fresh browser;
the tiny model runs whole episodes through the HF backend.

Needs ``make setup-web`` (Debian chromium + chromium-driver, miniwob + selenium in the rl env). Without it these
tests skip with the reason, except in CI (``CI=true``), where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from typer.testing import CliRunner

from core.actions import Action
from core.inference.requests import ResizePolicy
from core.rollout.envs import get_env
from core.rollout.policies import RandomPolicy, Reply, ScriptedPolicy
from core.rollout.runner import episode_specs, run_rollouts

SUITE = "click-type"


@pytest.fixture(scope="module")
def env(browser):
    from core.envs.miniwob import MiniWoBEnv

    e = MiniWoBEnv(timeout_s=20)
    yield e
    e.close()


def test_suite_is_named_and_has_at_least_ten_click_and_type_tasks():
    from core.envs.miniwob import SUITES

    assert get_env("miniwob").default_split == SUITE and len(SUITES[SUITE]) >= 10
    assert {"enter-text", "login-user", "click-button", "click-checkboxes"} <= set(SUITES[SUITE])


@pytest.mark.parametrize("template", ["guir1-high", "qwen3vl-mobile-use"])
def test_scripted_policy_solves_the_suite_through_the_rollout_loop(browser, template, tmp_path):
    """Gold actions from the DOM, written as model text in the template's format and frame (the 160x210 screen is
    upscaled for the model), parsed and mapped back to screen pixels: every click lands in its element's box."""
    entry = get_env("miniwob")
    specs = episode_specs(entry.tasks(SUITE), 2 * len(entry.tasks(SUITE)) if template == "guir1-high" else None)
    resize = ResizePolicy(min_pixels=4 * 160 * 210)  # the model sees the screenshot at twice its size
    summary = run_rollouts(entry.make, specs, ScriptedPolicy(), tmp_path, workers=2, progress=False, gallery=1,
                           session_options={"template": template, "resize": resize})
    assert summary["success_rate"] >= 0.95, summary["per_family"]
    assert summary["errors"] == 0 and summary["invalid_rate"] == 0.0
    assert summary["mean_reward"] >= 0.9 and 0.5 < summary["mean_decayed_reward"] < summary["mean_reward"]
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    clicks = [s for r in rows for s in r["steps"] if s["action"]["type"] == "click"]
    assert len(clicks) >= len(rows)
    for s in clicks:
        (x, y), (x1, y1, x2, y2) = s["action"]["point"], s["gold_box"]
        assert x1 <= x <= x2 and y1 <= y <= y2, s
    assert any(s["action"]["type"] == "type" for r in rows for s in r["steps"])
    assert (tmp_path / "gallery" / "index.html").is_file()


def test_random_policy_scores_far_lower(browser, tmp_path):
    entry = get_env("miniwob")
    summary = run_rollouts(entry.make, episode_specs(entry.tasks(SUITE), 2 * len(entry.tasks(SUITE))),
                           RandomPolicy(seed=0), tmp_path, workers=2, progress=False, gallery=0,
                           session_options={"max_steps": 8})
    assert summary["success_rate"] <= 0.35 and summary["errors"] == 0
    assert summary["mean_steps"] > 2  # it acts and rarely achieves anything


def test_core_actions_map_to_miniwob_actions(env):
    from miniwob.action import ActionTypes

    env.reset(seed=3, options={"task": "enter-text"})
    types = env.instance_config.action_types

    def mapped(action: Action):
        wob, ignored = env.to_miniwob(action)
        return (types[wob["action_type"]], wob) if wob is not None else (None, ignored)

    kind, wob = mapped(Action(type="click", point=(12.5, 80.25)))
    assert kind == ActionTypes.CLICK_COORDS and list(wob["coords"]) == [12.5, 80.25]
    assert mapped(Action(type="doubleclick", point=(1, 1)))[0] == ActionTypes.DBLCLICK_COORDS
    assert mapped(Action(type="scroll", direction="down"))[0] == ActionTypes.SCROLL_DOWN_COORDS
    assert mapped(Action(type="type", text="Jerald"))[1]["text"] == "Jerald"
    for action, key in ((Action(type="press_enter"), "<Enter>"), (Action(type="hotkey", text="Tab"), "<Tab>"),
                        (Action(type="system_button", button="Enter"), "<Enter>"),
                        (Action(type="press_pgdn"), "<PageDown>")):
        kind, wob = mapped(action)
        assert kind == ActionTypes.PRESS_KEY and env.instance_config.allowed_keys[wob["key"]] == key
    assert mapped(Action(type="wait"))[0] == ActionTypes.NONE
    for action, why in ((Action(type="click", point=(161, 5)), "outside"), (Action(type="press_back"), "no press_back"),
                        (Action(type="system_button", button="Home"), "no Home"),
                        (Action(type="scroll", direction="left"), "vertically"),
                        (Action(type="hotkey", text="ctrl+alt+f4"), "allowed keys")):
        assert why in mapped(action)[1]
    with pytest.raises(ValueError, match="at most 64"):
        env.to_miniwob(Action(type="type", text="x" * 65))
    with pytest.raises(ValueError, match="core.actions.Action"):
        env.step("click(3, 4)")


def test_ignored_and_ending_actions(env):
    obs, info = env.reset(seed=1, options={"task": "click-button"})
    assert info["instruction"].startswith("Click on the") and info["screen_size"] == (160, 210)
    assert obs.shape == (210, 160, 3) and obs.dtype.name == "uint8"
    obs2, reward, terminated, truncated, info = env.step({"action": "system_button", "button": "Back"})
    assert info["ignored"] and reward == 0.0 and not terminated and (obs2 == obs).all()
    _, reward, terminated, _, info = env.step(Action(type="complete"))
    assert terminated and not info["success"] and reward == 0.0


def test_a_wrong_click_fails_the_task_with_minus_one(env):
    """MiniWoB's own reward and termination: click-test-2 ends on either button, -1 for the wrong one."""
    _, info = env.reset(seed=2, options={"task": "click-test-2"})
    wrong = [w for w in info["widgets"] if w["role"] == "button" and w["text"] != info["fields"]["target"]]
    x1, y1, x2, y2 = wrong[0]["box"]
    _, reward, terminated, _, info = env.step(Action(type="click", point=((x1 + x2) / 2, (y1 + y2) / 2)))
    assert terminated and reward == -1.0 and not info["success"] and info["raw_reward"] == -1.0


class _Saboteur:
    """The scripted policy, except that on the given turn of the given episode it first does ``sabotage(env)``."""

    name = "scripted"

    def __init__(self, episode: str, turn: int, sabotage):
        self.episode, self.turn, self.sabotage = episode, turn, sabotage

    def __call__(self, sessions):
        for s in sessions:
            if s.episode.id == self.episode and len(s.episode.steps) == self.turn:
                self.sabotage(s.env)
        return [Reply(s.gold_text()) for s in sessions]


@pytest.mark.parametrize("how", ["killed", "frozen"])
def test_a_dead_or_hung_browser_fails_its_episode_and_the_next_one_gets_a_new_browser(browser, how, tmp_path):
    from core.envs.miniwob import MiniWoBEnv

    sig, groups = signal.SIGKILL if how == "killed" else signal.SIGSTOP, []

    def sabotage(env):
        groups.append(env.browser_pid())
        os.killpg(groups[-1], sig)

    policy = _Saboteur("login-user", 1, sabotage)
    specs = episode_specs(["login-user", "enter-text", "click-button"])
    # The env's deadline as the module's env fixture has it: wide enough that a busy machine's healthy browser meets it.
    summary = run_rollouts(lambda: MiniWoBEnv(timeout_s=20), specs, policy, tmp_path, progress=False, gallery=0)
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "episodes.jsonl").read_text().splitlines())}
    assert "browser" in rows["login-user"]["error"] and not rows["login-user"]["success"]
    if how == "frozen":  # the frozen browser cost one deadline, not a hung job
        assert "the browser did not answer within 20 s; killed" in rows["login-user"]["error"], rows["login-user"]
    assert rows["login-user"]["n_steps"] == 1  # the step before the sabotage was recorded
    assert rows["enter-text"]["success"] and rows["click-button"]["success"], summary
    assert summary["errors"] == 1
    assert not _alive_in_group(groups[0])  # the broken browser is gone, not left running or stopped


def test_cli_rollout_json_summary_resume_and_bad_task(browser, tmp_path):
    from core.cli import app

    def invoke(*args: str):
        return CliRunner(env={"COLUMNS": "400"}).invoke(app, ["rollout", "--env", "miniwob", *args])

    args = ("--policy", "scripted", "--tasks", "click-test,miniwob/focus-text-v1", "--output", str(tmp_path / "o"),
            "--json", str(tmp_path / "s.json"))
    res = invoke(*args)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["success_rate"] == 1.0 and set(summary["per_family"]) == {"click-test", "focus-text"}
    assert {"episodes", "mean_steps", "invalid_rate", "mean_reward", "mean_decayed_reward"} <= set(summary)
    assert "mean_decayed_reward" in res.output
    again = invoke(*args)
    assert again.exit_code == 0 and json.loads((tmp_path / "s.json").read_text())["new_turns"] == 0
    bad = invoke("--policy", "scripted", "--tasks", "click-nothing", "--output", str(tmp_path / "b"))
    assert bad.exit_code == 2 and "click-nothing" in bad.output


@pytest.mark.rl_env
@pytest.mark.slow
def test_tiny_model_runs_whole_miniwob_episodes_through_the_hf_backend(browser, tmp_path):
    pytest.importorskip("transformers")
    from core.cli import app
    from core.testing import tiny_qwen25vl_path

    res = CliRunner(env={"COLUMNS": "400"}).invoke(app, [
        "rollout", "--env", "miniwob", "--tasks", "click-button,enter-text", "--backend", "hf", "--model",
        str(tiny_qwen25vl_path()), "--device", "cpu", "--max-steps", "2", "--workers", "2", "--max-new-tokens", "24",
        "--max-pixels", str(256 * 28 * 28), "--output", str(tmp_path), "--gallery", "1"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["error"] is None and 1 <= r["n_steps"] <= 2 for r in rows)
    assert all(isinstance(s["model_text"], str) for r in rows for s in r["steps"])


@pytest.mark.rl_env
def test_verl_mobile_use_tool_acts_in_miniwob_by_its_env_switch(browser):
    """verl's mobile_use tool with ``env: miniwob`` (mobile_use_tool.yaml): the one episode loop in the browser,
    the task's own success as the reward, the browser closed on release."""
    import asyncio
    import sys
    from pathlib import Path

    pytest.importorskip("verl")
    from core.actions import to_mobile_use

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "verl" / "gui_agent"))
    import mobile_use_tool as mut

    tool = mut.MobileUseTool({"grid": "grid999", "env": "miniwob", "max_steps": 8})
    iid, _ = asyncio.run(tool.create(create_kwargs={"task_id": "login-user", "seed": 4}))
    session = tool.session(iid)
    assert session.episode.screen_size == (160, 210) and "username" in session.episode.instruction
    while not session.done:
        w, h = session.episode.screen_size
        args = mut.regrid_arguments(to_mobile_use(session.info["gold_action"], w, h), mut.CoordinateGrid("pixels"),
                                    tool.grid, (w, h))
        _, _, metrics = asyncio.run(tool.execute(iid, args))
        assert not metrics["invalid"] and not metrics["ignored"]
    assert asyncio.run(tool.calc_reward(iid)) == 1.0
    group = session.env.browser_pid()
    assert _alive_in_group(group)
    asyncio.run(tool.release(iid))
    assert not _alive_in_group(group)


def _alive_in_group(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``: the chromedriver and browser of one env."""
    import psutil

    alive = []
    for p in psutil.process_iter(["status"]):
        try:
            if os.getpgid(p.pid) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                alive.append(p.pid)
        except (ProcessLookupError, psutil.Error):
            pass
    return alive


def test_world_export_writes_miniwob_grounding_rows_that_data_convert_takes(browser, tmp_path):
    """``gui-agent world export --env miniwob``: real Chromium screenshots with the gold action and the DOM box of
    the element the task needs, in the unified parquet every converter reads; a task without a gold plan is
    skipped with its reason, never written."""
    import io

    from PIL import Image

    from core.cli import app
    from core.data.unified import iter_steps

    out = tmp_path / "mw.parquet"
    res = CliRunner().invoke(app, ["world", "export", "--env", "miniwob", "--tasks", "click-button,enter-text,click-color",
                                   "--n", "6", "--seed", "7", "--output", str(out)])
    assert res.exit_code == 0, res.output
    assert "skipped 2" in res.output and "click-color: no gold plan" in res.output
    steps = list(iter_steps(out))
    assert {s.extra["task"] for s in steps} == {"click-button", "enter-text"}
    assert {s.extra["seed"] for s in steps} == {7, 8}
    for s in steps:
        with Image.open(io.BytesIO(s.image)) as im:
            assert im.size == s.image_size == (160, 210)
        if s.action.type == "click":
            (x, y), (x1, y1, x2, y2) = s.action.point, s.bbox
            assert x1 <= x <= x2 and y1 <= y <= y2
    high = [s for s in steps if s.task_type == "high" and s.extra["task"] == "enter-text"]
    typed = [s for s in high if s.action.type == "type"]
    assert typed and all(f'"{s.action.text}"' in s.instruction for s in typed)  # the utterance's own target text
    grounding = [s for s in steps if s.task_type == "grounding" and s.extra["task"] == "click-button"]
    assert grounding and all(g.instruction.startswith("the ") for g in grounding)
    conv = CliRunner().invoke(app, ["data", "convert", "--from", "unified", "--to", "verl", "--input", str(out),
                                    "--output", str(tmp_path / "verl")])
    assert conv.exit_code == 0 and f"written {len(steps)}" in conv.output, conv.output


def test_the_task_timer_runs_while_the_model_thinks(env):
    """MiniWoB's own timer (``time_limit_s``): a correct click after the limit is a failure (-1), not a success."""
    env.time_limit_ms = 1000
    try:
        _, info = env.reset(seed=5, options={"task": "click-test"})
        time.sleep(1.5)
        _, reward, terminated, _, info = env.step(info["gold_action"])
    finally:
        env.time_limit_ms = None
    assert terminated and reward == -1.0 and not info["success"]
    _, info = env.reset(seed=5, options={"task": "click-test"})  # the task's own 10 s again
    time.sleep(1.5)
    _, reward, _, _, info = env.step(info["gold_action"])
    # decayed by the 1.5 s slept (and whatever a busy machine adds) of the task's 10 s
    assert reward == 1.0 and info["success"] and 0.0 < info["env_reward"] < 0.9


def test_same_seed_same_task_instance(env):
    """MiniWoB's seed fixes the instance (utterance, layout, pixels); gymnasium's own reset check passes. Its step
    determinism check cannot: ``elapsed`` and the decayed reward follow the wall clock."""
    from gymnasium.utils.env_checker import check_reset_seed_determinism

    first, info1 = env.reset(seed=11, options={"task": "click-checkboxes"})
    first = first.copy()
    again, info2 = env.reset(seed=11, options={"task": "click-checkboxes"})
    other, info3 = env.reset(seed=12, options={"task": "click-checkboxes"})
    assert (first == again).all() and info1["instruction"] == info2["instruction"]
    assert info1["widgets"] == info2["widgets"] and info1["instruction"] != info3["instruction"]
    check_reset_seed_determinism(env)
