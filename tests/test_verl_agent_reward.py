"""The GUI-agent recipe's reward: the strict answer format, per-turn parts on the tool's grid (gold scores the
maximum, each single perturbation lowers exactly its part) and the episode aggregation knob."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from core.actions import Action
from core.rewards.gui_agent import gui_agent_score, strict_format

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("gymnasium")
pytest.importorskip("verl")
sys.path.insert(0, str(ROOT / "verl" / "gui_agent"))

import gui_agent_reward as gar  # noqa: E402
import mobile_use_tool as mut  # noqa: E402

pytestmark = pytest.mark.rl_env

CALL = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 300]}}\n</tool_call>'
GOOD = f"Thought: the search icon opens search.\nAction: Click the search icon.\n{CALL}"


@pytest.mark.parametrize("text, ok", [
    (GOOD, True),
    (GOOD + "\n", True),
    (f"Thought: a\nsecond line of thought\nAction: b\n{CALL}", True),
    (f"Sure! Thought: a\nAction: b\n{CALL}", False),  # text before Thought
    (f"Action: b\nThought: a\n{CALL}", False),  # wrong order
    (f"Thought: a\n{CALL}", False),  # no Action line
    (f"Thought: \nAction: b\n{CALL}", False),  # empty thought
    (f"Thought: a\nAction: b\n{CALL}\n{CALL}", False),  # two calls
    (f"{GOOD}\nThanks!", False),  # trailing junk
    (f"Thought: a\nAction: b {CALL}", False),  # call not on its own line
    (CALL, False),
])
def test_strict_format(text: str, ok: bool) -> None:
    assert strict_format(text) is ok
    gt = {"action": "click", "gt_bbox": [450, 250, 550, 350]}
    assert gui_agent_score(text, gt, {"frame": "grid1000"})["format"] == float(ok)


def test_strict_format_is_linear_on_hostile_input() -> None:
    hostile = "Thought: " + "\nAction: " * 100_000 + "<tool_call>" * 10_000
    start = time.thread_time()  # CPU time of this thread: the work, not the wait for a busy machine's cores
    assert strict_format(hostile) is False
    assert time.thread_time() - start < 0.05


SCREEN = (1080, 2400)


def answer(args: dict, thought: str = "Thought: t\nAction: a\n") -> str:
    return thought + mut.tool_call_text(args)


@pytest.mark.parametrize("grid", ["grid999", "grid1000", "pixels"])
def test_gold_scores_the_maximum_and_each_perturbation_lowers_only_its_part(grid: str) -> None:
    g = mut.CoordinateGrid(grid)
    box = [100.0, 500.0, 300.0, 600.0]
    click = Action(type="click", point=(200.0, 550.0))
    centre = g.from_screen((200, 550), SCREEN)
    gold = gar.score_turn(answer({"action": "click", "coordinate": centre}), click, box, g, SCREEN).parts
    assert gold["overall"] == 1.0 and gold["accuracy"] == 1.0
    perturbed = {
        "coord": answer({"action": "click", "coordinate": g.from_screen((200, 700), SCREEN)}),
        "type": answer({"action": "long_press", "coordinate": centre}),
        "format": answer({"action": "click", "coordinate": centre}, thought=""),
    }
    for part, text in perturbed.items():
        parts = gar.score_turn(text, click, box, g, SCREEN).parts
        lowered = {k for k in ("type", "coord", "format") if parts[k] < gold[k]}
        expected = {"type", "coord"} if part == "type" else {part}  # a wrong type earns no coordinate credit
        assert lowered == expected, (part, parts)
        assert parts["overall"] < 1.0
    typed = Action(type="type", text="hello world")
    assert gar.score_turn(answer({"action": "type", "text": "hello world"}), typed, None, g, SCREEN).parts["text"] == 1
    half = gar.score_turn(answer({"action": "type", "text": "hello"}), typed, None, g, SCREEN).parts
    assert 0 < half["text"] < 1 and half["type"] == 1 and half["format"] == 1
    assert gar.score_turn(GOOD, None, None, g, SCREEN) == gar.TurnScore(dict.fromkeys(half, 0.0), gold=False)


def test_episode_aggregation_knob_and_logged_parts() -> None:
    t = [gar.TurnScore({**dict.fromkeys(gar.KEYS, 0.0), "overall": v}, gold=True) for v in (1.0, 0.5, 0.0)]
    mean, parts = gar.episode_reward(t, True)
    assert mean == pytest.approx(0.5 + 1.0) and parts["gui_agent/completion_bonus"] == 1.0
    last, _ = gar.episode_reward(t, False, aggregation="last")
    assert last == 0.0
    bonus, _ = gar.episode_reward(t, True, aggregation="last", completion_bonus=0.5)
    assert bonus == 0.5
    assert set(parts) >= {f"gui_agent/{k}" for k in gar.KEYS} | {"gui_agent/success", "gui_agent/turns"}
    with pytest.raises(ValueError, match="aggregation"):
        gar.episode_reward(t, True, aggregation="max")


SPRAY_GT = {"action": "click", "gt_bbox": [450, 250, 550, 350]}
SPRAYED = [  # the first call is right; a policy must not collect credit from it by adding more
    f"Thought: t\nAction: a\n{CALL}\n{CALL.replace('500, 300', '10, 10')}",
    f"Thought: t\nAction: a\n{CALL}\n" + CALL.replace('"mobile_use"', '"computer_use"'),
    f"Thought: t\nAction: a\n{CALL.replace('mobile_use', 'computer_use')}",
]


@pytest.mark.parametrize("text", SPRAYED)
def test_a_turn_without_exactly_one_mobile_use_call_earns_nothing(text: str) -> None:
    right = gui_agent_score(GOOD, SPRAY_GT, {"frame": "grid1000"})
    assert right["accuracy"] == 1.0 and right["overall"] == pytest.approx(1.0)
    sprayed = gui_agent_score(text, SPRAY_GT, {"frame": "grid1000"})
    assert sprayed == dict.fromkeys(sprayed, 0.0)
    turn = gar.score_turn(text, Action(type="click", point=(540.0, 720.0)), (486.0, 600.0, 594.0, 840.0),
                          mut.CoordinateGrid("grid1000"), SCREEN)
    assert turn.gold and turn.parts["accuracy"] == 0.0 and turn.parts["overall"] == 0.0


def test_gui_agent_score_command_gives_sprayed_calls_no_credit(tmp_path: Path) -> None:
    import json
    import subprocess

    rows = [{"completion": t, "ground_truth": json.dumps(SPRAY_GT), "extra_info": {"frame": "grid1000"}}
            for t in (GOOD, *SPRAYED)]
    src = tmp_path / "c.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "scored.jsonl"
    r = subprocess.run([sys.executable, "-m", "core", "score", "--reward", "gui_agent", "--input", str(src),
                        "--output", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    accuracy = [next(v for k, v in s.items() if k.endswith("accuracy")) for s in scored]
    assert accuracy == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("screen", [(0, 0), (1080, 0), (float("nan"), 2400), (-1, 2400), "1080x2400"])
def test_a_screen_without_size_is_a_named_ground_truth_error(screen) -> None:
    from core.rewards import RewardInputError

    gold = Action(type="click", point=(10.0, 10.0))
    with pytest.raises(RewardInputError, match="field 'screen_size': screen"):
        gar.score_turn("Thought: t\nAction: a\n<tool_call>{}</tool_call>", gold, None, mut.CoordinateGrid("grid999"),
                       screen)


@pytest.mark.parametrize("section, name", [
    ({"completion_bonus": float("nan")}, "gui_agent: completion_bonus: must be a finite number"),
    ({"completion_bonus": -1}, "gui_agent: completion_bonus: must be >= 0"),
    ({"max_turns": 2.9}, "gui_agent: max_turns: must be a whole number"),
    ({"max_screenshots": 0}, "gui_agent: max_screenshots: must be >= 1"),
])
def test_gui_agent_config_numbers_are_checked_at_config_load(section, name) -> None:
    import gui_agent_loop

    with pytest.raises(ValueError, match=name):
        gui_agent_loop.GUIAgentConfig.from_mapping(section)
    with pytest.raises(ValueError, match="completion_bonus"):
        gar.episode_reward([], True, completion_bonus=float("nan"))
