"""Issue 12, the hostile probe: each case is the probe's repro, on real data from ../shared/data where it
applies. Readers and the Step schema: bad input is a named row error (record + field), never a crash and never
silently wrong data.

This module is long (over 500 lines) on purpose: it holds the whole probe, one test per repro in the probe's order,
so each finding can be checked against its test in one place."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from core.actions import Action
from core.data.ingest import read
from core.data.ingest._common import image_pixel_limit, set_image_pixel_limit
from core.data.ingest.guir1 import file_frame
from core.data.summary import ConversionSummary
from core.data.unified import UNIFIED_SCHEMA, step_to_row
from core.schema import Step, StepValidationError

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if not DATA.is_dir():
    pytest.skip(f"real data folder {DATA} is absent", allow_module_level=True)

AITZ = DATA / "aitz" / "GOOGLE_APPS-523638528775825151"
SHOT = AITZ / "GOOGLE_APPS-523638528775825151_2.png"  # 270x600
MIND2WEB = DATA / "mind2web" / "mind2web_data_test_task.json"
ODYSSEY = DATA / "guiodyssey"
SCREENSPOT_V1 = DATA / "screenspot" / "screenspot_v1_annotations.jsonl"
GUIR1_SCHEMA = pa.schema([
    ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])), ("instruction", pa.string()),
    ("gt_action", pa.string()), ("gt_bbox", pa.list_(pa.float64())), ("gt_input_text", pa.string()),
    ("id", pa.int64()),
])


def run(source, path, **kw):
    summary = ConversionSummary()
    return list(read(source, Path(path), summary=summary, **kw)), summary


def one_error(source, path, **kw) -> StepValidationError:
    with pytest.raises(StepValidationError) as e:
        run(source, path, **kw)
    return e.value


def aitz_steps() -> list[Step]:
    return run("aitw", DATA / "aitz")[0]


# ------------------------------------------------------------------ silent corruption 1: GUI-R1 frame vote


def guir1_file(tmp_path: Path, boxes, name="train.parquet", **columns) -> Path:
    raw = SHOT.read_bytes()
    rows = [{"image": {"bytes": raw, "path": None}, "instruction": "open the clock app", "gt_action": "click",
             "gt_bbox": box, "gt_input_text": "no input text", "id": i} for i, box in enumerate(boxes)]
    schema = GUIR1_SCHEMA
    for name_, type_ in columns.items():
        schema = schema.set(schema.get_field_index(name_), pa.field(name_, type_))
        for row in rows:
            row[name_] = json.dumps(row[name_]) if type_ == pa.string() else row[name_]
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / name)
    return tmp_path / name


def test_one_out_of_range_row_does_not_rescale_a_normalized_guir1_file(tmp_path):
    boxes = [[0.1 + i * 0.01, 0.2, 0.15 + i * 0.01, 0.3] for i in range(39)] + [[0.5, 0.9, 0.6, 1.0001]]
    path = guir1_file(tmp_path, boxes)
    frame = file_frame(path)
    assert (frame.frame, frame.in_range, frame.above_one) == ("normalized", 39, 1)
    err = one_error("guir1", path)
    assert err.record == "train:39" and err.field == "gt_bbox" and "above 1 in a normalized file" in err.reason
    steps, summary = run("guir1", path, skip_missing=True)
    assert len(steps) == 39 and summary.skipped == {"invalid gt_bbox": 1}
    assert steps[0].bbox == pytest.approx((0.1 * 270, 0.2 * 600, 0.15 * 270, 0.3 * 600))  # scaled, not pixels
    assert any("39 rows in [0, 1], 1 above 1" in n for n in summary.notes)


def test_guir1_coords_flag_forces_the_frame(tmp_path):
    path = guir1_file(tmp_path, [[0.1, 0.2, 0.5, 0.6], [1.0, 2.0, 100.0, 200.0]])  # a tie votes pixels
    assert file_frame(path).frame == "pixels"
    assert one_error("guir1", path).record == "train:0"  # the normalized-looking row is named
    steps, summary = run("guir1", path, coords="pixels")
    assert [s.bbox for s in steps] == [(0.1, 0.2, 0.5, 0.6), (1.0, 2.0, 100.0, 200.0)]
    assert any("forced by --coords" in n for n in summary.notes)
    err = one_error("guir1", path, coords="normalized")  # 100 x 270 px is outside the image: a named error
    assert err.record == "train:1" and err.field == "bbox"
    with pytest.raises(ValueError, match="--coords applies to --from guir1 only"):
        run("aitw", DATA / "aitz", coords="pixels")


def test_guir1_gt_bbox_stored_as_a_string(tmp_path):
    path = guir1_file(tmp_path, [[0.1, 0.2, 0.5, 0.6], "not a box"], gt_bbox=pa.string())
    assert file_frame(path).frame == "normalized"  # the vote reads the JSON strings, skips the bad one
    err = one_error("guir1", path)
    assert err.record == "train:1" and err.field == "gt_bbox" and "got 'not a box'" in err.reason
    steps, _ = run("guir1", path, skip_missing=True)
    assert steps[0].bbox == pytest.approx((27.0, 120.0, 135.0, 360.0))


# ------------------------------------------------------------ silent corruption 2: paths, decode, NaN


def unified_file(tmp_path: Path, rows: list[dict], name="u.parquet") -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=UNIFIED_SCHEMA), tmp_path / name)
    return tmp_path / name


@pytest.mark.parametrize("path", ["/etc/passwd", "../../etc/passwd", "images/../../outside.png"])
def test_unified_image_path_cannot_leave_the_dataset_root(tmp_path, path):
    (tmp_path / "outside.png").write_bytes(SHOT.read_bytes())  # a real image, but outside the dataset folder
    root = tmp_path / "ds"
    root.mkdir()
    row = step_to_row(aitz_steps()[2]) | {"image": {"bytes": None, "path": path}, "id": "smuggled"}
    err = one_error("unified", unified_file(root, [row]))
    assert err.record == "smuggled" and err.field == "image" and err.reason.startswith("image outside root")
    _, summary = run("unified", root / "u.parquet", skip_missing=True)
    assert summary.skipped == {"image outside root": 1}


def test_unified_image_path_inside_the_root_must_decode(tmp_path):
    step = aitz_steps()[2]
    (tmp_path / "images").mkdir()
    shutil.copy(SHOT, tmp_path / "images" / "shot.png")
    (tmp_path / "images" / "notes.png").write_text("root:x:0:0:root:/root:/bin/bash\n")
    rows = [step_to_row(step) | {"image": {"bytes": None, "path": "images/shot.png"}, "id": "good"},
            step_to_row(step) | {"image": {"bytes": None, "path": "images/notes.png"}, "id": "text"}]
    path = unified_file(tmp_path, rows)
    steps, summary = run("unified", path, skip_missing=True)
    assert [s.id for s in steps] == ["good"] and steps[0].image == str(tmp_path / "images" / "shot.png")
    assert summary.skipped == {"corrupt image": 1} and summary.examples["corrupt image"] == ["text"]
    # --images is the root instead of the parquet's folder
    steps, _ = run("unified", path, images_dir=tmp_path / "images", skip_missing=True)
    assert steps == []


def test_native_reader_never_opens_a_path_outside_its_roots(tmp_path):
    rec = json.loads(SCREENSPOT_V1.read_text().splitlines()[0])
    rec["image"] = "../../../../../../../../etc/passwd"
    (tmp_path / "a.jsonl").write_text(json.dumps(rec) + "\n")
    err = one_error("screenspot", tmp_path / "a.jsonl")
    assert err.field == "image" and err.reason.startswith("image outside root") and "etc/passwd" in err.reason
    # a dataset written on another machine (absolute path) still finds the image by base name under --images
    rec["image"] = f"/home/author/data/{SHOT.name}"
    rec["bbox"] = [10, 10, 20, 20]
    (tmp_path / "b.jsonl").write_text(json.dumps(rec) + "\n")
    (step,), _ = run("screenspot", tmp_path / "b.jsonl", images_dir=AITZ)
    assert step.image == SHOT.read_bytes()


@pytest.mark.parametrize("field,value,where", [
    ("bbox", (1.0, float("nan"), 20.0, 30.0), "bbox"),
    ("action", Action(type="click", point=(float("inf"), 3.0)), "action.point"),
    ("extra", {"scale": [1.0, float("nan")]}, "extra.scale"),
])
def test_step_rejects_non_finite_numbers_everywhere(field, value, where):
    fields = dict(id="s", image=b"x", image_size=(100, 100), instruction="tap", action=Action(type="wait"))
    with pytest.raises(StepValidationError) as e:
        Step.build("row 3", **(fields | {field: value}))
    assert e.value.record == "row 3" and e.value.field == where and "not a finite number" in e.value.reason


def test_nan_box_in_a_guiodyssey_record_is_a_row_error(tmp_path):
    rec = json.loads((ODYSSEY / "navigation_meta_format.json").read_text())
    rec = rec[0] if isinstance(rec, list) else rec
    shutil.copytree(ODYSSEY, tmp_path / "ody")
    (tmp_path / "ody" / "navigation_meta_format.json").write_text(json.dumps([rec | {"bbox": [1, 2, "NaN", 4]}]))
    err = one_error("guiodyssey", tmp_path / "ody")
    assert err.field == "bbox" and "must be a finite number, got 'NaN'" in err.reason


# ------------------------------------------------------------------- images: bombs, truncation, long names


def test_decompression_bomb_is_a_named_row_error_with_a_settable_limit(tmp_path, png_bomb):
    step = aitz_steps()[2]
    bomb = png_bomb
    assert len(bomb) < 100
    row = step_to_row(step) | {"image": {"bytes": bomb, "path": None}, "image_width": 20000,
                               "image_height": 20000, "id": "bomb"}
    path = unified_file(tmp_path, [row])
    err = one_error("unified", path)
    assert err.record == "bomb" and err.reason.startswith("image too large") and "--max-image-pixels" in err.reason
    before = image_pixel_limit()
    try:
        set_image_pixel_limit(400_000_000)
        (got,), _ = run("unified", path)  # the user raised the limit: the header check passes, nothing decoded
        assert got.image_size == (20000, 20000)
        set_image_pixel_limit(270 * 600 - 1)  # and lowered: a real screenshot is now too large
        assert one_error("aitw", DATA / "aitz").reason.startswith("image too large")
    finally:
        set_image_pixel_limit(before)
    with pytest.raises(ValueError, match=">= 1"):
        set_image_pixel_limit(0)


def test_truncated_png_is_a_corrupt_image_even_when_the_header_is_intact(tmp_path):
    episode = tmp_path / "aitz" / AITZ.name
    shutil.copytree(AITZ, episode)
    shot = episode / SHOT.name
    shot.write_bytes(SHOT.read_bytes()[: len(SHOT.read_bytes()) // 2])
    with Image.open(shot) as im:  # the header still reads
        assert im.size == (270, 600)
    err = one_error("aitw", tmp_path / "aitz")
    assert err.field == "image" and err.reason.startswith("corrupt image")


def test_image_name_longer_than_the_filesystem_allows(tmp_path):
    rec = json.loads(SCREENSPOT_V1.read_text().splitlines()[0]) | {"image": "x" * 300 + ".png"}
    (tmp_path / "a.jsonl").write_text(json.dumps(rec) + "\n")
    err = one_error("screenspot", tmp_path / "a.jsonl")
    assert err.field == "image" and "name too long" in err.reason.lower()


# --------------------------------------------------------------- readers: malformed records are named


def test_mind2web_non_dict_items(tmp_path):
    episodes = json.loads(MIND2WEB.read_text())[:2]
    episodes[1]["actions"][0] = "CLICK"
    (tmp_path / "m.json").write_text(json.dumps([5, episodes[1], "x"]))
    _, summary = run("mind2web", tmp_path / "m.json", skip_missing=True)
    assert summary.skipped["invalid record"] == 2 and summary.examples["invalid record"] == ["m.json:0", "m.json:2"]
    assert summary.skipped["invalid actions"] == 1
    assert summary.examples["invalid actions"] == [f"{episodes[1]['annotation_id']}:0"]


def test_guiodyssey_non_dict_items(tmp_path):
    rec = json.loads((ODYSSEY / "navigation_meta_format.json").read_text())
    rec = rec[0] if isinstance(rec, list) else rec
    shutil.copytree(ODYSSEY, tmp_path / "ody")
    bad = [rec | {"messages": ["hello", *rec["messages"]]}, rec | {"images": {"a": 1}}, 7]
    (tmp_path / "ody" / "navigation_meta_format.json").write_text(json.dumps(bad))
    _, summary = run("guiodyssey", tmp_path / "ody", skip_missing=True)
    assert summary.skipped == {"invalid messages[0]": 1, "invalid images": 1, "invalid record": 1}


def test_aitw_step_id_null(tmp_path):
    episode = tmp_path / AITZ.name
    shutil.copytree(AITZ, episode)
    steps = json.loads((episode / f"{AITZ.name}.json").read_text())
    steps[1]["step_id"] = None
    (episode / f"{AITZ.name}.json").write_text(json.dumps(steps))
    err = one_error("aitw", tmp_path)
    assert err.field == "step_id" and "not an integer: None" in err.reason
    kept, summary = run("aitw", tmp_path, skip_missing=True)
    assert len(kept) == 3 and summary.read == 4 and summary.skipped == {"invalid step_id": 1}


@pytest.mark.parametrize("change,field", [
    ({"action": None}, "action"),
    ({"image_width": None}, "image_width"),
    ({"history": "5"}, "history"),
    ({"history": "[5]"}, "history[0]"),
    ({"action": '{"type": "click", "point": [1, 2'}, "action"),
    ({"action": '{"type": "fly"}'}, "action"),
    ({"extra": "[1]"}, "extra"),
])
def test_unified_malformed_columns(tmp_path, change, field):
    row = step_to_row(aitz_steps()[2]) | change | {"id": "r7"}
    err = one_error("unified", unified_file(tmp_path, [row]))
    assert (err.record, err.field) == ("r7", field)


def test_unified_file_without_the_action_column(tmp_path):
    row = step_to_row(aitz_steps()[2])
    schema = UNIFIED_SCHEMA.remove(UNIFIED_SCHEMA.get_field_index("action"))
    pq.write_table(pa.Table.from_pylist([row], schema=schema), tmp_path / "u.parquet")
    err = one_error("unified", tmp_path / "u.parquet")
    assert err.field == "action" and "missing" in err.reason


def test_invalid_utf8_and_json_lines_name_file_and_line(tmp_path):
    lines = SCREENSPOT_V1.read_bytes().splitlines()[:5]
    lines[0] = b'{"instruction": "caf\xe9"}'
    lines[3] = b"{not json"
    (tmp_path / "s.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    err = one_error("screenspot", tmp_path / "s.jsonl")
    assert err.record == "s.jsonl:1" and "not UTF-8" in err.reason
    _, summary = run("screenspot", tmp_path / "s.jsonl", skip_missing=True)
    assert summary.read == 5 and summary.examples["invalid record"] == ["s.jsonl:1", "s.jsonl:4"]
    (tmp_path / "m.json").write_bytes(b'[{"a": 1},\n\n{"b": "\xff"}]')
    err = one_error("mind2web", tmp_path / "m.json")
    assert err.record == "m.json:3" and "not UTF-8" in err.reason


def test_numbers_that_do_not_fit_name_their_field(tmp_path):
    rec = json.loads(SCREENSPOT_V1.read_text().splitlines()[0])
    (tmp_path / "a.jsonl").write_text(json.dumps(rec | {"bbox": [10**400, 1, 2, 3]}) + "\n")
    err = one_error("screenspot", tmp_path / "a.jsonl")
    assert err.field == "bbox" and "must be a finite number, got an integer of 1329 bits" in err.reason
    episode = tmp_path / "ep"
    shutil.copytree(AITZ, episode)
    steps = json.loads((episode / f"{AITZ.name}.json").read_text())
    steps[0]["result_action_type"] = 1e400  # json reads it as inf
    (episode / f"{AITZ.name}.json").write_text(json.dumps(steps))
    err = one_error("aitw", episode)
    assert err.field == "result_action_type"


def test_every_reader_accepts_the_real_data_unchanged():
    """The guards above reject nothing the real files hold."""
    assert len(run("aitw", DATA / "aitz")[0]) == 4
    assert len(run("guiodyssey", ODYSSEY)[0]) == 1
    assert len(run("screenspot", SCREENSPOT_V1, images_dir=DATA / "screenspot" / "images",
                   skip_missing=True)[0]) == 4
    assert len(run("screenagent", DATA / "screenagent", skip_missing=True)[0]) == 33
    assert len(run("mind2web", MIND2WEB, skip_missing=True)[1].skipped) == 2  # no bbox / no image: as before


# ------------------------------------------------------------------------------- the data CLI: one line, exit 2

ROOT = Path(__file__).resolve().parents[1]


def data_cli(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-m", "core", "data", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=False)


def assert_one_error_line(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and all(n in lines[0] for n in needles), r.stderr


def test_cli_output_errors_are_one_line(tmp_path):
    convert = ("convert", "--from", "aitw", "--to", "unified", "--input", DATA / "aitz")
    r = data_cli(*convert, "--output", tmp_path / ("d" * 300))  # ENAMETOOLONG on the output folder
    assert_one_error_line(r, "File name too long", "(3")
    r = data_cli(*convert, "--output", "/sys/gui-agent-out")  # a place nobody may write, even root
    assert_one_error_line(r, "/sys/gui-agent-out", "not permitted")
    (tmp_path / "file").write_text("keep me")
    r = data_cli(*convert, "--output", tmp_path / "file")  # a file where the output folder must be
    assert_one_error_line(r, "is a file; it must be the output folder")
    assert (tmp_path / "file").read_text() == "keep me"
    r = data_cli(*convert, "--output", tmp_path / "out", "--name", "n" * 300)
    assert_one_error_line(r, "--name is 300 bytes long; at most 200")
    assert not (tmp_path / "out").exists()


def test_cli_bad_record_and_flags(tmp_path):
    boxes = [[0.1, 0.2, 0.15, 0.3]] * 9 + [[0.5, 0.9, 0.6, 1.0001]]
    path = guir1_file(tmp_path, boxes)
    convert = ("convert", "--from", "guir1", "--to", "unified", "--input", path, "--output", tmp_path / "o")
    assert_one_error_line(data_cli(*convert), "record train:9: field 'gt_bbox'", "above 1 in a normalized file")
    assert not list((tmp_path / "o").glob("*.parquet"))
    r = data_cli(*convert, "--skip-missing")
    assert r.returncode == 0 and "read 10, written 9, skipped 1" in r.stdout and "9 rows in [0, 1]" in r.stdout
    r = data_cli(*convert, "--coords", "pixels", "--name", "px")
    assert r.returncode == 0 and "forced by --coords" in r.stdout, r.stderr
    r = data_cli(*convert, "--coords", "sideways")
    assert r.returncode == 2 and "--coords" in r.stderr
    r = data_cli(*convert, "--max-image-pixels", 100_000, "--name", "small")  # the screenshot has 162,000
    assert_one_error_line(r, "record train:0: field 'image': image too large", "exceeds the limit of 100000")


# ------------------------------------------------------- silent corruption 3, 4, 6: locks, resume, overwrite


def test_a_second_convert_to_the_same_output_fails_at_once(tmp_path):
    from core.io import output_lock

    convert = ("convert", "--from", "aitw", "--to", "swift", "--input", DATA / "aitz", "--output", tmp_path,
               "--name", "a")
    with output_lock(tmp_path / "a"):  # another run holds the output
        r = data_cli(*convert)  # it returned while the lock is still held: it did not wait for it
    assert_one_error_line(r, "being written by another run")
    assert not (tmp_path / "a.jsonl").exists()
    assert data_cli(*convert).returncode == 0  # released: the next run proceeds


def test_existing_output_is_not_replaced_without_overwrite(tmp_path):
    common = ("convert", "--to", "unified", "--output", tmp_path, "--name", "data")
    assert data_cli(*common, "--from", "aitw", "--input", DATA / "aitz").returncode == 0
    before = (tmp_path / "data.parquet").read_bytes()
    assert (tmp_path / "data.parquet").stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
    r = data_cli(*common, "--from", "guiodyssey", "--input", ODYSSEY)  # 4 rows would become 1
    assert_one_error_line(r, "data.parquet already exists; pass --overwrite")
    assert (tmp_path / "data.parquet").read_bytes() == before
    r = data_cli(*common, "--from", "guiodyssey", "--input", ODYSSEY, "--overwrite")
    assert r.returncode == 0 and "read 1, written 1" in r.stdout
    assert not list(tmp_path.glob(".data.parquet.*"))  # no temp file left behind


def in_process_cli(*args) -> subprocess.CompletedProcess:
    """``gui-agent`` run in this process (so a test can monkeypatch it), as a CompletedProcess."""
    from typer.testing import CliRunner

    from core.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


def test_resume_refuses_changed_output_shaping_options(tmp_path, monkeypatch):
    import core.data.export.sinks

    monkeypatch.setattr(core.data.export.sinks, "CHECKPOINT_ROWS", 1)  # checkpoint after every row
    rec = json.loads((ODYSSEY / "navigation_meta_format.json").read_text())[0]
    shutil.copytree(ODYSSEY, tmp_path / "ody")
    (tmp_path / "ody" / "navigation_meta_format.json").write_text(json.dumps([rec, rec | {"solution": "[]"}]))
    convert = ("data", "convert", "--from", "guiodyssey", "--to", "swift", "--input", tmp_path / "ody",
               "--output", tmp_path / "out", "--name", "ody")
    r = in_process_cli(*convert, "--max-pixels", 1258291)  # interrupted after one row was checkpointed
    assert_one_error_line(r, "field 'solution'")
    assert (tmp_path / "out" / "ody.jsonl.progress.json").exists()
    r = in_process_cli(*convert, "--max-pixels", 501760, "--template", "guir1-high", "--skip-missing")
    assert_one_error_line(r, "was written with other options", "max_pixels 1258291 -> 501760",
                          "template None -> 'guir1-high'", "--overwrite to start over")
    r = in_process_cli(*convert, "--max-pixels", 1258291, "--skip-missing")  # same options: resumes
    assert r.returncode == 0 and "read 2, written 1, skipped 1" in r.stdout, r.stderr
    assert not (tmp_path / "out" / ".ody.run.json").exists()  # finished: nothing left to resume
    assert_one_error_line(in_process_cli(*convert, "--max-pixels", 1258291, "--skip-missing"), "already exists")
    r = in_process_cli(*convert, "--max-pixels", 501760, "--skip-missing", "--overwrite")
    assert r.returncode == 0
    (row,) = [json.loads(line) for line in (tmp_path / "out" / "ody.jsonl").read_text().splitlines()]
    w, h = row["resized_size"]  # the whole file at the new bound (the first run's 1258291 gives 728x1288)
    assert w * h <= 501760 and row["image_size"] == [720, 1280]


def test_convert_output_inside_its_input_folder_is_refused(tmp_path):
    shutil.copytree(DATA / "aitz", tmp_path / "aitz")
    r = data_cli("convert", "--from", "aitw", "--to", "swift", "--input", tmp_path / "aitz",
                 "--output", tmp_path / "aitz" / "out")
    assert_one_error_line(r, "lies inside --input", "read its own output back")
    assert not (tmp_path / "aitz" / "out").exists()


def test_gallery_lists_a_decompression_bomb_and_unreadable_rows_without_crashing(tmp_path, png_bomb):
    from core.eval.gallery import write_gallery

    (tmp_path / "bomb.png").write_bytes(png_bomb)
    (tmp_path / "shot.png").write_bytes(SHOT.read_bytes())
    rows = [{"id": "bomb", "image_path": str(tmp_path / "bomb.png"), "gt_box": [1, 2, 3, 4], "pred": "x"},
            {"id": "nan", "image_path": "shot.png", "gt_box": [float("nan")] * 4, "pred_point": [1e308, -1e308]},
            {"id": "ok", "image_path": "shot.png", "gt_box": [10, 20, 100, 200], "pred_point": [50, 60]}]
    out = write_gallery(rows, tmp_path / "gallery", image_root=tmp_path)
    page = Path(out["html"]).read_text()
    assert (out["rows"], out["with_image"]) == (3, 2)  # NaN box and a 1e308 point draw (clipped), the bomb not
    assert "screenshot unreadable (DecompressionBombError" in page


def test_eval_with_lone_surrogates_in_model_text_writes_every_report(tmp_path):
    """Model text is stored losslessly: ``\\ud800`` in a prediction never stops eval; the gallery shows its escape
    and the reports are 0644."""
    shot = str(SHOT)
    rows = [{"id": f"r{i}", "instruction": "tap \ud83d", "history": "None", "gt_action": "click",
             "gt_bbox": [0, 0, 10, 10], "gt_input_text": "no input text", "group": "mobile", "ui_type": "text",
             "image_size": [270, 600], "pred": pred, "pred_action": "click", "pred_coord": [50, 50],
             "pred_input_text": "no input text", "image_path": shot}
            for i, pred in enumerate(["<answer>[{'action': 'click', 'point': [5, 5]}]</answer>\ud800", "x\udfff"])]
    pred = tmp_path / "screenspot_test.json"
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "ev"
    r = subprocess.run([sys.executable, "-m", "core", "eval", "--predictions", pred, "--benchmark", "screenspot",
                        "--json", out / "r.json", "--markdown", out / "r.md", "--gallery", out / "g",
                        "--image-root", SHOT.parent],
                       capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    page = (out / "g" / "index.html").read_text()
    assert "x\\udfff" in page and "2 failures; 2 with screenshots" in page
    for path in (out / "r.json", out / "r.md", out / "g" / "index.html", out / "g" / "img" / "00000.png"):
        assert path.stat().st_mode & 0o777 == 0o644, path
    hidden = [p.relative_to(out).as_posix() for p in out.rglob(".*")]
    assert hidden == ["g/.eval-gallery.files.json"]  # no temp file left: only the gallery's manifest


@pytest.mark.parametrize("benchmark", ["screenspot", "androidcontrol_high"])
def test_guir1_eval_on_overflowing_pred_coord(tmp_path, benchmark):
    """``pred_coord`` [1e308, -1e308] or [10**400, 5] is a miss in GUI-R1's mode, and eval-report still writes."""
    rows = [{"id": f"r{i}", "instruction": "tap", "history": "None", "gt_action": "click", "gt_bbox": [0, 0, 10, 10],
             "gt_input_text": "no input text", "group": "mobile", "ui_type": "text", "image_size": [100, 100],
             "pred": "x", "pred_action": "click", "pred_coord": pc, "pred_input_text": "no input text"}
            for i, pc in enumerate([[1e308, -1e308], [10**400, 5], [5, 5]])]
    preds = tmp_path / "preds"
    preds.mkdir()
    (preds / f"{benchmark}_test.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = subprocess.run([sys.executable, "-m", "core", "eval-report", "--pred-dir", preds, "--out", tmp_path / "rep",
                        "--mode", "guir1", "--no-plots"], capture_output=True, text=True, cwd=ROOT,
                       check=False)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    result = json.loads((tmp_path / "rep" / "report.json").read_text())["results"][benchmark]
    counts = result["counts"] if benchmark == "screenspot" else result["counts"]["gr"]
    assert result["n_rows"] == 3 and (counts["hits"], counts["n"]) == (1, 3)  # only [5, 5] hits


# ------------------------------------------------------------------------ gui-agent score: items 5, 6, minors

def score_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", "score", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, check=False)


def test_score_parts_never_shadow_input_columns_and_outputs_are_not_replaced(tmp_path):
    gt = json.dumps({"action": "click", "gt_bbox": [10, 20, 100, 200], "input_text": "no input text",
                     "frame": "resized"})
    answer = "<think></think><answer>[{'action': 'click', 'point': [50, 60], 'input_text': 'no input text'}]</answer>"
    rows = [{"completion": answer + "\ud800", "ground_truth": gt, "extra_info": {"frame": "resized"}}] * 12
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\xff\n", encoding="utf-8", errors="surrogateescape")
    dst = tmp_path / "scored.jsonl"
    r = score_cli("--reward", "gui_agent", "--input", src, "--output", dst)
    assert r.returncode == 0 and "read 13, written 12, skipped 1" in r.stdout, r.stderr
    out = [json.loads(line) for line in dst.read_text().splitlines()]
    assert [row["completion"] for row in out] == [answer + "\ud800"] * 12  # the input column, losslessly
    assert "reward/completion" in out[0] and "reward/overall" in out[0]
    assert dst.stat().st_mode & 0o777 == 0o644
    src.write_text("".join(json.dumps(r) + "\n" for r in rows[:3]))
    r = score_cli("--reward", "gui_agent", "--input", src, "--output", dst)  # 12 rows would become 3
    assert r.returncode == 2 and "already exists; pass --overwrite" in r.stderr and "Traceback" not in r.stderr
    assert len(dst.read_text().splitlines()) == 12
    (tmp_path / f".{dst.name}.0123456789ab.tmp").write_text("left by a killed run")
    r = score_cli("--reward", "gui_agent", "--input", src, "--output", dst, "--overwrite")
    assert r.returncode == 0 and len(dst.read_text().splitlines()) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "scored.jsonl"]  # no temp, no lock left
    r = score_cli("--reward", "gui_agent", "--input", src, "--output", src, "--overwrite")
    assert r.returncode == 2 and "is the --input file" in r.stderr


def test_a_second_score_to_the_same_output_fails_at_once(tmp_path):
    from core.io import output_lock

    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"completion": "x", "ground_truth": "{}"}) + "\n")
    with output_lock(tmp_path / "scored.jsonl"):
        r = score_cli("--input", src, "--output", tmp_path / "scored.jsonl")
    assert r.returncode == 2 and "being written by another run" in r.stderr
    assert not (tmp_path / "scored.jsonl").exists()


def test_exporter_stops_on_an_image_it_cannot_decode_unless_skip_missing(tmp_path):
    """A truncated JPEG passes the header check; the resize decodes it fully and fails: the run stops naming the
    record (as docs/reliability.md says), and only --skip-missing counts it."""
    jpg = sorted((DATA / "screenagent" / "session1" / "images").glob("*.jpg"))[0]
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "cut.jpg").write_bytes(jpg.read_bytes()[:20_000])
    rec = {"img_filename": "cut.jpg", "instruction": "click the start button", "bbox": [0, 700, 40, 40]}
    (tmp_path / "s.jsonl").write_text(json.dumps(rec) + "\n")
    convert = ("convert", "--from", "screenspot", "--to", "swift", "--input", tmp_path / "s.jsonl", "--images",
               tmp_path / "images", "--output", tmp_path / "out", "--max-pixels", 1258291)
    assert_one_error_line(data_cli(*convert), "record s:0: field 'image'", "cannot decode image")
    r = data_cli(*convert, "--skip-missing")  # every record skipped: an error, and no empty output (issue 38, 10)
    assert_one_error_line(r, "every record was skipped (1 read: 1 x bad image", "nothing was written")
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]


# ------------------------------------------------------- round 4: a text field of the wrong type


@pytest.mark.parametrize("value", [["open", "settings"], {"text": "open"}, 7, 2.5, True, False])
def test_screenspot_instruction_of_the_wrong_type_is_refused_like_a_group(tmp_path, value):
    """A ScreenSpot instruction that is a list, object, number or boolean is a row error naming 'instruction' (as a
    list 'group' is), never written as its Python repr ("['open', 'settings']", "True") with exit 0."""
    images = DATA / "screenspot" / "images"
    rec = next(r for r in map(json.loads, SCREENSPOT_V1.read_text().splitlines()) if (images / r["image"]).exists())
    for field, refused in (("group", ["web"]), ("instruction", value)):
        (tmp_path / "s.jsonl").write_text(json.dumps(rec | {field: refused}) + "\n")
        err = one_error("screenspot", tmp_path / "s.jsonl", images_dir=images)
        assert err.field == field and "valid string" in err.reason, err
    r = data_cli("convert", "--from", "screenspot", "--to", "unified", "--input", tmp_path / "s.jsonl", "--images",
                 images, "--output", tmp_path / "out")
    assert_one_error_line(r, "record s:0: field 'instruction'", "valid string")
    assert not list((tmp_path / "out").glob("**/*.parquet"))
