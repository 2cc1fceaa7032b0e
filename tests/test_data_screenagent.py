"""``--from screenagent`` reads both published ScreenAgent layouts, and hostile step files fail by name.

The test layout (niuzaisheng/ScreenAgent ``data/ScreenAgent/test/<session>/<timestamp>.json`` beside
``<timestamp>_neg_eval.json``: ``task_prompt``, ``send_prompt``, ``LLM_response_editer``, ``current_task``,
``status``, ``actions`` as a Python repr string, no ``_en`` / ``_zh`` fields) is rebuilt here from the real train
sessions in ``../shared/data/screenagent`` (only the train layout ships there), field by field, so both
layouts carry the same real actions and screenshots and must read to the same steps.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.data.cli import run_convert
from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.schema import StepValidationError

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "screenagent"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data folder {DATA} is absent")
#: The fields of a published test-split step file (niuzaisheng/ScreenAgent @ 2ebe97d, data/ScreenAgent/test).
TEST_FIELDS = ("task_prompt", "send_prompt", "status", "LLM_response", "LLM_response_editer", "video_height",
               "video_width", "saved_image_name", "current_task", "actions")


def read(path: Path, **kw) -> tuple[list, ConversionSummary]:
    summary = ConversionSummary()
    return list(READERS["screenagent"](path, summary=summary, **kw)), summary


def as_test_layout(train: Path, out: Path) -> Path:
    """Rewrite the train sessions under ``train`` in the test split's layout under ``out``."""
    for src in sorted(train.glob("*/*_translate*.json")):
        rec = json.loads(src.read_text(encoding="utf-8"))
        test = {k: rec[k] for k in TEST_FIELDS if k in rec}
        test["task_prompt"] = rec["task_prompt_en"]  # the test split's prompts are English, in the plain field
        test["status"] = "acting"
        test["actions"] = repr(rec["actions"])  # a Python repr string (single quotes), as the test split stores it
        stem = src.stem.replace("_translate_neg_plan", "_neg_eval").replace("_translate", "")
        session = out / src.parent.name
        if not session.exists():
            shutil.copytree(src.parent / "images", session / "images")
        (session / f"{stem}.json").write_text(json.dumps(test, ensure_ascii=False), encoding="utf-8")
    return out


def _key(step) -> tuple:
    return step.id.replace("_translate", ""), step.action, step.instruction, step.image, step.history


def test_test_layout_reads_to_the_same_steps_as_the_train_layout(tmp_path):
    train_steps, train_summary = read(DATA)
    test_root = as_test_layout(DATA, tmp_path / "test")
    assert not list(test_root.rglob("*_translate*")) and list(test_root.rglob("*_neg_eval.json"))
    test_steps, test_summary = read(test_root)
    assert len(test_steps) == len(train_steps) == 33
    assert [_key(s) for s in test_steps] == [_key(s) for s in train_steps]
    assert test_summary.read == train_summary.read
    assert test_summary.skipped == train_summary.skipped == {"negative sample": 21, "plan action": 12,
                                                             "evaluate action": 30}
    click = next(s for s in test_steps if s.id == "session1/2023-12-18_00-06-05-511489#0")
    assert click.action.type == "click" and click.action.point == (10.0, 760.0)
    assert click.instruction == "Open File Explorer" and click.extra["task_prompt_zh"] is None


def test_translated_twin_is_read_once_and_wins(tmp_path):
    session = tmp_path / "session1"
    shutil.copytree(DATA / "session1", session)
    as_test_layout(tmp_path, tmp_path / "plain")  # writes <ts>.json beside each <ts>_translate.json
    for f in (tmp_path / "plain" / "session1").glob("*.json"):
        if "_neg_" not in f.name:
            shutil.copy(f, session / f.name)
    steps, summary = read(session)
    assert [s.id for s in steps] == [s.id for s in read(DATA / "session1")[0]]
    assert all("_translate" in s.id for s in steps) and summary.read == 6


def test_clickable_area_is_the_gold_box(tmp_path):
    """A mouse action of the test split with its ``clickable_area`` (values of the published
    ``08a2def9.../2024-01-13_21-37-47-367890.json``) on a real 1024x768 screenshot."""
    session = tmp_path / "08a2def941d942ffb542ba0ba3d8aa99"
    shot = DATA / "session1" / "images" / "2023-12-18_00-06-05-511489.jpg"
    (session / "images").mkdir(parents=True)
    shutil.copy(shot, session / "images" / "2024-01-13_21-37-47-367890.jpg")
    act = {"action_type": "MouseAction", "mouse_action_type": "click", "mouse_button": "left",
           "mouse_position": {"width": 543, "height": 133},
           "clickable_area": {"upper_left_position": {"width": 530, "height": 121},
                              "lower_right_position": {"width": 976, "height": 145}}}
    rec = {"task_prompt": "Find the wrong line of code and fix it", "status": "acting", "video_height": 768,
           "video_width": 1024, "saved_image_name": "2024-01-13_21-37-47-367890.jpg",
           "current_task": "Locate line 2 in the Python script as indicated by the error message.",
           "actions": repr([act])}
    (session / "2024-01-13_21-37-47-367890.json").write_text(json.dumps(rec))
    (step,), _ = read(session)
    assert step.bbox == (530.0, 121.0, 976.0, 145.0) and step.action.point == (543.0, 133.0)
    assert step.extra["current_task"].startswith("Locate line 2")


def _one_error(session: Path, rec: dict, **kw) -> tuple[StepValidationError | None, ConversionSummary]:
    shutil.copytree(DATA / "session1" / "images", session / "images", dirs_exist_ok=True)
    (session / "2023-12-18_00-06-05-511489.json").write_text(json.dumps(rec) if isinstance(rec, dict) else rec)
    try:
        _, summary = read(session, **kw)
    except StepValidationError as e:
        return e, ConversionSummary()
    return None, summary


@pytest.mark.parametrize("actions, reason", [
    ("__import__('os').system('touch PWNED')", "not a Python/JSON literal"),
    ("[{'action_type': 'MouseAction'} for _ in range(9)]", "not a Python/JSON literal"),
    ("['click']", "expected a list of action objects"),
    ("{'action_type': 'MouseAction'}", "expected a list of action objects"),
])
def test_actions_string_is_parsed_as_a_literal_never_run(tmp_path, monkeypatch, actions, reason):
    monkeypatch.chdir(tmp_path)
    err, _ = _one_error(tmp_path / "s", {"task_prompt": "x", "saved_image_name": "2023-12-18_00-06-05-511489.jpg",
                                         "actions": actions})
    assert err is not None and err.field == "actions" and reason in str(err)
    assert err.record == "s/2023-12-18_00-06-05-511489"
    assert not (tmp_path / "PWNED").exists()


def test_deeply_nested_step_file_is_a_named_row_error(tmp_path):
    """Issue 12: a 100k-deep ``solution`` used to raise RecursionError out of the reader."""
    deep = '{"task_prompt": "x", "actions": [], "solution": ' + "[" * 100_000 + "]" * 100_000 + "}"
    err, _ = _one_error(tmp_path / "s", deep)
    assert err is not None and err.field == "record" and "nested too deeply" in str(err)
    assert err.record == "s/2023-12-18_00-06-05-511489"

    shutil.copy(DATA / "session1" / "2023-12-18_00-09-06-245371_translate.json", tmp_path / "s")
    err, summary = _one_error(tmp_path / "s", deep, skip_missing=True)  # the good step survives, the bad is counted
    assert err is None and summary.skipped == {"invalid record": 1} and summary.read == 2
    assert summary.examples["invalid record"] == ["s/2023-12-18_00-06-05-511489"]


def test_convert_cli_reports_the_named_skips(tmp_path):
    test_root = as_test_layout(DATA, tmp_path / "test")
    _, summary = run_convert("screenagent", "unified", test_root, tmp_path / "out")
    assert summary.written == 33 and summary.skipped == {"negative sample": 21, "plan action": 12,
                                                         "evaluate action": 30}
