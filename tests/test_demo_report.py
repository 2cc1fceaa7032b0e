"""The demo report's helpers (experiments/demo/report.py, curriculum.py) on hand-made inputs: Markdown escaping,
point formatting, the in-words diagnosis of a stage, bootstrap intervals and paired gains."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo"


def _load(name: str):
    sys.path.insert(0, str(DEMO))
    try:
        spec = importlib.util.spec_from_file_location(f"demo_{name}", DEMO / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(DEMO))


report = _load("report")
curriculum = _load("curriculum")


def test_report_writes_untrusted_text_through_core_markdown() -> None:
    """The demo report has no Markdown escaping of its own: the failures table goes through core.markdown (the one
    owner), so a hostile id, instruction, box or answer cannot add cells or rows, end a code span or inject HTML."""
    import core.markdown

    assert not hasattr(report, "md_cell") and report.md_text is core.markdown.md_text
    assert report.md_code is core.markdown.md_code
    hostile = "a | b\nc `x` <img src=x onerror=alert(1)>"
    row = f"| {report.md_text(hostile)} | {report.md_code(hostile)} | {report.md_text([1, '|'])} |"
    assert len(re.findall(r"(?<!\\)\|", row)) == 4 and "\n" not in row  # 3 cells, one line
    assert "\\<img" in report.md_text(hostile)  # escaped; inside the code span HTML is not read (CommonMark 6.1)


@pytest.mark.parametrize(("point", "text"), [
    ([-100.0, -100.0], "no point"), (None, "no point"), ([], "no point"),
    ([12.345, 7.0], "[12.3, 7]"), ([1.25, 2.0, 30.0, 40.55], "[1.2, 2, 30, 40.5]")])
def test_fmt_point(point, text) -> None:
    assert report.fmt_point(point) == text


def test_diagnosis_names_a_collapsed_policy() -> None:
    same = [{"parse_ok": True, "pred_action": "click", "pred_coord": [10.0, 10.0]} for _ in range(5)]
    words = report.diagnosis(same, [0.0] * 5)
    assert "the same action 'click' on every screen" in words
    assert "the same point [10, 10] on every click" in words and "0 of 5 answers right" in words
    broken = [{"parse_ok": False, "parse_error": "no <answer> tag"}] * 3
    assert report.diagnosis(broken) == "no answer parsed as an action (most common: no <answer> tag)"
    mixed = same[:2] + [{"parse_ok": True, "pred_action": "scroll", "pred_coord": None},
                        {"parse_ok": False, "parse_error": "x"}]
    words = report.diagnosis(mixed)
    assert "1 of 4 answers did not parse" in words and "actions click 2, scroll 1" in words
    words = report.diagnosis(same + [{"parse_ok": False, "parse_error": "x"}])
    assert "the same action 'click' in every parsed answer" in words


def test_interval_and_paired_gain() -> None:
    x = [1.0] * 60 + [0.0] * 40
    lo, hi = curriculum.interval(x)
    assert lo < 0.6 < hi and 0.45 < lo and hi < 0.75
    assert curriculum.interval([0.0] * 10) == [0.0, 0.0]
    # Paired: the same 30 screens flip from wrong to right, the rest unchanged -> +0.3 with an interval above 0.
    before = [0.0] * 50 + [1.0] * 50
    after = [1.0] * 30 + [0.0] * 20 + [1.0] * 50
    g = curriculum.paired_gain(after, before)
    assert g["mean"] == pytest.approx(0.3) and 0.15 < g["ci95"][0] < 0.3 < g["ci95"][1]
    # A permutation of the same answers: no gain, the interval spans 0.
    g0 = curriculum.paired_gain(before[::-1], before)
    assert g0["mean"] == 0.0 and g0["ci95"][0] < 0 < g0["ci95"][1]
    with pytest.raises(ValueError, match="same screens"):
        curriculum.paired_gain([1.0], [1.0, 0.0])


def test_family_of_a_world_export_id() -> None:
    assert curriculum.family_of("sim_phone/tap_tile_2x2-3000001/0/high") == "tap_tile_2x2"
    assert curriculum.family_of("sim_phone/go_back-3000000/1/high") == "go_back"
