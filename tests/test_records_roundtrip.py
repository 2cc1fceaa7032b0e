"""Every exporter x every reward that reads it x every template: a row's own gold answer (rendered by the
row's template) scores the maximum; the same answer moved outside the box, with the wrong type or the wrong text,
scores less.  ``gui-agent eval`` (strict) on predictions equal to the gold scores 100%, perturbed lower.

Screenshots are real (the AitZ and GUIOdyssey screens from ``../shared/data``); each step is given every action
a template can express, so every template exports rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from core.actions import Action
from core.data.export import EXPORTERS, ExportOptions
from core.data.summary import ConversionSummary
from core.eval.metrics import evaluate
from core.geometry import Frame, ImageGeometry
from core.inference.runner import gold_columns
from core.prompts import TEMPLATES, get_template
from core.records import GoldRecord, from_prediction_row, from_reward_inputs
from core.rewards import score
from core.rewards.registry import REWARDS
from core.schema import Step

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
pytestmark = pytest.mark.skipif(not DATA.exists(), reason=f"shared data folder {DATA} is absent")

#: The rewards checked: one of each family that reads a template's answers (RewardSpec.reads).
CHECKED_REWARDS = ("r1gui", "gui_agent", "aitw", "aitw_strict")


def rewards_for(template: str) -> list[str]:
    """The checked rewards that score ``template``'s answers, as the reward registry says."""
    return [r for r in CHECKED_REWARDS if REWARDS[r].reads(TEMPLATES[template])]


TRAINED_TEMPLATES = [n for n in TEMPLATES if rewards_for(n)]
#: Templates of the mobile agent recipe (its reward, gui_agent, reads them), the mobile_use export's targets.
AGENT_TEMPLATES = [n for n, t in TEMPLATES.items() if REWARDS["gui_agent"].reads(t)]


def _screens() -> list[tuple[bytes, tuple[int, int]]]:
    from PIL import Image

    out = []
    for path in [*sorted((DATA / "aitz").rglob("*.png"))[:1], *sorted((DATA / "guiodyssey").rglob("*.png"))[:1]]:
        with Image.open(path) as im:
            out.append((path.read_bytes(), im.size))
    assert out, "no screenshots found under ../shared/data"
    return out


def _actions(w: int, h: int) -> list[tuple[Action, tuple[float, float, float, float] | None]]:
    box = (0.30 * w, 0.40 * h, 0.50 * w, 0.46 * h)
    centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    text_actions = [Action(type=t, text=v) for t, v in (("type", "shanghai shopping mall"), ("select", "large"),
                                                         ("open_app", "Settings"), ("hotkey", "ctrl+s"),
                                                         ("answer", "42 degrees"))]
    return [
        (Action(type="click", point=centre), box),
        (Action(type="click", point=(0.7 * w, 0.2 * h)), None),  # a point target only
        (Action(type="long_press", point=centre), box),
        (Action(type="doubleclick", point=centre), box),
        (Action(type="scroll", direction="down"), None),
        *[(a, None) for a in text_actions],
        *[(Action(type=t), None) for t in ("press_back", "press_home", "press_enter", "complete", "impossible",
                                           "wait")],
    ]


@pytest.fixture(scope="module")
def steps() -> list[Step]:
    out = []
    for i, (data, (w, h)) in enumerate(_screens()):
        for j, (action, box) in enumerate(_actions(w, h)):
            out.append(Step.build(f"s{i}-{j}", id=f"s{i}-{j}", image=data, image_size=(w, h), task_type="high",
                                  instruction="do the thing", action=action, bbox=box, source="test",
                                  group="mobile", ui_type="text", history_text="None"))
    return out


def _perturbed(step: Step) -> list[tuple[str, Step]]:
    """Copies of ``step`` whose gold answer is wrong: moved outside the box, another type, other text."""
    w, h = step.image_size
    a = step.action
    out = [("wrong type", step.model_copy(update={"action": Action(type="press_back" if a.type != "press_back"
                                                                     else "press_home")}))]
    if a.point is not None:
        far = (0.95 * w, 0.95 * h)
        out.append(("outside the box", step.model_copy(update={"action": a.model_copy(update={"point": far})})))
    if a.type == "scroll":
        out.append(("other direction", step.model_copy(update={"action": a.model_copy(update={"direction": "up"})})))
    elif a.text:
        out.append(("other text", step.model_copy(update={"action": a.model_copy(update={"text": "zebra piano"})})))
    return out


def _export(target: str, steps: list[Step], out: Path, template: str) -> tuple[list[dict], ConversionSummary]:
    summary = ConversionSummary()
    path = EXPORTERS[target](iter(steps), out, options=ExportOptions(name="rt", template=template), summary=summary)
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist(), summary
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()], summary


def _reward_inputs(target: str, row: dict) -> tuple[object, dict, str, str]:
    """(ground_truth, extra_info, step id, gold answer text) of one exported row, as the trainers pass them."""
    if target == "verl":
        info = row["extra_info"]
        return row["reward_model"]["ground_truth"], info, info["id"], info["answer"]
    if target == "mobile_use":
        info = row["extra_info"]
        return row["ground_truth"], info, info["step_ids"][0], info["answer"]
    return row["ground_truth"], row["extra_info"], row["id"], row["solution"]


def _check_rows(target: str, template: str, rows: list[dict], steps: list[Step]) -> int:
    by_id = {s.id: s for s in steps}
    tmpl = get_template(template)
    checked = 0
    for row in rows:
        gt, extra, sid, answer = _reward_inputs(target, row)
        step = by_id[sid]
        gold = from_reward_inputs(gt, extra)
        assert not gold.frame_inferred and gold.frame is tmpl.frame, (target, template, sid)
        geometry = tmpl.geometry(step)
        for reward in rewards_for(template):
            if reward == "aitw_strict" and gold.box is None and gold.point is not None:
                continue  # "identical point": answers write integers, the gold point is fractional after resizing
            best = score(reward, answer, gt, extra)
            assert best["overall"] == pytest.approx(1.0) and best["accuracy"] == 1.0, (target, template, sid, reward,
                                                                                        best)
            for what, bad in _perturbed(step):
                try:
                    wrong = tmpl.gold_answer(bad, geometry)
                except ValueError:  # the template cannot express the perturbed action
                    continue
                got = score(reward, wrong, gt, extra)
                assert got["overall"] < best["overall"] and got["accuracy"] == 0.0, (target, template, sid, reward,
                                                                                     what, got)
        checked += 1
    return checked


@pytest.mark.parametrize("template", TRAINED_TEMPLATES)
def test_every_exporter_row_scores_its_own_gold_answer_highest(tmp_path, steps, template):
    targets = ["verl", "swift", "vlmr1"] + (["mobile_use"] if template in AGENT_TEMPLATES else [])
    for target in targets:
        rows, summary = _export(target, steps, tmp_path / target, template)
        assert rows and summary.written == len(rows), (target, template, dict(summary.skipped))
        assert _check_rows(target, template, rows, steps) == len(rows)


def test_which_rewards_read_which_template():
    """GUI-R1 templates: r1gui and aitw; the mobile agent: gui_agent and aitw; GUI-Owl-1.5's computer_use grounding
    answers: aitw only (gui_agent scores one mobile_use call, the only tool its agent loop executes)."""
    assert rewards_for("guir1-high") == ["r1gui", "aitw", "aitw_strict"]
    assert rewards_for("qwen3vl-mobile-use") == ["gui_agent", "aitw", "aitw_strict"]
    assert rewards_for("qwen3vl-mobile-agent") == []  # the cookbook's 999 grid: an evaluation prompt only
    for name in ("guiowl15-grounding", "guiowl15-grounding-refusal"):
        assert rewards_for(name) == ["aitw", "aitw_strict"]
        answer = get_template(name).gold_answer(*_click_step())
        assert score("gui_agent", answer, {"action": "click", "gt_bbox": [0.1, 0.1, 0.9, 0.9]},
                     {"frame": "normalized"})["overall"] == 0.0
    assert "guiowl15-grounding" in TRAINED_TEMPLATES and "guiowl15-grounding" not in AGENT_TEMPLATES


def _click_step() -> tuple[Step, ImageGeometry]:
    step = Step.build("c", id="c", image=b"", image_size=(1000, 800), task_type="low", instruction="i",
                      action=Action(type="click", point=(500.0, 400.0)), bbox=(400.0, 300.0, 600.0, 500.0))
    return step, get_template("guiowl15-grounding").geometry(step)


def test_mobile_use_ground_truth_flavours_read_as_the_core_action(tmp_path, steps):
    """The dense reward scores the mobile_use export's own terminate/system_button/type/click ground truth."""
    rows, _ = _export("mobile_use", steps, tmp_path, "qwen3vl-mobile-use")
    kinds = {json.loads(r["ground_truth"])["action"] for r in rows}
    assert {"click", "terminate", "system_button", "type"} <= kinds
    for r in rows:
        gold = from_reward_inputs(r["ground_truth"], r["extra_info"])
        assert gold.frame is Frame.GRID1000
        raw = json.loads(r["ground_truth"])
        if raw["action"] == "terminate":
            assert gold.action in ("complete", "impossible") and gold.status == raw["status"]
        if raw["action"] == "system_button":
            assert gold.action.startswith("press_") and gold.button == raw["button"]


def _prediction_rows(steps: list[Step], template: str, perturb: bool) -> list[dict]:
    """Prediction-file rows whose raw model text is the template's gold answer (or a perturbed one)."""
    tmpl = get_template(template)
    rows = []
    for step in steps:
        if step.action.type not in tmpl.actions:
            continue
        geometry = tmpl.geometry(step)
        wrong = next(t for t in ("press_back", "wait", "complete") if t in tmpl.actions and t != step.action.type)
        shown = step.model_copy(update={"action": Action(type=wrong)}) if perturb else step
        rows.append({"id": step.id, **gold_columns(step), "group": step.group, "ui_type": step.ui_type,
                     "pred": tmpl.gold_answer(shown, geometry),
                     "resize": {"frame": tmpl.frame.value,
                                "resized_size": [geometry.resized_width, geometry.resized_height]}})
    return rows


@pytest.mark.parametrize("template", ["guir1-inference-guiodyssey", "qwen3vl-mobile-use", "gui-desktop"])
def test_eval_on_gold_predictions_is_100_percent_and_perturbed_lower(tmp_path, steps, template):
    for perturb in (False, True):
        path = tmp_path / f"{perturb}.jsonl"
        rows = _prediction_rows(steps, template, perturb)
        for row in rows:  # the prediction file's gold reads back as the step's record
            assert from_prediction_row(row).frame is Frame.ORIGINAL
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        m = evaluate(path, "guiodyssey", "strict").metrics
        if perturb:
            assert m["sr"] < 1.0 and m["type"] < 1.0
        else:
            assert (m["type"], m["sr"]) == (1.0, 1.0) and m["gr"] in (1.0, None), m


def test_record_writers_and_readers_agree_in_every_frame():
    geometry = ImageGeometry.for_model(1080, 2400, factor=28, min_pixels=3136, max_pixels=1258291)
    step = Step.build("r", id="r", image=b"", image_size=(1080, 2400), task_type="low", instruction="i",
                      action=Action(type="click", point=(540.0, 1200.0)), bbox=(500.0, 1100.0, 600.0, 1300.0))
    from core.records import from_step

    for frame in Frame:
        rec = from_step(step, geometry, frame)
        back = from_reward_inputs(json.dumps(rec.to_guir1()), rec.to_extra_info())
        assert back.frame is frame and not back.frame_inferred
        # 4 decimals: 1e-4 of the screen in the normalized frame, well under a pixel
        assert back.in_frame(Frame.ORIGINAL).box == pytest.approx((500.0, 1100.0, 600.0, 1300.0), abs=0.25)
        cols = rec.to_reward_columns()
        assert from_reward_inputs(cols["ground_truth"], cols).box == pytest.approx(rec.box, abs=1e-3)
    pred_row = from_step(step, geometry, Frame.RESIZED).to_prediction_columns()
    assert pred_row["gt_frame"] == "original" and pred_row["gt_bbox"] == [500.0, 1100.0, 600.0, 1300.0]
    legacy = from_reward_inputs({"action": "click", "gt_bbox": [0.1, 0.2, 0.3, 0.4], "input_text": "no input text"})
    assert legacy.frame is Frame.NORMALIZED and legacy.frame_inferred
    assert isinstance(legacy, GoldRecord) and legacy.text is None
