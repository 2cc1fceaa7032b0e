"""The episode loop (core.rollout) against a small env that follows the shared env contract: prompts, parsing in
both answer formats through the frames, invalid answers, env failures, resume, workers, the CLI summary.
The simulated phone and the tiny model are exercised in tests/test_rollout_sim_phone.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from core.actions import Action
from core.geometry import Frame
from core.inference.requests import IMAGE_PLACEHOLDER, ResizePolicy
from core.parsers import parse_action
from core.prompts import get_template
from core.rollout.envs import ENVS, EnvEntry
from core.rollout.policies import CentrePolicy, RandomPolicy, Reply, ScriptedPolicy
from core.rollout.runner import episode_specs, run_episode, run_rollouts
from core.rollout.session import EpisodeSession

FORMATS = {"guir1-high": "<answer>", "qwen3vl-mobile-use": "<tool_call>"}


class ButtonsEnv:
    """Three coloured buttons on a 270x480 screen; a task is a sequence of buttons to tap. A tap on the next
    button advances, a tap on another button starts over, a tap on nothing is ignored; ``complete`` ends the
    episode (success only when the sequence is done, which also ends it with reward 1)."""

    W, H = 270, 480
    BUTTONS = {"red": (20, 40, 120, 100), "green": (150, 40, 250, 100), "blue": (20, 300, 250, 380)}
    COLOURS = {"red": (220, 30, 30), "green": (30, 200, 30), "blue": (30, 30, 220)}
    TASKS = {"red-blue": ["red", "blue"], "green": ["green"], "blue-green-red": ["blue", "green", "red"],
             "red-green": ["red", "green"]}

    def __init__(self, crash_on_step: int | None = None):
        self.crash_on_step, self.resets, self.steps_taken = crash_on_step, 0, 0

    def reset(self, seed=None, options=None):
        self.task = options["task"]
        if self.task not in self.TASKS:
            raise ValueError(f"unknown task {self.task!r}")
        self.seq, self.k, self.step_no, self.resets = self.TASKS[self.task], 0, 0, self.resets + 1
        self.max_steps = options.get("max_steps", 20)
        return self._obs(), self._info(None)

    def _obs(self) -> np.ndarray:
        img = np.full((self.H, self.W, 3), 245, np.uint8)
        for name, (x1, y1, x2, y2) in self.BUTTONS.items():
            img[y1:y2, x1:x2] = self.COLOURS[name]
        img[self.H - 10:, : 30 * self.k] = 0  # progress bar
        return img

    def _info(self, ignored: str | None) -> dict:
        done = self.k == len(self.seq)
        nxt = None if done else self.seq[self.k]
        box = None if nxt is None else list(self.BUTTONS[nxt])
        gold = None if box is None else Action(type="click", point=((box[0] + box[2]) / 2, (box[1] + box[3]) / 2))
        return {"task_id": self.task, "family": "taps" if len(self.seq) > 1 else "single", "app": "buttons",
                "instruction": "Tap " + ", then ".join(self.seq),
                "step_instruction": None if nxt is None else f"Tap {nxt}", "screen_size": (self.W, self.H),
                "widgets": [{"id": n, "role": "button", "text": n, "box": list(b), "enabled": True}
                            for n, b in self.BUTTONS.items()],
                "success": done, "gold_action": gold, "gold_box": box, "ignored": ignored, "step": self.step_no}

    def step(self, action):
        if not isinstance(action, Action):
            raise ValueError(f"not an Action: {action!r}")
        if action.type == "hotkey":
            raise ValueError("the phone has no keyboard shortcuts")
        self.steps_taken += 1
        self.step_no += 1
        if self.crash_on_step is not None and self.step_no >= self.crash_on_step:
            raise RuntimeError("the phone crashed")
        ignored, terminated = None, False
        if action.type == "click":
            hit = next((n for n, (x1, y1, x2, y2) in self.BUTTONS.items()
                        if x1 <= action.point[0] <= x2 and y1 <= action.point[1] <= y2), None)
            if hit is None:
                ignored = "tap on nothing"
            else:
                self.k = self.k + 1 if hit == self.seq[self.k] else 0
        elif action.type in ("complete", "impossible"):
            terminated = True
        else:
            ignored = f"{action.type} does nothing here"
        reward = 1.0 if self.k == len(self.seq) and not terminated else 0.0
        terminated = terminated or self.k == len(self.seq)
        truncated = not terminated and self.step_no >= self.max_steps
        return self._obs(), reward, terminated, truncated, self._info(ignored)

    def close(self):
        pass


class TextPolicy:
    """Always answers ``text``."""

    name = "text"

    def __init__(self, text: str):
        self.text = text

    def __call__(self, sessions):
        return [Reply(self.text) for _ in sessions]


TASKS = list(ButtonsEnv.TASKS)


@pytest.mark.parametrize("template", list(FORMATS))
def test_scripted_gold_text_completes_every_task_through_parser_frames_and_env(template, tmp_path):
    summary = run_rollouts(ButtonsEnv, episode_specs(TASKS), ScriptedPolicy(), tmp_path, progress=False,
                           session_options={"template": template})
    assert summary["success_rate"] == 1.0 and summary["episodes"] == len(TASKS)
    assert summary["invalid_rate"] == 0.0 and summary["ignored_rate"] == 0.0
    assert summary["mean_steps"] == pytest.approx(sum(len(s) for s in ButtonsEnv.TASKS.values()) / len(TASKS))
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    for row in rows:
        for s in row["steps"]:
            assert FORMATS[template] in s["model_text"]
            x, y = s["action"]["point"]
            x1, y1, x2, y2 = s["gold_box"]
            assert x1 <= x <= x2 and y1 <= y <= y2


def test_answers_are_written_in_the_template_frame_and_mapped_back_to_screen_pixels():
    # 270x480 resizes to 280x476 at factor 28; the tool call uses the 0-1000 grid: none of them is screen pixels
    for template, frame in (("guir1-high", Frame.RESIZED), ("qwen3vl-mobile-use", Frame.GRID1000)):
        session = EpisodeSession(ButtonsEnv(), "green", template=template,
                                 resize=ResizePolicy(factor=get_template(template).factor))
        text = session.gold_text()
        raw = parse_action(text).action.point
        gold = session.info["gold_action"].point
        assert raw == pytest.approx(session.geometry.point(gold, Frame.ORIGINAL, frame), abs=0.5)
        assert raw != pytest.approx(gold, abs=1)
        rec = session.act(text)
        assert rec.action.point == pytest.approx(gold, abs=2) and rec.success and session.done


def test_random_policy_rarely_completes_a_task(tmp_path):
    summary = run_rollouts(ButtonsEnv, episode_specs(TASKS, 40), RandomPolicy(seed=3), tmp_path, progress=False,
                           gallery=0)
    assert summary["episodes"] == 40
    assert summary["success_rate"] <= 0.15
    assert summary["ignored_rate"] > 0.3  # random taps mostly hit nothing


def test_centre_policy_taps_the_screen_centre_every_turn():
    episode = run_episode(EpisodeSession(ButtonsEnv(), "green", max_steps=4), CentrePolicy())
    assert [s.action for s in episode.steps] == [Action(type="click", point=(135.0, 240.0))] * 4
    assert [s.ignored for s in episode.steps] == ["tap on nothing"] * 4 and episode.truncated


def test_unparseable_answers_are_invalid_steps_and_never_reach_the_env():
    env = ButtonsEnv()
    session = EpisodeSession(env, "red-blue", max_steps=3)
    episode = run_episode(session, TextPolicy("I think I should tap the red button"))
    assert [s.invalid for s in episode.steps] == ["unparsed answer: no <answer> tag"] * 3
    assert env.steps_taken == 0 and episode.truncated and not episode.terminated and not episode.success
    with pytest.raises(RuntimeError, match="is over"):
        session.act("<answer>[{'action': 'complete'}]</answer>")


def test_an_action_the_env_rejects_is_invalid_and_the_episode_goes_on():
    env = ButtonsEnv()
    session = EpisodeSession(env, "green")
    rec = session.act("<think></think><answer>[{'action': 'hotkey', 'point': [-100, -100], "
                      "'input_text': 'ctrl+c'}]</answer>")
    assert rec.action is None and rec.invalid.startswith("env rejected the action: the phone has no keyboard")
    assert not session.done and session.history == []
    session.act(session.gold_text())
    assert session.episode.success and session.episode.invalid_steps == 1


def test_single_screenshot_prompt_is_the_templates_training_prompt_with_history():
    session = EpisodeSession(ButtonsEnv(), "red-blue")
    session.act(session.gold_text())
    msgs = session.messages()
    assert msgs == get_template("guir1-high").render(session.prompt_step(), session.geometry)
    assert "Step 1: Click the target element" in msgs[0]["content"]
    (img,) = session.images()
    assert img.size == (session.geometry.resized_width, session.geometry.resized_height) == (280, 476)


def test_screenshot_cap_keeps_the_last_turns_as_chat_and_older_ones_as_history():
    session = EpisodeSession(ButtonsEnv(), "blue-green-red", max_screenshots=2)
    first = session.gold_text()
    session.act(first)
    session.act("not an action")
    msgs, images = session.messages(), session.images()
    assert sum(m["content"].count(IMAGE_PLACEHOLDER) for m in msgs) == len(images) == 2
    # turn 1 left the window: it survives as rendered history; turn 2 (invalid) is a chat turn with its reason
    assert "Step 1: Click the target element" in msgs[0]["content"]
    assert msgs[-2] == {"role": "assistant", "content": "not an action"}
    assert "not executed: unparsed answer" in msgs[-1]["content"]
    # both screens are after the first tap (the invalid turn did not change it); the progress bar shows it
    assert all(np.asarray(im)[-1, 0].tolist() == [0, 0, 0] for im in images)
    req = session.request()  # what a core.inference backend is sent: the same window, images in order
    assert req.messages == msgs and req.images == images and req.image is images[-1]


def test_episode_specs_spread_a_partial_pass_over_the_task_list():
    tasks = [f"t{i}" for i in range(10)]
    assert [s.id for s in episode_specs(tasks, 5)] == ["t0", "t2", "t4", "t6", "t8"]
    specs = episode_specs(tasks, 13, seed=7)
    assert [s.id for s in specs[9:]] == ["t9", "t0#1", "t3#1", "t6#1"] and specs[-1].seed == 8
    with pytest.raises(ValueError, match="no tasks"):
        episode_specs([], 3)


def test_resume_skips_finished_episodes_and_cuts_a_torn_line(tmp_path):
    envs: list[ButtonsEnv] = []

    def make():
        envs.append(ButtonsEnv())
        return envs[-1]

    run_rollouts(make, episode_specs(TASKS, 2), ScriptedPolicy(), tmp_path, progress=False)
    path = tmp_path / "episodes.jsonl"
    with open(path, "a") as f:
        f.write('{"id": "blue-green-red", "trunc')  # killed mid-write
    summary = run_rollouts(make, episode_specs(TASKS, 6), ScriptedPolicy(), tmp_path, progress=False)
    ids = [json.loads(line)["id"] for line in path.read_text().splitlines()]
    assert ids == ["red-blue", "blue-green-red", "green", "red-green", "red-blue#1", "blue-green-red#1"]
    assert sum(e.resets for e in envs) == 6 and summary["episodes"] == 6 and summary["success_rate"] == 1.0


def test_an_env_crash_fails_that_episode_only(tmp_path):
    summary = run_rollouts(lambda: ButtonsEnv(crash_on_step=2), episode_specs(TASKS), ScriptedPolicy(), tmp_path,
                           progress=False)
    rows = {json.loads(line)["id"]: json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()}
    assert rows["green"]["success"] and rows["green"]["error"] is None
    assert rows["red-blue"]["error"] == "RuntimeError: the phone crashed" and not rows["red-blue"]["success"]
    assert summary["errors"] == 3 and summary["success_rate"] == 0.25


def test_an_env_that_cannot_reset_fails_that_episode_with_the_tasks_family(tmp_path):
    from types import SimpleNamespace

    class DeadBrowser(ButtonsEnv):
        def reset(self, seed=None, options=None):
            raise OSError("chromium died")

    task = SimpleNamespace(id="click-test", family="click", app="web")
    summary = run_rollouts(DeadBrowser, episode_specs([task]), ScriptedPolicy(), tmp_path, progress=False)
    row = json.loads((tmp_path / "episodes.jsonl").read_text())
    assert row["error"] == "OSError: chromium died" and row["family"] == "click" and row["n_steps"] == 0
    assert summary["errors"] == 1 and summary["per_family"]["click"]["success_rate"] == 0.0


def test_workers_give_the_same_episodes_as_one_worker(tmp_path):
    runs = []
    for w in (1, 3):
        run_rollouts(ButtonsEnv, episode_specs(TASKS, 12), RandomPolicy(seed=1), tmp_path / str(w), workers=w,
                     progress=False, gallery=0)
        rows = [json.loads(line) for line in (tmp_path / str(w) / "episodes.jsonl").read_text().splitlines()]
        runs.append(sorted(rows, key=lambda r: r["id"]))
    assert runs[0] == runs[1]


def test_gallery_draws_every_step_of_the_first_episodes(tmp_path):
    summary = run_rollouts(ButtonsEnv, episode_specs(TASKS), ScriptedPolicy(), tmp_path, progress=False, gallery=2)
    page = (tmp_path / "gallery" / "index.html").read_text()
    assert summary["gallery"].endswith("index.html")
    assert sorted(p.name for p in (tmp_path / "gallery" / "red-blue").iterdir()) == ["000.png", "001.png"]
    assert "red-blue" in page and "green" in page and "blue-green-red" not in page
    from PIL import Image

    with Image.open(tmp_path / "gallery" / "green" / "000.png") as im:  # red point drawn on the green button
        x, y = (ButtonsEnv.BUTTONS["green"][0] + ButtonsEnv.BUTTONS["green"][2]) / 2, 70
        s = im.width / ButtonsEnv.W
        assert im.convert("RGB").getpixel((round(x * s), round(y * s))) == (255, 0, 0)


def button_tasks(spec: str) -> list[str]:
    """``EnvEntry.tasks`` of the buttons env: the split ``all`` or comma-separated ids, unknown ones named."""
    if spec == "all":
        return TASKS
    ids = spec.split(",")
    unknown = [t for t in ids if t not in TASKS]
    if unknown:
        raise ValueError(f"unknown task(s) {unknown}")
    return ids


@pytest.fixture
def buttons_env(monkeypatch):
    monkeypatch.setitem(ENVS, "buttons", EnvEntry(make=ButtonsEnv, tasks=button_tasks, default_split="all",
                                                  splits=("all",)))


def invoke(*args: str):
    from core.cli import app

    return CliRunner(env={"COLUMNS": "400"}).invoke(app, ["rollout", *args])  # no wrapped error boxes


@pytest.mark.parametrize("policy", ["scripted", "random", "centre"])
def test_cli_prints_the_summary_and_writes_the_json(buttons_env, policy, tmp_path):
    res = invoke("--env", "buttons", "--policy", policy, "--episodes", "8", "--output", str(tmp_path / "out"),
                 "--json", str(tmp_path / "s.json"))
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert {"success_rate", "episodes", "mean_steps", "invalid_rate", "per_family"} <= set(summary)
    assert summary["episodes"] == 8 and set(summary["per_family"]) == {"taps", "single"}
    assert f"{policy} on buttons all: success rate {100 * summary['success_rate']:.1f}%" in res.output
    assert (summary["success_rate"] == 1.0) == (policy == "scripted")


def test_resuming_with_other_run_settings_is_refused(buttons_env, tmp_path):
    assert invoke("--env", "buttons", "--policy", "scripted", "--episodes", "2", "--output", str(tmp_path)).exit_code == 0
    res = invoke("--env", "buttons", "--policy", "random", "--output", str(tmp_path))
    assert res.exit_code == 2 and "policy 'scripted' -> 'random'" in res.output
    res = invoke("--env", "buttons", "--policy", "scripted", "--max-steps", "5", "--output", str(tmp_path))
    assert res.exit_code == 2 and "max_steps 20 -> 5" in res.output
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 2  # nothing written by the refused runs


def test_cli_rejects_bad_input_clearly(buttons_env, tmp_path):
    res = invoke("--env", "buttons", "--output", str(tmp_path))
    assert res.exit_code == 2 and "--policy model needs --backend and --model" in res.output
    res = invoke("--env", "nope", "--policy", "random", "--output", str(tmp_path))
    assert res.exit_code == 2 and "unknown env 'nope'" in res.output
    res = invoke("--env", "buttons", "--policy", "scripted", "--tasks", f"{TASKS[0]},{TASKS[1]},no-such-task",
                 "--output", str(tmp_path / "out"))
    assert res.exit_code == 2 and "unknown task(s) ['no-such-task']" in res.output
    assert not (tmp_path / "out").exists()  # validated before anything ran: the known tasks did not run either


@pytest.mark.parametrize("template", list(FORMATS))
@pytest.mark.parametrize(("gold", "executed"), [
    (Action(type="system_button", button="Back"), Action(type="press_back")),
    (Action(type="system_button", button="Home"), Action(type="press_home")),
    (Action(type="terminate", status="failure"), Action(type="impossible")),
    (Action(type="open_app", text="Clock"), Action(type="open_app", text="Clock")),
    (Action(type="scroll", direction="down"), Action(type="scroll", direction="down")),
    (Action(type="type", text="on my way"), Action(type="type", text="on my way")),
])
def test_gold_text_round_trips_every_phone_action_in_both_formats(template, gold, executed):
    session = EpisodeSession(ButtonsEnv(), "green", template=template)
    assert session.parse(session.gold_text(gold)) == (executed, None)


def test_low_level_prompts_carry_each_steps_instruction():
    session = EpisodeSession(ButtonsEnv(), "blue-green-red", level="low", max_screenshots=2)
    assert "command 'Tap blue'" in session.messages()[0]["content"]
    session.act(session.gold_text())
    session.act(session.gold_text())
    msgs = session.messages()  # the window starts at turn 2 ("Tap green"); the next step is "Tap red"
    assert "command 'Tap green'" in msgs[0]["content"] and "Step 1: Click" in msgs[0]["content"]
    assert msgs[-1]["content"] == "Next: Tap red\nCurrent screenshot: <image>"
    assert [r.instruction for r in session.episode.steps] == ["Tap blue", "Tap green"]
    wide = EpisodeSession(ButtonsEnv(), "blue-green-red", level="low", max_screenshots=3)
    wide.act(wide.gold_text())
    wide.act(wide.gold_text())
    asks = [m["content"] for m in wide.messages() if m["role"] == "user"]
    assert "command 'Tap blue'" in asks[0] and asks[1].startswith("Next: Tap green") and asks[2].startswith(
        "Next: Tap red")
