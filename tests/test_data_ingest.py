"""Readers of every native format, on the real files in ../shared/data (values checked against the raw records)."""

from __future__ import annotations

import io
import json
import math
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from core.data.ingest import READERS, read
from core.data.ingest.guir1 import detect_bbox_convention
from core.data.summary import ConversionSummary
from core.data.unified import UnifiedWriter
from core.schema import StepValidationError

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if not DATA.is_dir():
    pytest.skip(f"real data folder {DATA} is absent", allow_module_level=True)

AITZ = DATA / "aitz" / "GOOGLE_APPS-523638528775825151"
SCREENSPOT_V1 = DATA / "screenspot" / "screenspot_v1_annotations.jsonl"
WEB_IMAGE = DATA / "screenspot" / "images" / "web_6f93090a-81f6-489e-bb35-1a2838b18c01.png"
MIND2WEB = DATA / "mind2web" / "mind2web_data_test_task.json"
ODYSSEY_IMAGE = DATA / "guiodyssey" / "8418572386209486_10.png"


def run(source, path, **kw):
    summary = ConversionSummary()
    steps = list(READERS[source](Path(path), summary=summary, **kw))
    return steps, summary


def test_reader_registry_is_the_contract():
    assert set(READERS) == {"guir1", "screenspot", "aitw", "mind2web", "guiodyssey", "screenagent", "osworld_g",
                            "ui_vision", "mmbench_gui", "unified"}
    with pytest.raises(KeyError, match="known: guir1"):
        read("nope", DATA, summary=ConversionSummary())


# ----------------------------------------------------------------------------------------------- GUI-R1

GUIR1_COLUMNS = pa.schema([
    ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
    ("instruction", pa.string()), ("history", pa.string()), ("gt_action", pa.string()),
    ("gt_bbox", pa.list_(pa.float64())), ("gt_input_text", pa.string()), ("task_type", pa.string()),
    ("group", pa.string()), ("ui_type", pa.string()), ("id", pa.int64()), ("verify_bbox", pa.bool_()),
    ("success_rate", pa.float64()), ("scale", pa.float64()),
])


def guir1_row(image: Path, action, bbox, text="no input text", *, id, instruction="open the clock app",
              history="None", task_type="high"):
    return {"image": {"bytes": image.read_bytes(), "path": None}, "instruction": instruction, "history": history,
            "gt_action": action, "gt_bbox": bbox, "gt_input_text": text, "task_type": task_type,
            "group": "mobile", "ui_type": "text", "id": id, "verify_bbox": True, "success_rate": 0.75,
            "scale": 1.0}


def write_guir1(path: Path, rows, row_group_size=None) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=GUIR1_COLUMNS), path, row_group_size=row_group_size)
    return path


@pytest.fixture
def guir1_train(tmp_path):
    """A train.parquet in GUI-R1's normalized convention, real 270x600 AitZ screenshots."""
    shot = AITZ / "GOOGLE_APPS-523638528775825151_2.png"
    rows = [
        guir1_row(shot, "click", [0.5496, 0.4725, 0.6644, 0.5279], id=0,
                  history="step 1: press_home\nstep 2: scroll down"),
        guir1_row(shot, "click", [0.6070, 0.4984], id=1, task_type="low", instruction="click on the Clock app"),
        guir1_row(shot, "type", [-100.0, -100.0], "Clock", id=2),
        guir1_row(shot, "scroll", [-100.0, -100.0], "down", id=3),
        guir1_row(shot, "press_back", [-100.0, -100.0], id=4),
        guir1_row(shot, "open_app", [-100.0, -100.0], "Clock", id=5),
    ]
    return write_guir1(tmp_path / "train.parquet", rows)


def test_guir1_normalized_train_file(guir1_train):
    steps, summary = run("guir1", guir1_train)
    assert detect_bbox_convention(guir1_train) == "normalized"
    assert any("normalized" in n for n in summary.notes)
    assert summary.read == 6 and summary.n_skipped == 0
    raw = (AITZ / "GOOGLE_APPS-523638528775825151_2.png").read_bytes()
    click, point_click, typ, scroll, back, app = steps
    assert click.image == raw and click.image_size == (270, 600)  # bytes passed through untouched
    assert click.bbox == pytest.approx((0.5496 * 270, 0.4725 * 600, 0.6644 * 270, 0.5279 * 600))
    assert click.action.point == pytest.approx(((0.5496 + 0.6644) / 2 * 270, (0.4725 + 0.5279) / 2 * 600))
    assert click.history_text == "step 1: press_home\nstep 2: scroll down"
    assert click.extra["verify_bbox"] is True and click.extra["success_rate"] == 0.75
    # a 2-number gt_bbox is a point, not a box
    assert point_click.bbox is None and point_click.action.point == pytest.approx((0.6070 * 270, 0.4984 * 600))
    assert point_click.task_type == "low"
    assert typ.action.type == "type" and typ.action.text == "Clock" and typ.bbox is None
    assert scroll.action.direction == "down"
    assert back.action.type == "press_back" and back.action.text is None  # 'no input text' dropped
    assert app.action.text == "Clock"
    assert [s.id for s in steps] == [f"train:{i}" for i in range(6)]
    assert {s.split for s in steps} == {"train"} and {s.source for s in steps} == {"guir1"}


def test_guir1_benchmark_file_in_pixels(tmp_path):
    # ScreenSpot's row for this screenshot, xywh [1940, 116, 432, 68] -> GUI-R1 benchmark layout x1y1x2y2 pixels
    rows = [guir1_row(WEB_IMAGE, "click", [1940.0, 116.0, 2372.0, 184.0], id=7, task_type="low",
                      instruction="input word to search in wikidata")]
    path = write_guir1(tmp_path / "screenspot_test.parquet", rows)
    (step,), summary = run("guir1", path)
    assert detect_bbox_convention(path) == "pixels" and any("original pixels" in n for n in summary.notes)
    assert step.image_size == (2560, 1440)
    assert step.bbox == (1940.0, 116.0, 2372.0, 184.0) and step.action.point == (2156.0, 150.0)
    assert step.id == "screenspot_test:7"


def test_guir1_bad_rows_raise_or_skip(tmp_path):
    shot = AITZ / "GOOGLE_APPS-523638528775825151_0.png"
    rows = [guir1_row(shot, "click", [10.0, 10.0, 400.0, 20.0], id=0),  # wider than the 270 px image
            guir1_row(shot, "click", [20.0, 30.0], id=1),
            guir1_row(shot, "scroll", [-100.0, -100.0], "sideways", id=2),
            guir1_row(shot, "click", [-100.0, -100.0], id=3)]
    rows[1]["image"] = {"bytes": b"\x89PNG\r\n\x1a\n-truncated", "path": None}
    path = write_guir1(tmp_path / "bench.parquet", rows)
    with pytest.raises(StepValidationError) as e:
        run("guir1", path)
    assert e.value.record == "bench:0" and "bbox [10.0, 10.0, 400.0, 20.0] lies outside" in str(e.value)
    steps, summary = run("guir1", path, skip_missing=True)
    assert steps == [] and summary.read == 4
    assert summary.skipped == {"invalid bbox": 1, "corrupt image": 1, "invalid gt_action": 1,
                               "invalid gt_bbox": 1}
    assert summary.examples["corrupt image"] == ["bench:1"]


def test_guir1_streams_record_batches(tmp_path, monkeypatch):
    shot = AITZ / "GOOGLE_APPS-523638528775825151_1.png"
    rows = [guir1_row(shot, "click", [0.1, 0.1, 0.2, 0.2], id=i) for i in range(150)]
    path = write_guir1(tmp_path / "train.parquet", rows, row_group_size=50)

    def no_whole_read(*a, **k):
        raise AssertionError("the reader loaded the whole file")

    monkeypatch.setattr(pq.ParquetFile, "read", no_whole_read)
    monkeypatch.setattr(pq, "read_table", no_whole_read)
    it = READERS["guir1"](path, summary=(summary := ConversionSummary()))
    first = next(it)
    assert first.id == "train:0" and summary.read <= 64  # one batch read, not 150 rows
    assert len(list(it)) == 149 and summary.read == 150


# ----------------------------------------------------------------------------------------------- ScreenSpot


def test_screenspot_v1_skip_missing_counts_and_values():
    steps, summary = run("screenspot", SCREENSPOT_V1, images_dir=DATA / "screenspot" / "images",
                         skip_missing=True)
    assert summary.read == 1272 and len(steps) == 4 and summary.skipped == {"missing image": 1268}
    raw = [json.loads(line) for line in SCREENSPOT_V1.read_text().splitlines()]
    for step in steps:
        rec = raw[int(step.id.split(":")[1])]
        x, y, w, h = rec["bbox"]
        assert step.bbox == (x, y, x + w, y + h)
        assert step.action.type == "click" and step.action.point == (x + w / 2, y + h / 2)
        assert step.instruction == rec["instruction"] and step.ui_type == rec["data_type"]
        assert step.group == "web" and step.task_type == "grounding" and step.image_size == (2560, 1440)
        assert step.image == (DATA / "screenspot" / "images" / rec["image"]).read_bytes()
    assert Image.open(io.BytesIO(steps[0].image)).mode == "RGBA"  # passed through, not converted


def test_screenspot_v1_missing_image_names_the_record():
    with pytest.raises(StepValidationError) as e:
        run("screenspot", SCREENSPOT_V1)
    assert e.value.record == "screenspot_v1_annotations:0" and e.value.field == "image"
    assert "missing image" in str(e.value) and "pc_ede36f9b-1154-4f76-b7f8-c15d7d3f9b6e.png" in str(e.value)


def test_screenspot_pro_style_xyxy_and_size_check(tmp_path):
    recs = [{"img_filename": WEB_IMAGE.name, "bbox": [1464, 7, 1642, 64], "instruction": "switch language",
             "img_size": [2560, 1440], "group": "Web", "ui_type": "text", "application": "wikidata", "id": "p1"},
            {"img_filename": WEB_IMAGE.name, "bbox": [1464, 7, 1642, 64], "instruction": "switch language",
             "img_size": [1920, 1080], "group": "Web", "ui_type": "text", "id": "p2"}]
    ann = tmp_path / "web_pro.json"
    ann.write_text(json.dumps(recs))
    steps, summary = run("screenspot", ann, images_dir=WEB_IMAGE.parent, skip_missing=True)
    assert [s.id for s in steps] == ["web_pro:p1"] and summary.skipped == {"image size mismatch": 1}
    assert steps[0].bbox == (1464, 7, 1642, 64) and steps[0].action.point == (1553.0, 35.5)
    assert steps[0].group == "Web" and steps[0].extra["bbox_format"] == "xyxy"


# ----------------------------------------------------------------------------------------------- AITW / AitZ


def test_aitz_episode_actions_match_raw():
    steps, summary = run("aitw", DATA / "aitz")
    raw = json.loads((AITZ / "GOOGLE_APPS-523638528775825151.json").read_text())
    assert summary.read == 4 and len(steps) == 4
    assert [s.action.type for s in steps] == ["press_home", "scroll", "click", "complete"]
    # step 1: touch y 0.54 -> lift y 0.001, the finger moves up: content scrolls down
    touch, lift = json.loads(raw[1]["result_touch_yx"]), json.loads(raw[1]["result_lift_yx"])
    assert math.dist(touch, lift) > 0.04 and steps[1].action.direction == "down"
    ty, tx = json.loads(raw[2]["result_touch_yx"])
    assert steps[2].image_size == (270, 600)
    assert steps[2].action.point == pytest.approx((tx * 270, ty * 600))
    assert [len(s.history) for s in steps] == [0, 1, 2, 3]
    assert steps[3].history[1].action.type == "scroll"
    assert [h.description for h in steps[3].history] == [r["coat_action_desc"] for r in raw[:3]]
    assert steps[0].instruction == raw[0]["instruction"] and steps[0].id == "523638528775825151:0"
    assert steps[2].image == (AITZ / "GOOGLE_APPS-523638528775825151_2.png").read_bytes()


def test_aitw_action_ids(tmp_path):
    src = json.loads((AITZ / "GOOGLE_APPS-523638528775825151.json").read_text())
    ep = tmp_path / "ep"
    ep.mkdir()
    for p in AITZ.glob("*.png"):
        shutil.copy(p, ep / p.name)
    kinds = [(3, "clock"), (5, ""), (7, ""), (11, ""), (2, "")]
    steps_json = [{**src[0], "step_id": i, "result_action_type": k, "result_action_text": txt}
                  for i, (k, txt) in enumerate(kinds)]
    steps_json.append({**src[2], "step_id": 5, "result_lift_yx": "[0.52, 0.62]"})  # 0.025 apart: a tap
    for i, s in enumerate(steps_json):
        s["image_path"] = f"x/GOOGLE_APPS-523638528775825151_{i % 4}.png"
    (ep / "ep.json").write_text(json.dumps(steps_json))
    with pytest.raises(StepValidationError, match="unknown AITW action id 2"):
        run("aitw", ep)
    steps, summary = run("aitw", ep, skip_missing=True)
    assert [(s.action.type, s.action.text) for s in steps] == [
        ("type", "clock"), ("press_back", None), ("press_enter", None), ("impossible", None), ("click", None)]
    assert summary.skipped == {"invalid result_action_type": 1}
    assert len(steps[-1].history) == 5  # the skipped step still counts in the episode's history


# ----------------------------------------------------------------------------------------------- Mind2Web


def test_mind2web_without_images_counts():
    steps, summary = run("mind2web", MIND2WEB, skip_missing=True)
    assert steps == [] and summary.read == 2094
    assert summary.skipped == {"missing image": 2080, "no target bbox": 14}
    with pytest.raises(StepValidationError) as e:
        run("mind2web", MIND2WEB)
    assert e.value.record == "8f6261cf-d665-4e61-93af-f50f0d366245:f3ae6144-2f6c-407a-b5c2-bcb9d069ad84"


def test_mind2web_with_synthetic_screenshots(tmp_path):
    episode = json.loads(MIND2WEB.read_text())[0]
    for act in episode["actions"][:3]:  # SeeClick's file names, a 1280x720 page each
        Image.new("RGB", (1280, 720), "white").save(tmp_path / f"{episode['annotation_id']}-{act['action_uid']}.jpg")
    steps, summary = run("mind2web", MIND2WEB, images_dir=tmp_path, skip_missing=True)
    assert len(steps) == 3 and summary.skipped["missing image"] == 2080 - 3
    click, typ, option = steps
    b = episode["actions"][1]["bbox"]
    assert typ.action.type == "type" and typ.action.text == "New York"
    assert typ.bbox == (b["x"], b["y"], b["x"] + b["width"], b["y"] + b["height"])
    assert click.action.point == (60.0 + 146.203125 / 2, 163.0 + 17.0)
    assert option.action.type == "click" and option.instruction == episode["confirmed_task"]
    assert [h.description for h in option.history] == episode["action_reprs"][:2]
    assert click.image_size == (1280, 720) and click.group == "web" and click.split == "test_task"


# ----------------------------------------------------------------------------------------------- GUIOdyssey


def test_guiodyssey_chat_record():
    (step,), summary = run("guiodyssey", DATA / "guiodyssey", images_dir=DATA / "nowhere")
    raw = json.loads((DATA / "guiodyssey" / "navigation_meta_format.json").read_text())[0]
    assert summary.read == 1
    assert step.action.type == "click" and step.action.point == (663.0, 1135.0)
    assert step.bbox == tuple(raw["bbox"]) and step.image_size == (720, 1280)
    assert step.image == ODYSSEY_IMAGE.read_bytes()
    assert step.instruction.startswith("Explore a new hiking trail using Mapillary")
    assert step.history_text.startswith("Step 1: Tap on the Mapillary app")
    assert step.history_text.rstrip().endswith("change the location for the weather forecast.")
    assert "## Screenshots" not in step.history_text


def test_guiodyssey_other_functions_and_bad_solution(tmp_path):
    raw = json.loads((DATA / "guiodyssey" / "navigation_meta_format.json").read_text())[0]
    shutil.copy(ODYSSEY_IMAGE, tmp_path / ODYSSEY_IMAGE.name)
    sols = ['[{"Action": {"function": "Type", "text": "Los Angeles"}}]',
            '[{"Action": {"function": "Swipe", "direction": "up"}}]',
            '[{"Action": {"function": "Home"}}]',
            '[{"Action": {"function": "Tap", "point_2d": [900, 10]}}]',  # outside 720 px
            '[{"Action": {"function": "Fly"}}]']
    (tmp_path / "recs.json").write_text(json.dumps([{**raw, "solution": s, "bbox": None} for s in sols]))
    steps, summary = run("guiodyssey", tmp_path, skip_missing=True)
    assert [(s.action.type, s.action.text, s.action.direction) for s in steps] == [
        ("type", "Los Angeles", None), ("scroll", None, "up"), ("press_home", None, None)]
    assert summary.skipped == {"invalid action.point": 1, "invalid solution": 1}


# ----------------------------------------------------------------------------------------------- ScreenAgent


def test_screenagent_sessions():
    steps, summary = run("screenagent", DATA / "screenagent")
    n_neg = len(list((DATA / "screenagent").glob("*/*_neg_*.json")))
    n_files = len(list((DATA / "screenagent").glob("*/*_translate*.json")))
    assert n_neg == 21 and summary.read == n_files
    assert summary.skipped == {"negative sample": 21, "plan action": 12, "evaluate action": 30}
    by_id = {s.id: s for s in steps}
    s = by_id["session1/2023-12-18_00-06-05-511489_translate#0"]
    assert s.action.type == "click" and s.action.point == (10.0, 760.0) and s.image_size == (1024, 768)
    assert s.instruction == "Open File Explorer" and s.group == "desktop"
    assert s.image == (DATA / "screenagent/session1/images/2023-12-18_00-06-05-511489.jpg").read_bytes()
    assert by_id["task010/2024-01-03_16-42-48-715677_translate#0"].action.type == "moveto"
    assert by_id["task010/2024-01-03_16-45-55-035860_translate#0"].action.type == "rightclick"
    assert by_id["365205fc185a4f648c275caa589e0c28/2023-12-19_14-45-23-558402_translate#0"].action.type == \
        "doubleclick"
    assert by_id["365205fc185a4f648c275caa589e0c28/2023-12-19_14-54-12-929969_translate#0"].action.text == "ctrl+s"
    typed = by_id["session45/2023-12-19_16-44-21-078422_translate#0"]
    enter = by_id["session45/2023-12-19_16-44-21-078422_translate#1"]
    assert (typed.action.type, typed.action.text) == ("type", "Hello, world!")
    assert enter.action.type == "press_enter" and enter.history[-1].action == typed.action
    assert len(steps) == 33
    assert by_id["task010/2024-01-03_16-45-55-035860_translate#0"].extra["current_task"] == "右键点击"


# ----------------------------------------------------------------------------------------------- unified


def test_unified_round_trip_and_corrupt_bytes(tmp_path):
    steps, _ = run("aitw", DATA / "aitz")
    with UnifiedWriter(tmp_path / "u.parquet") as w:
        w.write_all(steps)
    back, summary = run("unified", tmp_path / "u.parquet")
    assert back == steps and summary.read == 4
    bad = steps[0].model_copy(update={"image": b"not an image", "id": "broken"})
    with UnifiedWriter(tmp_path / "bad.parquet") as w:
        w.write_all([bad, steps[1]])
    with pytest.raises(StepValidationError, match="record broken: field 'image': corrupt image"):
        run("unified", tmp_path / "bad.parquet")
    kept, summary = run("unified", tmp_path / "bad.parquet", skip_missing=True)
    assert kept == [steps[1]] and summary.skipped == {"corrupt image": 1}


def test_aguvis_pyautogui_conversations(tmp_path):
    shot = AITZ / "GOOGLE_APPS-523638528775825151_1.png"
    shutil.copy(shot, tmp_path / shot.name)
    human = ("<image>\nPlease generate the next move according to the UI screenshot, instruction and previous "
             "actions.\n\nInstruction: open app \"Clock\"\n\nPrevious actions:\nStep 1: press the home button")
    answers = ["Action: tap the Clock icon\n<|recipient|>os\npyautogui.click(x=0.6070, y=0.4984)",
               "<|recipient|>os\nmobile.swipe(from_coord=[0.5074, 0.5411], to_coord=[0.5789, 0.0011])",
               "<|recipient|>os\nos.system('rm -rf /')"]
    recs = [{"image": f"aitw/{shot.name}", "conversations": [{"from": "human", "value": human},
                                                              {"from": "gpt", "value": a}]} for a in answers]
    (tmp_path / "aguvis.json").write_text(json.dumps(recs))
    steps, summary = run("aitw", tmp_path / "aguvis.json", skip_missing=True)
    assert summary.read == 3 and summary.skipped == {"invalid conversations": 1}
    click, scroll = steps
    assert click.action.point == pytest.approx((0.6070 * 270, 0.4984 * 600))
    assert scroll.action.type == "scroll" and scroll.action.direction == "down"
    assert click.instruction == 'open app "Clock"' and click.history_text == "Step 1: press the home button"
