"""core.eval metrics: every rule of both modes, with hand-computed expectations, on rows built from real data
(ScreenSpot annotations, OS-Atlas AndroidControl / GUIOdyssey test samples, Mind2Web, AitZ)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.eval.io import PredictionFileError, Record, iter_records
from core.eval.metrics import evaluate, score_records
from core.eval.registry import BENCHMARKS, benchmark_for_file, get_benchmark
from core.geometry import xywh_to_xyxy

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SCREENSPOT = DATA / "screenspot" / "screenspot_v1_annotations.jsonl"
OSATLAS = DATA / "osatlas_eval"
#: AndroidControl screenshots are 1080 x 2400; the OS-Atlas samples give points on a 0-1000 grid.
AC_SIZE = (1080, 2400)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def recs(rows: list[dict]) -> list[Record]:
    return [Record(f"mem:{i + 1}", r) for i, r in enumerate(rows)]


# ------------------------------------------------------------------------------------------ real-data rows

def screenspot_rows() -> list[dict]:
    rows = []
    for line in SCREENSPOT.read_text(encoding="utf-8").splitlines():
        a = json.loads(line)
        rows.append({"instruction": a["instruction"], "gt_bbox": list(xywh_to_xyxy(a["bbox"])),
                     "group": a["platform"], "ui_type": a["data_type"], "image_path": a["image"], "id": a["image"]})
    return rows


_OSATLAS_ACTION = re.compile(r"actions:\n(?P<name>[A-Z_]+)\s*(?:<point>\[\[(?P<x>\d+),(?P<y>\d+)\]\]</point>|\[(?P<text>[^\]]*)\])?")


def osatlas_rows(name: str, size=AC_SIZE) -> list[dict]:
    """GUI-R1 navigation rows from OS-Atlas test samples: gold point on the 0-1000 grid -> ORIGINAL pixels."""
    rows = []
    for line in (OSATLAS / name).read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        answer = r["conversations"][-1]["value"]
        m = _OSATLAS_ACTION.search(answer)
        assert m, answer
        action = m.group("name").lower()
        point = [int(m.group("x")) * size[0] / 1000, int(m.group("y")) * size[1] / 1000] if m.group("x") else [-100, -100]
        rows.append({"id": r["id"], "instruction": r["conversations"][0]["value"][-200:], "gt_action": action,
                     "gt_bbox": point, "gt_input_text": m.group("text") or "no input text", "group": "android",
                     "ui_type": action, "image_size": list(size)})
    return rows


def test_osatlas_rows_are_what_the_samples_say():
    rows = osatlas_rows("ac_low_test.jsonl")
    assert [r["gt_action"] for r in rows] == ["open_app", "long_press", "click"]
    assert rows[0]["gt_input_text"] == "PocketBook"
    assert rows[1]["gt_bbox"] == pytest.approx([108 * 1.08, 272 * 2.4])
    ody = osatlas_rows("gui_odyssey_test.jsonl")
    assert [r["gt_action"] for r in ody] == ["click", "click", "click"]


# ------------------------------------------------------------------------------------------------ grounding

def _pred_at(row: dict, kind: str) -> dict:
    x1, y1, x2, y2 = row["gt_bbox"]
    point = {"center": [(x1 + x2) / 2, (y1 + y2) / 2], "edge": [x1, (y1 + y2) / 2], "out": [x2 + 5, y2 + 5]}[kind]
    return {**row, "pred": f"<answer>[{{'action': 'click', 'point': {point}}}]</answer>", "pred_action": "click",
            "pred_coord": point, "pred_input_text": "no input text"}


def test_grounding_hand_computed_edges_and_omitted_groups():
    base = screenspot_rows()
    mobile_text = [r for r in base if r["group"] == "mobile" and r["ui_type"] == "text"][:3]
    mobile_icon = [r for r in base if r["group"] == "mobile" and r["ui_type"] == "icon"][:2]
    web_icon = [r for r in base if r["group"] == "web" and r["ui_type"] == "icon"][:2]
    rows = ([_pred_at(mobile_text[0], "center"), _pred_at(mobile_text[1], "edge"), _pred_at(mobile_text[2], "out")]
            + [_pred_at(mobile_icon[0], "center"), _pred_at(mobile_icon[1], "center")]
            + [_pred_at(web_icon[0], "edge"), _pred_at(web_icon[1], "out")])
    strict = score_records(recs(rows), "screenspot", "strict")
    guir1 = score_records(recs(rows), "screenspot", "guir1")
    # strict: edges count (SeeClick): mobile-text 2/3, mobile-icon 2/2, web-icon 1/2 -> overall 5/7
    assert strict.metrics["per_group"] == pytest.approx({"mobile-text": 2 / 3, "mobile-icon": 1.0, "web-icon": 0.5})
    assert strict.metrics["overall"] == pytest.approx(5 / 7)
    assert strict.metrics["per_platform"] == pytest.approx({"mobile": 4 / 5, "web": 0.5})
    assert strict.metrics["per_ui_type"] == pytest.approx({"text": 2 / 3, "icon": 3 / 4})
    # guir1: x1 < x < x2 strictly, so edge points miss: mobile-text 1/3, mobile-icon 2/2, web-icon 0/2
    assert guir1.metrics["per_group"] == pytest.approx({"mobile-text": 1 / 3, "mobile-icon": 1.0, "web-icon": 0.0})
    assert guir1.metrics["omitted_by_reference"] == ["web-icon"]  # the reference would not print it
    assert guir1.metrics["overall"] == pytest.approx(3 / 7) and guir1.metrics["reference_prints_overall"] is False
    assert guir1.counts["per_group"]["web-icon"] == {"hits": 0, "n": 2}
    assert strict.n_rows == guir1.n_rows == 7


def test_grounding_full_screenspot_per_platform_and_text_icon():
    base = screenspot_rows()
    assert len(base) == 1272
    kinds = ("center", "edge", "out")
    rows = [_pred_at(r, kinds[i % 3]) for i, r in enumerate(base)]
    strict = score_records(recs(rows), "screenspot", "strict")
    guir1 = score_records(recs(rows), "screenspot", "guir1")
    expected_s, expected_g, n = {}, {}, {}
    for i, r in enumerate(base):
        k = f"{r['group']}-{r['ui_type']}"
        n[k] = n.get(k, 0) + 1
        expected_s[k] = expected_s.get(k, 0) + (i % 3 != 2)
        expected_g[k] = expected_g.get(k, 0) + (i % 3 == 0)
    assert set(strict.metrics["per_group"]) == {f"{p}-{t}" for p in ("mobile", "desktop", "web") for t in ("text", "icon")}
    for k, rows_k in n.items():
        assert strict.metrics["per_group"][k] == pytest.approx(expected_s[k] / rows_k)
        assert guir1.metrics["per_group"][k] == pytest.approx(expected_g[k] / rows_k)
    assert strict.metrics["overall"] == pytest.approx(sum(expected_s.values()) / 1272)
    assert guir1.metrics["overall"] == pytest.approx(424 / 1272)  # every third row is a centre hit


def test_grounding_unparseable_rows_count_as_wrong_and_guir1_crash_case_warns():
    rows = [_pred_at(r, "center") for r in screenspot_rows()[:4]]
    rows[1] = {**rows[1], "pred_coord": None, "pred_action": None, "parse_error": "no <answer>"}
    rows[2] = {k: v for k, v in rows[2].items() if k not in ("pred_coord", "pred_action", "pred_input_text")}
    rows[2]["pred"] = "I cannot find it"
    strict = score_records(recs(rows), "screenspot", "strict")
    assert strict.n_rows == 4 and strict.counts["hits"] == 2 and strict.metrics["overall"] == 0.5
    assert strict.unparseable["count"] == 2
    assert {e["where"] for e in strict.unparseable["examples"]} == {"mem:2", "mem:3"}
    guir1 = score_records(recs(rows), "screenspot", "guir1")
    assert guir1.metrics["overall"] == 0.5
    assert guir1.warnings and guir1.warnings[0]["count"] == 2 and "crashes" in guir1.warnings[0]["message"]


# ----------------------------------------------------------------------------------------------- navigation

def _nav(row: dict, action, point, text="no input text") -> dict:
    return {**row, "pred": f"<answer>[{{'action': '{action}', 'point': {point}}}]</answer>", "pred_action": action,
            "pred_coord": point, "pred_input_text": text}


def two_long_press_rows() -> list[dict]:
    """open_app right; long_press predicted as click at the right place; the same long_press predicted far
    away; click right (all from the real AndroidControl-Low samples)."""
    open_app, long_press, click = osatlas_rows("ac_low_test.jsonl")
    return [
        _nav(open_app, "open_app", [-100, -100], "PocketBook"),
        _nav(long_press, "click", [long_press["gt_bbox"][0] + 10, long_press["gt_bbox"][1] + 10]),
        _nav(long_press, "click", [1000, 2300]),
        _nav(click, "click", [click["gt_bbox"][0] - 6, click["gt_bbox"][1] - 9]),
    ]


def test_guir1_zero_hit_category_leaves_the_denominator():
    res = score_records(recs(two_long_press_rows()), "androidcontrol_low", "guir1")
    # Type: android-long_press has no type hit -> its 2 rows leave the denominator: 2 / (4 - 2)
    assert res.metrics["type"] == 1.0
    assert res.counts["type"] == {"hits": 2, "n": 2, "left_out": 2}
    assert res.counts["gr"] == {"hits": 2, "n": 3, "left_out": 0}
    # GR: long_press 1/2 (grounding regardless of the predicted action) + click 1/1
    assert res.metrics["gr"] == pytest.approx(2 / 3)
    # Step: (grounding 2 + text 1) / (grounding 3 + text 1)
    assert res.metrics["sr"] == pytest.approx(3 / 4)
    cat = res.metrics["per_category"]["android-long_press"]
    assert cat["type"] == 0.0 and cat["gr"] == 0.5 and cat["omitted_by_reference"] == ["type"]
    assert res.n_rows == 4


def test_strict_counts_every_row_and_needs_type_and_argument():
    res = score_records(recs(two_long_press_rows()), "androidcontrol_low", "strict")
    assert res.metrics["type"] == 0.5  # 2 of 4
    assert res.metrics["gr"] == pytest.approx(2 / 3)  # long_press near, long_press far, click near
    assert res.metrics["sr"] == 0.5  # open_app and click; the near long_press has the wrong type
    assert res.metrics["per_action"]["long_press"]["sr"] == 0.0
    assert res.metrics["per_action"]["open_app"] == (
        {"n": 1, "type": 1.0, "gr": None, "sr": 1.0, "hits": {"type": 1, "gr": 0, "sr": 1}, "rows": {"gr": 0}})
    assert res.metrics["per_group"]["android"]["n"] == 4
    assert res.confusion == {"open_app": {"open_app": 1}, "long_press": {"click": 2}, "click": {"click": 1}}


def test_guir1_crash_cases_report_zero_with_warning():
    rows = [_nav(r, "press_back", [5000, 5000]) for r in osatlas_rows("gui_odyssey_test.jsonl", (720, 1280))]
    res = score_records(recs(rows), "guiodyssey", "guir1")
    assert res.metrics["type"] == 0.0 and res.metrics["gr"] == 0.0 and res.metrics["sr"] == 0.0
    messages = " ".join(w["message"] for w in res.warnings)
    assert "no type hits" in messages and "no gr hits" in messages and "no sr hits" in messages
    # missing prediction fields: the reference raises; here a miss with a warning, never dropped
    rows = [_nav(r, "click", r["gt_bbox"]) for r in osatlas_rows("gui_odyssey_test.jsonl", (720, 1280))]
    rows[0]["pred_coord"] = None
    del rows[1]["pred_action"]
    res = score_records(recs(rows), "guiodyssey", "guir1")
    assert res.n_rows == 3
    assert res.counts["type"] == {"hits": 2, "n": 3, "left_out": 0} and res.counts["gr"] == {"hits": 2, "n": 3, "left_out": 0}
    assert {w["examples"][0] for w in res.warnings} == {"mem:1", "mem:2"}


def test_text_rules_guir1_vs_strict():
    open_app = osatlas_rows("ac_low_test.jsonl")[0]
    gold_words = [f"w{i}" for i in range(6)] + [f"g{i}" for i in range(7)]  # 13 tokens
    pred_words = [f"w{i}" for i in range(6)] + [f"p{i}" for i in range(5)]  # 11 tokens, 6 shared
    typed = {**open_app, "gt_action": "type", "gt_input_text": " ".join(gold_words), "ui_type": "type"}
    scroll = {**open_app, "gt_action": "scroll", "gt_input_text": "down", "ui_type": "scroll"}
    rows = [
        # GUI-R1 F1 = 2PR/(P+R), 6 shared of 13 and 11 tokens -> 0.4999999999999999 -> miss; exact F1 0.5 -> hit
        _nav(typed, "type", [-100, -100], " ".join(pred_words)),
        # text right but the predicted action is click: guir1 text check ignores the action, strict does not
        _nav(typed, "click", [-100, -100], " ".join(gold_words)),
        _nav(scroll, "scroll", [-100, -100], "Down"),
    ]
    g = score_records(recs(rows), "androidcontrol_high", "guir1")
    assert g.metrics["per_category"]["android-type"]["text"] == 0.5
    assert g.metrics["sr"] == pytest.approx(2 / 3)
    s = score_records(recs(rows), "androidcontrol_high", "strict")
    assert [s.metrics["per_action"][a]["sr"] for a in ("type", "scroll")] == [0.5, 1.0]
    assert s.metrics["sr"] == pytest.approx(2 / 3) and s.metrics["gr"] is None


def test_strict_reparses_raw_text_into_original_pixels():
    click = osatlas_rows("ac_low_test.jsonl")[2]  # gold (1026.0, 208.8) on 1080 x 2400
    row = {k: v for k, v in click.items()}
    row["pred"] = "<think>menu</think><answer>[{'action': 'click', 'point': [511, 102], 'input_text': 'no input text'}]</answer>"
    row["resize"] = {"min_pixels": 3136, "max_pixels": 1258291, "factor": 28, "resized_size": [540, 1200]}
    far = {**row, "pred": row["pred"].replace("[511, 102]", "[100, 900]")}
    bad = {**row, "pred": "I will click the menu"}
    res = score_records(recs([row, far, bad]), "androidcontrol_low", "strict", max_failures=10)
    assert res.counts["sr"] == {"hits": 1, "n": 3}
    assert res.unparseable["count"] == 1 and res.unparseable["examples"][0]["where"] == "mem:3"
    assert res.failures[0]["pred_point"] == pytest.approx((200.0, 1800.0))  # (100, 900) resized -> original


def test_mind2web_from_real_annotations():
    ep = json.loads((DATA / "mind2web" / "mind2web_data_test_task.json").read_text())[0]
    rows = []
    for a in ep["actions"][:4]:
        b = a["bbox"]
        rows.append({"annot_id": ep["annotation_id"], "gt_action": a["operation"]["op"].lower(),
                     "gt_bbox": [b["x"], b["y"], b["x"] + b["width"], b["y"] + b["height"]],
                     "gt_input_text": a["operation"]["value"]})
    # ops: CLICK, TYPE 'New York', CLICK, CLICK
    preds = [("click", "c", None), ("type", "c", "new york city"), ("click", "o", None), ("type", "c", "x")]
    for r, (act, where, text) in zip(rows, preds, strict=False):
        x1, y1, x2, y2 = r["gt_bbox"]
        r.update(pred_action=act, pred_input_text=text or "no input text",
                 pred_coord=[(x1 + x2) / 2, (y1 + y2) / 2] if where == "c" else [x2 + 1, y2 + 1])
    res = score_records(recs(rows), "mind2web", "strict")
    assert res.metrics["gr"] == 0.75 and res.metrics["type"] == 0.75
    # CLICK F1s: 1, 1, 0 ("3 x" vs "4") -> 2/3; TYPE: "3 new york city" vs "3 new york" -> 2*1*0.75/1.75
    assert res.metrics["op_f1_per_op"]["CLICK"] == pytest.approx(2 / 3)
    assert res.metrics["op_f1_per_op"]["TYPE"] == pytest.approx(6 / 7)
    assert res.metrics["op_f1"] == pytest.approx((2 / 3 + 6 / 7) / 2)
    assert res.metrics["sr"] == 0.25 and res.metrics["episode_sr"] == 0.0


def test_modes_and_benchmarks_are_checked():
    with pytest.raises(ValueError, match="no 'guir1' mode"):
        score_records([], "aitw", "guir1")
    with pytest.raises(ValueError, match="unknown benchmark 'screenspot3'.*screenspot_pro"):
        get_benchmark("screenspot3")
    with pytest.raises(ValueError, match="unknown mode"):
        score_records([], "screenspot", "loose")


# ----------------------------------------------------------------------------------------------- io, registry

def test_bad_rows_name_file_line_and_field(tmp_path):
    good = _pred_at(screenspot_rows()[0], "center")
    f = tmp_path / "screenspot_test.json"
    f.write_text(json.dumps(good) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(PredictionFileError, match=r"screenspot_test.json:3: invalid JSON"):
        evaluate(f, "screenspot")
    bad = {k: v for k, v in good.items() if k != "gt_bbox"}
    write_jsonl(f, [good, bad])
    with pytest.raises(PredictionFileError, match=r"screenspot_test.json:2: field 'gt_bbox': missing"):
        evaluate(f, "screenspot")
    write_jsonl(f, [{**good, "gt_bbox": [1, 2, "3", 4]}])
    with pytest.raises(PredictionFileError, match="field 'gt_bbox': must be a list of numbers"):
        evaluate(f, "screenspot")


def test_reader_streams_jsonl_and_reads_arrays(tmp_path):
    rows = [_pred_at(r, "center") for r in screenspot_rows()[:3]]
    a = write_jsonl(tmp_path / "a.jsonl", rows)
    b = tmp_path / "b.json"
    b.write_text(json.dumps(rows), encoding="utf-8")
    got = list(iter_records([a, b]))
    assert [r.where for r in got] == [f"{a}:1", f"{a}:2", f"{a}:3", f"{b}[0]", f"{b}[1]", f"{b}[2]"]
    assert evaluate([a, b], "screenspot").n_rows == 6


def test_registry_entries_state_sources_and_guir1_file_names():
    names = {"screenspot", "screenspot_v2", "screenspot_pro", "androidcontrol_high", "androidcontrol_low",
             "guiodyssey", "guiact_web", "omniact_web", "omniact_desktop", "aitw", "mind2web", "osworld_g",
             "ui_vision", "mmbench_gui"}
    assert set(BENCHMARKS) == names
    for b in BENCHMARKS.values():
        assert "arXiv" in b.source or "github" in b.source.lower()
        assert "strict" in b.definitions and all(len(d) > 80 for d in b.definitions.values())
        assert benchmark_for_file(Path("/x") / b.guir1_file) is b
    for name in ("androidcontrol_high", "guiodyssey", "screenspot_pro", "omniact_desktop"):
        assert "guir1" in BENCHMARKS[name].modes
        assert benchmark_for_file(f"{name}_test_1000_2000_pred.json").name == name
    assert benchmark_for_file("screenspot_test.json").name == "screenspot"
    assert benchmark_for_file("notes.json") is None and benchmark_for_file("screenspot_test.parquet") is None
