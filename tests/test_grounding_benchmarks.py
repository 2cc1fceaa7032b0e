"""OSWorld-G, UI-Vision and MMBench-GUI L2 (issue 39): their readers on rows in each benchmark's published layout
(tests/fixtures/<benchmark>/, sources in each README.md), the polygon and refusal regions, the scores with each
paper's denominators and averages (expected values worked out by hand below), and ``data convert`` -> ``eval`` end
to end with answers at the gold (all hit) and far away (all miss)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from core.cli import app
from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.data.unified import iter_steps
from core.eval.io import PredictionFileError
from core.eval.metrics import evaluate
from core.eval.registry import BENCHMARKS
from core.geometry import point_in_box
from core.inference.rows import gold_columns
from core.regions import interior_point, point_in_polygon, polygon_error
from core.schema import POLYGON_KEY, StepValidationError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
runner = CliRunner()


def _blank_png(path: Path, size) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        Image.new("RGB", (int(size[0]), int(size[1])), "white").save(path)


def prepared(source: str, dest: Path) -> Path:
    """A copy of the fixture folder of ``source`` in ``dest``, with blank screenshots of the rows' sizes where its
    rows point (OSWorld-G: ``images/``, the repository's benchmark/ layout; UI-Vision: ``images/``; MMBench-GUI:
    ``offline_images/<platform>/``)."""
    root = shutil.copytree(FIXTURES / source, dest / source)
    files = {"osworld_g": [root / "OSWorld-G.json"], "mmbench_gui": [root / "L2_annotations.json"],
             "ui_vision": sorted((root / "annotations" / "element_grounding").glob("*.json"))}[source]
    for f in files:
        for row in json.loads(f.read_text()):
            where = (root / "offline_images" / row["platform"] / Path(row["image_path"]).name
                     if source == "mmbench_gui" else root / "images" / row["image_path"])
            _blank_png(where, row["image_size"])
    return root


@pytest.fixture
def osworld_g(tmp_path) -> Path:
    return prepared("osworld_g", tmp_path)


@pytest.fixture
def ui_vision(tmp_path) -> Path:
    return prepared("ui_vision", tmp_path)


@pytest.fixture
def mmbench_gui(tmp_path) -> Path:
    return prepared("mmbench_gui", tmp_path)


def read(source: str, path: Path, **kw):
    summary = ConversionSummary()
    return list(READERS[source](path, summary=summary, **kw)), summary


# ------------------------------------------------------------------------------------------------- readers

def test_osworld_g_reader_reads_boxes_polygons_refusals_and_categories(osworld_g):
    raw = json.loads((osworld_g / "OSWorld-G.json").read_text())
    steps, summary = read("osworld_g", osworld_g)  # a folder: its OSWorld-G.json
    assert summary.read == 7 and not summary.notes
    box, poly, box2, refusal, unclassified, screen4k, edge = steps
    x, y, w, h = raw[0]["box_coordinates"]
    assert box.bbox == (x, y, x + w, y + h) and box.image_size == (1920, 1080)
    assert box.action.type == "click" and box.action.point == (x + w / 2, y + h / 2)
    assert box.instruction == raw[0]["instruction"] and box.task_type == "grounding" and box.source == "osworld_g"
    assert box.ui_type == "text_matching+element_recognition" and box.extra["GUI_types"] == raw[0]["GUI_types"]
    flat = raw[1]["box_coordinates"]
    vertices = [list(v) for v in zip(flat[0::2], flat[1::2], strict=True)]
    assert poly.extra[POLYGON_KEY] == vertices and poly.bbox == (100, 100, 300, 400)
    # concave: the bounding box centre (200, 250) lies in the notch of the L, the gold click inside the L
    assert not point_in_polygon((200, 250), tuple(map(tuple, vertices)))
    assert point_in_polygon(poly.action.point, tuple(map(tuple, vertices)))
    assert poly.ui_type == "layout_understanding+fine_grained_manipulation"
    assert box2.bbox == (600, 40, 900, 72)
    assert refusal.action.type == "impossible" and refusal.bbox is None and refusal.ui_type == "refusal"
    assert unclassified.ui_type is None and unclassified.bbox == (0, 0, 48, 24)
    assert screen4k.image_size == (3840, 2160) and screen4k.bbox == (3700, 20, 3760, 80)
    assert screen4k.ui_type == "element_recognition"
    assert edge.bbox == (55.68, 500, 80.0, 600) and edge.bbox[0] == 29 / 1000 * 1920
    assert [s.id for s in steps] == [f"OSWorld-G:{r['id']}" for r in raw]


def test_osworld_g_without_classification_file_says_so(osworld_g):
    (osworld_g / "classification_result.json").unlink()
    steps, summary = read("osworld_g", osworld_g / "OSWorld-G.json")
    assert [s.ui_type for s in steps] == [None] * 7
    assert any("classification_result.json" in n for n in summary.notes)


def test_osworld_g_pairs_polygon_and_bad_rows(osworld_g):
    rows = json.loads((osworld_g / "OSWorld-G.json").read_text())
    rows[1]["box_coordinates"] = [[100, 100], [300, 100], [300, 160], [160, 160], [160, 400], [100, 400]]
    (osworld_g / "OSWorld-G.json").write_text(json.dumps(rows))
    steps, _ = read("osworld_g", osworld_g)
    assert steps[1].bbox == (100, 100, 300, 400)
    for field, value, message in (("box_type", "ellipse", "expected one of bbox, polygon, refusal"),
                                  ("box_coordinates", [1, 2, 3, 4], "a polygon needs 3 or more"),
                                  ("image_size", [1920], "expected 2 numbers")):
        bad = [dict(rows[1], **{field: value})]
        (osworld_g / "OSWorld-G.json").write_text(json.dumps(bad))
        with pytest.raises(StepValidationError, match=message) as err:
            read("osworld_g", osworld_g)
        assert err.value.record == "OSWorld-G:FIXTUREPG1-0" and err.value.field == field


def test_ui_vision_reader_takes_the_setting_from_the_file(ui_vision):
    steps, summary = read("ui_vision", ui_vision / "annotations", images_dir=ui_vision / "images")
    assert summary.read == 6
    assert [(s.group, s.ui_type) for s in steps] == [
        ("basic", "Creativity"), ("basic", "Development"), ("functional", "Creativity"), ("functional", "Creativity"),
        ("spatial", "Development"), ("spatial", "Entertainment")]
    assert steps[0].bbox == (9, 213, 155, 416) and steps[0].instruction == "Open color selection dialog"
    assert steps[1].bbox == (220, 40, 300, 64)  # [300, 64, 220, 40]: corners swapped, as the reference does
    assert steps[1].extra["bbox_fractions"] == [220 / 1280, 40 / 800, 300 / 1280, 64 / 800]  # as it compares
    assert steps[0].extra["element_type"] == "icon" and steps[0].extra["platform"] == "GIMP"
    assert steps[0].id == "element_grounding_basic:0" and steps[2].id == "element_grounding_functional:0"
    odd = ui_vision / "annotations" / "element_grounding" / "element_grounding_basic.json"
    with pytest.raises(ValueError, match="setting of this one is unknown"):
        read("ui_vision", odd.rename(odd.with_name("grounding_basic.json")), images_dir=ui_vision / "images")


def test_mmbench_gui_reader_reads_fractions_pixels_and_the_minus_one_quirk(mmbench_gui):
    raw = json.loads((mmbench_gui / "L2_annotations.json").read_text())
    steps, _ = read("mmbench_gui", mmbench_gui, images_dir=mmbench_gui / "offline_images")
    assert [(s.group, s.ui_type) for s in steps] == [
        ("os_windows", "basic"), ("os_ios", "advanced"), ("os_web", "basic"), ("os_web", "advanced"),
        ("os_linux", "basic")]
    x1, y1, x2, y2 = raw[0]["bbox"]
    assert steps[0].bbox == pytest.approx((x1 * 2560, y1 * 1440, x2 * 2560, y2 * 1440))
    assert steps[0].extra["data_type"] == "icon" and steps[0].extra["app_name"] == "calendar"
    assert steps[2].bbox == (0, 300, 200, 340)  # a pixel box: its -1 becomes 0
    assert steps[3].bbox == (1000, 650, 1100, 700)
    # the box as the reference compares it: the file's fractions, or pixels / the image's size
    assert steps[0].extra["bbox_fractions"] == raw[0]["bbox"]
    assert steps[2].extra["bbox_fractions"] == [0 / 1280, 300 / 720, 200 / 1280, 340 / 720]
    bad = [dict(raw[1], grounding_type="expert")]
    (mmbench_gui / "L2_annotations.json").write_text(json.dumps(bad))
    with pytest.raises(StepValidationError, match="expected one of basic, advanced") as err:
        read("mmbench_gui", mmbench_gui, images_dir=mmbench_gui / "offline_images")
    assert (err.value.record, err.value.field) == ("L2_annotations:0", "grounding_type")


@pytest.mark.parametrize("platform", [None, "", "windows", ["os_web"]])
def test_mmbench_gui_row_without_a_platform_is_refused_at_convert(platform, mmbench_gui, tmp_path):
    """Issue 50 item 14: eval breaks MMBench-GUI down by platform, so a row without one of its six platforms is
    refused by ``data convert`` naming the row (counted under ``--skip-missing``), not written for eval to refuse
    the whole file."""
    rows = json.loads((mmbench_gui / "L2_annotations.json").read_text())
    rows[2] = {k: v for k, v in rows[2].items() if k != "platform"} if platform is None else {**rows[2],
                                                                                               "platform": platform}
    (mmbench_gui / "L2_annotations.json").write_text(json.dumps(rows))
    args = ["data", "convert", "--from", "mmbench_gui", "--to", "unified", "--name", "m", "--input", str(mmbench_gui),
            "--images", str(mmbench_gui / "offline_images")]
    r = runner.invoke(app, [*args, "--output", str(tmp_path / "stop")])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
    (line,) = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert "L2_annotations:2" in line and "field 'platform'" in line and "os_windows" in line, line
    r = runner.invoke(app, [*args, "--output", str(tmp_path / "skip"), "--skip-missing"])
    assert r.exit_code == 0 and "skipped 1" in r.output and "invalid platform" in r.output, r.output
    steps = list(iter_steps(tmp_path / "skip" / "m.parquet"))
    assert len(steps) == len(rows) - 1 and "L2_annotations:2" not in {s.id for s in steps}


def test_bad_row_is_one_line_or_skipped_without_losing_the_others(osworld_g, tmp_path):
    rows = json.loads((osworld_g / "OSWorld-G.json").read_text())
    (osworld_g / "OSWorld-G.json").write_text(json.dumps([*rows, dict(rows[0], id="BAD-0", box_type="circle")]))
    args = ["data", "convert", "--from", "osworld_g", "--to", "unified", "--name", "osworld_g", "--input",
            str(osworld_g)]
    r = runner.invoke(app, [*args, "--output", str(tmp_path / "stop")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    errors = [line for line in r.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "OSWorld-G:BAD-0" in errors[0] and "box_type" in errors[0], r.output
    assert not list((tmp_path / "stop").glob("*.parquet"))
    r = runner.invoke(app, [*args, "--output", str(tmp_path / "skip"), "--skip-missing"])
    assert r.exit_code == 0, r.output
    assert "written 7, skipped 1" in r.output and "invalid box_type" in r.output
    assert len(list(iter_steps(tmp_path / "skip" / "osworld_g.parquet"))) == 7


@pytest.mark.parametrize("vertex", [[10**400, 100], [100, -(10**400)], [1e308 * 10, 5]])
def test_polygon_vertex_beyond_the_float_range_is_a_row_error(vertex, osworld_g, tmp_path):
    """A vertex too large for a float (issue 50 item 6), in the benchmark's file, in a unified parquet's
    ``extra.polygon`` and in a prediction row's ``gt_polygon``: one error line naming the row and field (a counted
    skip under ``--skip-missing``), never an ``OverflowError``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = json.loads((osworld_g / "OSWorld-G.json").read_text())
    rows[1]["box_coordinates"] = [[100, 100], vertex, [300, 400]]
    (osworld_g / "OSWorld-G.json").write_text(json.dumps(rows))
    good = convert("osworld_g", prepared("osworld_g", tmp_path / "good"), tmp_path / "good" / "unified")
    table = pq.read_table(good).to_pylist()
    extra = json.loads(table[1]["extra"])
    extra[POLYGON_KEY][1] = vertex
    table[1]["extra"] = json.dumps(extra)
    (tmp_path / "bad").mkdir()
    pq.write_table(pa.Table.from_pylist(table, schema=pq.read_schema(good)), tmp_path / "bad" / "osworld_g.parquet")
    for source, given, field in (("osworld_g", osworld_g, "box_coordinates"),
                                 ("unified", tmp_path / "bad" / "osworld_g.parquet", "extra.polygon")):
        args = ["data", "convert", "--from", source, "--to", "unified", "--name", "o", "--input", str(given)]
        r = runner.invoke(app, [*args, "--output", str(tmp_path / f"stop_{source}")])
        assert r.exit_code == 2 and r.exception.__class__ is SystemExit, r.output
        errors = [line for line in r.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "OSWorld-G:FIXTUREPG1-0" in errors[0] and field in errors[0], r.output
        r = runner.invoke(app, [*args, "--output", str(tmp_path / f"skip_{source}"), "--skip-missing"])
        assert r.exit_code == 0 and "written 6, skipped 1" in r.output and f"invalid {field}" in r.output, r.output
    preds = tmp_path / "osworld_g.jsonl"
    preds.write_text(json.dumps(_row(0, polygon=[[0, 0], vertex, [0, 5]], point=(0, 0))) + "\n")
    r = runner.invoke(app, ["eval", "--predictions", str(preds), "--benchmark", "osworld_g"])
    assert r.exit_code == 2 and r.exception.__class__ is SystemExit, r.output
    assert "osworld_g.jsonl:1" in r.output and "gt_polygon" in r.output and "vertex 1" in r.output, r.output


# ----------------------------------------------------------------------------------------------- regions

L_SHAPE = ((100, 100), (300, 100), (300, 160), (160, 160), (160, 400), (100, 400))


def test_point_in_polygon_concave_and_the_official_boundary():
    """Issue 51 class 1: OSWorld-G's evaluator's ray casting (its ``_is_point_in_polygon``): a point on the left or
    top side of a crossing is in, on the right or bottom side out; a polygon of zero area holds nothing."""
    assert point_in_polygon((130, 300), L_SHAPE) and point_in_polygon((250, 130), L_SHAPE)
    assert not point_in_polygon((200, 250), L_SHAPE)  # the notch
    assert not point_in_polygon((50, 130), L_SHAPE) and not point_in_polygon((310, 130), L_SHAPE)
    for inside in ((100, 250), (230, 100), (100, 100), (159.999, 300), (230, 159.999)):  # left / top edges, a vertex
        assert point_in_polygon(inside, L_SHAPE), inside
    for outside in ((300, 130), (160, 300), (230, 160), (130, 400), (300, 100), (100, 400), (160.001, 300)):
        assert not point_in_polygon(outside, L_SHAPE), outside  # right / bottom edges, their vertices
    square = ((0, 0), (10, 0), (10, 10), (0, 10))
    assert [point_in_polygon(p, square) for p in ((0, 0), (10, 0), (0, 10), (10, 10), (5, 0), (5, 10))] == [
        True, False, False, False, True, False]
    line = ((0, 0), (10, 10), (20, 20))  # zero area: no point at all, its segments neither
    assert not any(point_in_polygon(p, line) for p in ((5, 5), (20, 20), (0, 0), (5, 6)))
    bowtie = ((0, 0), (10, 10), (10, 0), (0, 10))  # self-intersecting: even-odd
    assert point_in_polygon((1, 5), bowtie) and not point_in_polygon((5, 2), bowtie)
    for polygon in (L_SHAPE, bowtie):
        assert point_in_polygon(interior_point(polygon), polygon)
    assert polygon_error([[0, 0], [1, 1]]) and polygon_error([[0, 0], [1, 1], [1, float("nan")]])


# ------------------------------------------------------------------------------------------------ scores

def _row(i, *, gold="click", box=(0, 0, 100, 100), polygon=None, group=None, ui_type=None, pred="click",
         point=None, size=(1000, 1000)):
    row = {"id": f"r{i}", "gt_action": gold, "gt_bbox": list(box) if gold != "impossible" else [-100, -100],
           "image_size": list(size), "group": group, "ui_type": ui_type, "pred_action": pred,
           "pred_coord": list(point) if point else None}
    if polygon is not None:
        row["gt_polygon"] = [list(v) for v in polygon]
    return row


def _score(tmp_path, rows, benchmark):
    path = tmp_path / f"{benchmark}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return evaluate(path, benchmark, max_failures=100)


def test_osworld_g_both_denominators_refusal_and_categories(tmp_path):
    poly = dict(box=(100, 100, 300, 400), polygon=L_SHAPE)
    rows = [  # (hit?) by hand
        _row(0, point=(100, 50), ui_type="text_matching+element_recognition"),   # box edge x2=100: hit
        _row(1, point=(101, 50), ui_type="text_matching"),                       # just outside: miss
        _row(2, point=(130, 300), ui_type="layout_understanding", **poly),       # inside the L: hit
        _row(3, point=(200, 250), ui_type="layout_understanding", **poly),       # in the notch (box hit): miss
        _row(4, pred="impossible", ui_type="element_recognition"),               # refuses on a target: miss
        _row(5, gold="impossible", pred="impossible", ui_type="refusal"),        # right refusal: hit
        _row(6, gold="impossible", point=(-1, -1), ui_type="refusal"),           # [-1, -1] refuses: hit
        _row(7, gold="impossible", point=(50, 50), ui_type="refusal"),           # a click: miss
        _row(8, gold="impossible", pred="answer", ui_type="refusal"),            # an answer, no click: hit
    ]
    res = _score(tmp_path, rows, "osworld_g")
    m = res.metrics
    assert m["overall"] == pytest.approx(5 / 9)              # hits 0, 2, 5, 6, 8 over all rows
    assert m["overall_no_refusal"] == pytest.approx(2 / 5)   # hits 0, 2 over rows 0-4
    assert m["refusal"] == pytest.approx(3 / 4)
    assert m["per_group"] == pytest.approx({"text_matching": 1 / 2, "element_recognition": 1 / 2,
                                            "layout_understanding": 1 / 2, "refusal": 3 / 4})
    assert list(m["per_group"]) == ["text_matching", "element_recognition", "layout_understanding", "refusal"]
    assert m["per_box_type"] == pytest.approx({"bbox": 1 / 3, "polygon": 1 / 2, "refusal": 3 / 4})
    assert res.counts["overall_no_refusal"] == {"hits": 2, "n": 5} and res.counts["n"] == 9
    reasons = {f["id"]: f["reason"] for f in res.failures}
    assert reasons == {"r1": "point outside the gold bbox", "r3": "point outside the gold polygon",
                       "r4": "refused", "r7": "did not refuse"}


def test_refusal_forms_of_raw_answers(tmp_path):
    def raw(i, text):
        return {"id": f"t{i}", "gt_action": "impossible", "gt_bbox": [-100, -100], "image_size": [1000, 800],
                "ui_type": "refusal", "pred": text, "resize": {"resized_size": [1000, 800]}}
    rows = [raw(0, '<tool_call>{"name": "mobile_use", "arguments": {"action": "terminate", "status": '
                   '"failure"}}</tool_call>'),
            raw(1, "<answer>[{'action': 'impossible', 'point': [-100, -100], 'input_text': 'no input text'}]"
                   "</answer>"),
            raw(2, '<tool_call>{"name": "mobile_use", "arguments": {"action": "terminate", "status": '
                   '"success"}}</tool_call>'),                                   # "done" is no refusal
            raw(3, "The element is not on the screen."),                         # unparseable: wrong
            raw(4, "<answer>[{'action': 'click', 'point': [500, 400], 'input_text': 'no input text'}]</answer>")]
    res = _score(tmp_path, rows, "osworld_g")
    assert res.counts["refusal"] == {"hits": 2, "n": 5}
    assert res.unparseable["count"] == 1 and res.unparseable["examples"][0]["id"] == "t3"


def test_ui_vision_settings_and_final_average(tmp_path):
    rows = [_row(0, group="basic", ui_type="Education", point=(5, 5)),              # hit
            _row(1, group="basic", ui_type="Browsers", point=(500, 5)),             # miss
            _row(2, group="functional", ui_type="Education", point=(5, 5)),         # hit
            _row(3, group="spatial", ui_type="Education", point=(500, 5)),          # miss
            _row(4, group="spatial", ui_type="Creativity", pred=None)]              # unparseable: miss
    m = _score(tmp_path, rows, "ui_vision").metrics
    assert (m["basic"], m["functional"], m["spatial"]) == (0.5, 1.0, 0.0)
    assert m["final_avg"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)   # the paper's mean of the three settings
    assert m["overall"] == pytest.approx(2 / 5)                     # all rows: not the paper's number
    assert m["per_group"] == {"basic-Education": 1.0, "basic-Browsers": 0.0, "functional-Education": 1.0,
                              "spatial-Education": 0.0, "spatial-Creativity": 0.0}


def test_mmbench_gui_levels_and_average(tmp_path):
    rows = [_row(0, group="os_windows", ui_type="basic", point=(5, 5)),
            _row(1, group="os_windows", ui_type="basic", point=(5, 500)),
            _row(2, group="os_web", ui_type="basic", point=(99, 99)),
            _row(3, group="os_ios", ui_type="advanced", point=(0, 0)),
            _row(4, group="os_ios", ui_type="advanced", point=(100.5, 0))]
    res = _score(tmp_path, rows, "mmbench_gui")
    m = res.metrics
    assert m["basic"] == pytest.approx(2 / 3) and m["advanced"] == pytest.approx(1 / 2)
    assert m["average"] == pytest.approx((2 / 3 + 1 / 2) / 2) and m["overall"] == pytest.approx(3 / 5)
    assert m["per_group"] == pytest.approx({"os_windows-basic": 1 / 2, "os_ios-advanced": 1 / 2, "os_web-basic": 1.0})
    assert list(m["per_group"]) == ["os_windows-basic", "os_ios-advanced", "os_web-basic"]
    assert m["per_platform"] == pytest.approx({"os_windows": 1 / 2, "os_ios": 1 / 2, "os_web": 1.0})
    assert res.counts["basic"] == {"hits": 2, "n": 3}


def test_bad_gold_and_modes(tmp_path):
    with pytest.raises(PredictionFileError, match="gt_polygon"):
        _score(tmp_path, [_row(0, polygon=[[0, 0], [1, 1]], point=(0, 0))], "osworld_g")
    with pytest.raises(PredictionFileError, match="group"):
        _score(tmp_path, [_row(0, ui_type="basic", point=(0, 0))], "mmbench_gui")
    for bad in ([0.1, 0.2, 0.3], [0.1, 0.2, "x", 0.4], "0.1 0.2 0.3 0.4"):  # the fractions box: 4 numbers
        row = {**_row(0, group="os_web", ui_type="basic", point=(5, 5)), "gt_bbox_fractions": bad}
        with pytest.raises(PredictionFileError, match="gt_bbox_fractions") as err:
            _score(tmp_path, [row], "mmbench_gui")
        assert ":1" in str(err.value), str(err.value)
    for name in ("osworld_g", "ui_vision", "mmbench_gui"):
        assert BENCHMARKS[name].modes == ("strict",) and BENCHMARKS[name].kind == "grounding"
        with pytest.raises(ValueError, match="no 'guir1' mode"):
            evaluate(tmp_path / "osworld_g.jsonl", name, mode="guir1")


# -------------------------------------------------------------------------------------------- end to end

def _gold_answer(step, far: bool) -> str:
    """GUI-R1 answer text: the gold click (a refusal for a refusal row), or a click at the far corner."""
    w, h = step.image_size
    if far:
        x, y = w - 1, h - 1
    elif step.action.type == "impossible":
        return "<answer>[{'action': 'impossible', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>"
    else:
        x, y = step.action.point
    return f"<answer>[{{'action': 'click', 'point': [{x}, {y}], 'input_text': 'no input text'}}]</answer>"


#: ``data convert --input`` (and ``--images``) of each fixture folder.
CONVERT_INPUTS = {
    "osworld_g": lambda root: [root],
    "ui_vision": lambda root: [root / "annotations", "--images", root / "images"],
    "mmbench_gui": lambda root: [root, "--images", root / "offline_images"],
}


def convert(source: str, root: Path, out: Path, name: str | None = None) -> Path:
    """``gui-agent data convert --from SOURCE --to unified`` of the fixture at ``root``: the unified parquet."""
    name = name or source
    r = runner.invoke(app, ["data", "convert", "--from", source, "--to", "unified", "--name", name,
                            "--output", str(out), "--input", *map(str, CONVERT_INPUTS[source](root))])
    assert r.exit_code == 0, r.output
    return out / f"{name}.parquet"


@pytest.mark.parametrize(("source", "headline"), [
    ("osworld_g", ("overall", "overall_no_refusal", "refusal")),
    ("ui_vision", ("final_avg", "basic", "functional", "spatial")),
    ("mmbench_gui", ("average", "basic", "advanced")),
])
def test_convert_then_eval_all_hit_and_all_miss(source, headline, request, tmp_path):
    steps = list(iter_steps(convert(source, request.getfixturevalue(source), tmp_path / "unified")))
    assert len(steps) >= 4
    for far, expected in ((False, 1.0), (True, 0.0)):
        rows = [{"id": s.id, "instruction": s.instruction, **gold_columns(s), "group": s.group, "ui_type": s.ui_type,
                 "pred": _gold_answer(s, far), "resize": {"resized_size": list(s.image_size)}, "backend": "test"}
                for s in steps]
        preds = tmp_path / f"{source}_{far}.jsonl"
        preds.write_text("".join(json.dumps(row) + "\n" for row in rows))
        out = tmp_path / f"{source}_{far}.json"
        r = runner.invoke(app, ["eval", "--predictions", str(preds), "--benchmark", source, "--json", str(out)])
        assert r.exit_code == 0, r.output
        result = json.loads(out.read_text())
        assert result["n_rows"] == len(steps) and result["unparseable"]["count"] == 0
        assert result["metrics"]["overall"] == expected
        for key in headline:
            assert result["metrics"][key] == expected, key
            assert key in r.output
        assert set(result["metrics"]["per_group"].values()) == {expected}


def test_osworld_g_verdicts_are_the_official_evaluators(osworld_g, tmp_path):
    """Issue 51 class 1, through ``data convert`` and ``gui-agent eval``: a click on the polygon's right edge misses
    and one on its left edge hits (the evaluator's ray casting); an answer nobody can read is a click at the origin
    (it hits the box at the origin, misses the others, and is no refusal); the row in no category is reported
    under ``unclassified``."""
    steps = {s.id: s for s in iter_steps(convert("osworld_g", osworld_g, tmp_path / "unified"))}
    unreadable = "The search field is near the top of the window."
    answers = {"OSWorld-G:0FOB4CLBT2-0": _gold_answer(steps["OSWorld-G:0FOB4CLBT2-0"], far=False),
               "OSWorld-G:FIXTUREPG1-0": None, "OSWorld-G:FIXTUREPG1-1": unreadable,
               "OSWorld-G:FIXTURERF1-0": unreadable, "OSWorld-G:FIXTUREUC1-0": unreadable,
               "OSWorld-G:FIXTURE4K1-0": unreadable, "OSWorld-G:FIXTUREEG1-0": unreadable}

    def run(edge: tuple[int, int]) -> dict:
        click = f"<answer>[{{'action': 'click', 'point': [{edge[0]}, {edge[1]}], 'input_text': 'no input text'}}]</answer>"
        rows = [{"id": s.id, "instruction": s.instruction, **gold_columns(s), "group": s.group, "ui_type": s.ui_type,
                 "pred": answers[s.id] or click, "resize": {"resized_size": list(s.image_size)}, "backend": "test"}
                for s in steps.values()]
        preds, out = tmp_path / f"osworld_g_{edge[0]}.jsonl", tmp_path / f"r_{edge[0]}.json"
        preds.write_text("".join(json.dumps(row) + "\n" for row in rows))
        r = runner.invoke(app, ["eval", "--predictions", str(preds), "--benchmark", "osworld_g", "--json", str(out)])
        assert r.exit_code == 0, r.output
        return json.loads(out.read_text())

    right, left = run((300, 130)), run((100, 250))
    assert right["unparseable"]["count"] == 5
    assert right["metrics"]["overall"] == pytest.approx(2 / 7) and left["metrics"]["overall"] == pytest.approx(3 / 7)
    assert right["counts"]["overall_no_refusal"] == {"hits": 2, "n": 6}
    assert right["metrics"]["per_group"] == {"text_matching": 0.5, "element_recognition": pytest.approx(1 / 3),
                                             "layout_understanding": 0.0, "fine_grained_manipulation": 0.0,
                                             "refusal": 0.0, "unclassified": 1.0}
    assert left["metrics"]["per_group"]["layout_understanding"] == 1.0
    assert right["metrics"]["per_box_type"] == {"bbox": 2 / 5, "polygon": 0.0, "refusal": 0.0}


def _click(x: float, y: float) -> str:
    """A GUI-R1 click answer at pixel (x, y) of the unresized screenshot."""
    return f"<answer>[{{'action': 'click', 'point': [{x}, {y}], 'input_text': 'no input text'}}]</answer>"


@pytest.mark.parametrize(("source", "answers", "expected"), [
    # OSWorld-G: all coordinates in [0, 1] are fractions; (1, 1) is the far corner, not the box at the origin
    ("osworld_g", {"0FOB4CLBT2-0": (0.748, 0.3154), "FIXTUREPG1-0": (130 / 1280, 300 / 720),
                   "FIXTUREPG1-1": (0.55, 0.08), "FIXTURERF1-0": (0.5, 0.5), "FIXTUREUC1-0": (1, 1),
                   "FIXTURE4K1-0": (3730 / 3840, 50 / 2160), "FIXTUREEG1-0": (60 / 1920, 550 / 1080)}, 5 / 7),
    # MMBench-GUI: neither coordinate above 1 reads as fractions; (1, 320) stays pixels (y > 1)
    ("mmbench_gui", {"L2_annotations:0": (0.391, 0.143), "L2_annotations:1": (0.1, 0.95),
                     "L2_annotations:2": (1, 320), "L2_annotations:3": (0.82, 0.94),
                     "L2_annotations:4": (0.48, 0.33)}, 1.0),
])
def test_points_within_0_1_are_fractions_of_the_image(source, answers, expected, request, tmp_path):
    """Issue 51 class 2, through ``data convert`` and ``gui-agent eval``: a click whose coordinates the official
    evaluator reads as fractions of the image is scored at (x * W, y * H)."""
    steps = list(iter_steps(convert(source, request.getfixturevalue(source), tmp_path / "unified")))
    rows = [{"id": s.id, "instruction": s.instruction, **gold_columns(s), "group": s.group, "ui_type": s.ui_type,
             "pred": _click(*answers[s.id.split("OSWorld-G:")[-1]]), "resize": {"resized_size": list(s.image_size)},
             "backend": "test"} for s in steps]
    assert len(rows) == len(answers)
    preds, out = tmp_path / f"{source}.jsonl", tmp_path / f"{source}.json"
    preds.write_text("".join(json.dumps(row) + "\n" for row in rows))
    r = runner.invoke(app, ["eval", "--predictions", str(preds), "--benchmark", source, "--json", str(out)])
    assert r.exit_code == 0, r.output
    result = json.loads(out.read_text())
    assert result["unparseable"]["count"] == 0 and result["metrics"]["overall"] == pytest.approx(expected)


@pytest.mark.parametrize(("source", "row", "fractions", "edge", "outside"), [
    # MMBench-GUI: row 4's right edge is 0.5125 of 1920 px; a click at pixel 984 (984 / 1920 == 0.5125) is on it,
    # where pixels would miss (0.5125 x 1920 = 983.9999999999999 < 984); 985 is outside
    ("mmbench_gui", "L2_annotations:4", [0.45, 0.3, 0.5125, 0.36], (984, 330), (985, 330)),
    # UI-Vision: the functional row's left edge is pixel 984; a click at 0.5125 x 1920 = 983.9999999999999 px is on
    # it in fractions (983.9999999999999 / 1920 == 0.5125 == 984 / 1920), where pixels would miss; 983 is outside
    ("ui_vision", "element_grounding_functional:1", [984 / 1920, 500 / 1080, 1040 / 1920, 540 / 1080],
     (0.5125 * 1920, 520), (983, 520)),
])
def test_evaluators_comparing_in_fractions_decide_exact_edges_as_they_do(source, row, fractions, edge, outside,
                                                                          request, tmp_path):
    """Issue 51: MMBench-GUI's and UI-Vision's evaluators divide the click (pixels) by the image size and compare it
    with the box in fractions; ``gui-agent eval`` does the same (``gt_bbox_fractions``, written by ``data
    convert``), so the fixture's edge row is a hit there and a miss compared in pixels (a row written before the
    column existed)."""
    steps = {s.id: s for s in iter_steps(convert(source, request.getfixturevalue(source), tmp_path / "unified"))}
    step = steps[row]
    box_px = step.bbox

    def overall(xy: tuple[float, float], *, drop_fractions: bool = False) -> float:
        pred = {"id": step.id, "instruction": step.instruction, **gold_columns(step), "group": step.group,
                "ui_type": step.ui_type, "pred": _click(*xy), "resize": {"resized_size": list(step.image_size)},
                "backend": "test"}
        assert pred["gt_bbox_fractions"] == fractions  # the file's fractions, or pixels / the image size
        if drop_fractions:
            del pred["gt_bbox_fractions"]
        name = f"{source}_{xy[0]}_{drop_fractions}"
        preds, out = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.json"
        preds.write_text(json.dumps(pred) + "\n")
        r = runner.invoke(app, ["eval", "--predictions", str(preds), "--benchmark", source, "--json", str(out)])
        assert r.exit_code == 0, r.output
        return json.loads(out.read_text())["metrics"]["overall"]

    assert not point_in_box(edge, box_px)  # in pixels the click is just outside
    assert overall(edge) == 1.0 and overall(outside) == 0.0
    assert overall(edge, drop_fractions=True) == 0.0


@pytest.mark.parametrize(("files", "benchmark", "line", "needles"), [
    (["ui_vision"], "mmbench_gui", 1, ("field 'group'", "'basic' makes this a UI-Vision row", "(ui_vision)")),
    (["mmbench_gui"], "ui_vision", 1, ("field 'group'", "'os_windows' makes this a MMBench-GUI L2 row")),
    (["ui_vision", "mmbench_gui"], "ui_vision", 7, ("field 'group'", "mixed or mislabelled")),   # mixed
    (["ui_vision"], "screenspot", 1, ("field 'group'", "not a ScreenSpot one")),
    (["osworld_g"], "screenspot", 1, ("field 'group'", "missing")),
    (["osworld_g"], "ui_vision", 1, ("field 'group'", "missing")),
])
def test_mixed_or_mislabelled_benchmark_file_is_refused_naming_the_row(files, benchmark, line, needles, request,
                                                                       tmp_path):
    """Issue 50 item 14: rows of another benchmark (converted fixtures, answers at the gold) scored as this one, a
    whole file or mixed in, stop ``eval`` with one error line naming the first such row, never a score."""
    rows = []
    for source in files:
        for s in iter_steps(convert(source, request.getfixturevalue(source), tmp_path / "unified")):
            rows.append({"id": s.id, "instruction": s.instruction, **gold_columns(s), "group": s.group,
                         "ui_type": s.ui_type, "pred": _gold_answer(s, False),
                         "resize": {"resized_size": list(s.image_size)}, "backend": "test"})
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(row) + "\n" for row in rows))
    r = runner.invoke(app, ["eval", "--predictions", str(preds), "--benchmark", benchmark])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
    (error,) = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert f"preds.jsonl:{line}:" in error and all(n in error for n in needles), error


def test_mislabelled_setting_level_or_platform_is_a_row_error(tmp_path):
    """A UI-Vision setting, an MMBench-GUI platform or level that is not the benchmark's own (a typo, a relabelled
    file) names the row and the allowed values instead of becoming a cell of its own."""
    for benchmark, row, field in (("ui_vision", _row(0, group="Basic", point=(5, 5)), "group"),
                                  ("mmbench_gui", _row(0, group="os_web", ui_type="expert", point=(5, 5)), "ui_type"),
                                  ("mmbench_gui", _row(0, group="web", ui_type="basic", point=(5, 5)), "group")):
        with pytest.raises(PredictionFileError, match=f"field '{field}'.*is not a .* (setting|platform|level)") as e:
            _score(tmp_path, [row], benchmark)
        assert ":1" in str(e.value)
    polygon = _row(0, group="mobile", ui_type="text", polygon=L_SHAPE, point=(5, 5))
    with pytest.raises(PredictionFileError, match="field 'gt_polygon'.*makes this a OSWorld-G row"):
        _score(tmp_path, [polygon], "screenspot")


@pytest.mark.parametrize(("source", "average", "keep", "preset"), [
    ("ui_vision", "final_avg", {"basic"}, "uivenus15"),
    ("ui_vision", "final_avg", {"basic", "spatial"}, "uivenus15"),
    ("mmbench_gui", "average", {"os_windows-basic", "os_web-basic"}, "infigui_g1"),
])
def test_average_over_missing_settings_is_absent_and_never_reproduced(source, average, keep, preset, request,
                                                                       tmp_path):
    """A run that scored only some settings (UI-Vision) or levels (MMBench-GUI) of the benchmark (issue 50 item
    7): its paper's mean over all of them is null in ``eval --json`` with the reason (``absent``), printed, and
    ``eval-compare --official`` shows no number for it and never says "reproduced", though every row hit."""
    steps = [s for s in iter_steps(convert(source, request.getfixturevalue(source), tmp_path / "unified"))
             if s.group in keep or f"{s.group}-{s.ui_type}" in keep]
    rows = [{"id": s.id, "instruction": s.instruction, **gold_columns(s), "group": s.group, "ui_type": s.ui_type,
             "pred": _gold_answer(s, False), "resize": {"resized_size": list(s.image_size)}, "backend": "test"}
            for s in steps]
    preds = tmp_path / f"{source}.jsonl"
    preds.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "run.json"
    r = runner.invoke(app, ["eval", "--predictions", str(preds), "--benchmark", source, "--json", str(out)])
    assert r.exit_code == 0, r.output
    result = json.loads(out.read_text())
    assert result["metrics"]["overall"] == 1.0 and result["metrics"][average] is None
    assert "no rows of the" in result["absent"][average] and f"{average} absent: no rows of the" in r.output
    result["data"]["preset"] = preset  # as eval --preset records it
    out.write_text(json.dumps(result))
    r = runner.invoke(app, ["eval-compare", str(out), "--official"])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("| ") and f"`{average}`" in ln]
    assert lines, r.output
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[3:6] == ["-", "-", "no"] and "no rows of the" in cells[8], line
    result.pop("absent")  # a report written before eval recorded why: the nulls of its settings say it
    result["metrics"][average] = 1.0
    out.write_text(json.dumps(result))
    r = runner.invoke(app, ["eval-compare", str(out), "--official"])
    assert r.exit_code == 0 and "| yes |" not in r.output and "no rows of the" in r.output, r.output


@pytest.mark.parametrize("source", list(CONVERT_INPUTS))
def test_infer_reads_the_benchmark_from_converted_rows(source, request, tmp_path):
    """A converted file named after nothing: its rows' source decides the benchmark, so a preset with a prompt of
    its own for the benchmark (GUI-Owl-1.5's refusal sentence on OSWorld-G) sends that one."""
    path = convert(source, request.getfixturevalue(source), tmp_path, name="mine")
    r = runner.invoke(app, ["infer", "--backend", "hf", "--model", "m", "--input", str(path), "--output",
                            str(tmp_path / "never.json"), "--preset", "guiowl15", "--dry-run"])
    assert r.exit_code == 0, r.output
    assert f"benchmark {source}" in r.output and f"its rows' source '{source}'" in r.output, r.output
    rows = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    template = "guiowl15-grounding-refusal" if source == "osworld_g" else "guiowl15-grounding"
    assert rows and {row["template"] for row in rows} == {template}
