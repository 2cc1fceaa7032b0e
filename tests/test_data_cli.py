"""``gui-agent data ...`` end to end (subprocess, real files from ../shared/data), exit codes, clean rules,
add-solution, and the Data/utils wrappers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.data.clean import Cleaner
from core.data.summary import ConversionSummary
from core.data.unified import UNIFIED_SCHEMA, iter_steps, step_to_row

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
if not DATA.is_dir():
    pytest.skip(f"real data folder {DATA} is absent", allow_module_level=True)
AITZ = DATA / "aitz"
SCREENSPOT_V1 = DATA / "screenspot" / "screenspot_v1_annotations.jsonl"
SHOT = AITZ / "GOOGLE_APPS-523638528775825151" / "GOOGLE_APPS-523638528775825151_2.png"


def cli(*args: str, script: str | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, script] if script else [sys.executable, "-m", "core", "data"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([*cmd, *map(str, args)], capture_output=True, text=True, cwd=ROOT, env=env,
                          check=False)


def test_convert_aitw_to_unified(tmp_path):
    r = cli("convert", "--from", "aitw", "--to", "unified", "--input", AITZ, "--output", tmp_path, "--name", "aitz")
    assert r.returncode == 0, r.stderr
    assert "read 4, written 4, skipped 0" in r.stdout
    steps = list(iter_steps(tmp_path / "aitz.parquet"))
    assert [s.action.type for s in steps] == ["press_home", "scroll", "click", "complete"]
    assert steps[2].image == SHOT.read_bytes()


def test_convert_screenspot_exit_codes(tmp_path):
    images = DATA / "screenspot" / "images"
    r = cli("convert", "--from", "screenspot", "--to", "unified", "--input", SCREENSPOT_V1, "--images", images,
            "--output", tmp_path)
    assert r.returncode == 2
    assert "record screenspot_v1_annotations:0: field 'image': missing image" in r.stderr
    assert not list(tmp_path.glob("*.parquet"))  # nothing half-written under the final name
    r = cli("convert", "--from", "screenspot", "--to", "unified", "--input", SCREENSPOT_V1, "--images", images,
            "--output", tmp_path, "--skip-missing")
    assert r.returncode == 0, r.stderr
    assert "read 1272, written 4, skipped 1268" in r.stdout and "skipped 1268 x missing image" in r.stdout
    assert len(list(iter_steps(tmp_path / "screenspot_v1_annotations.parquet"))) == 4


def test_convert_to_a_training_format_passes_the_options(tmp_path):
    r = cli("convert", "--from", "guiodyssey", "--to", "verl", "--input", DATA / "guiodyssey", "--output", tmp_path,
            "--max-pixels", "1258291", "--name", "odyssey", "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "read 1, written 1, skipped 0" in r.stdout
    assert any(tmp_path.rglob("odyssey*")), list(tmp_path.rglob("*"))


def test_usage_errors_exit_2(tmp_path):
    r = cli("convert", "--from", "nope", "--to", "unified", "--input", AITZ, "--output", tmp_path)
    assert r.returncode == 2 and "unknown source 'nope'" in r.stderr
    r = cli("convert", "--from", "aitw", "--to", "nope", "--input", AITZ, "--output", tmp_path)
    assert r.returncode == 2 and "unknown target 'nope'" in r.stderr
    r = cli("convert", "--from", "aitw", "--to", "unified", "--input", tmp_path / "absent", "--output", tmp_path)
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_inspect_json():
    r = cli("inspect", "--from", "screenagent", "--input", DATA / "screenagent", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["steps"] == 33 and report["task_type"] == {"high": 33}
    assert report["action"]["click"] == 17 and report["action"]["rightclick"] == 6
    assert report["summary"]["skipped"] == {"negative sample": 21, "plan action": 12, "evaluate action": 30}


def test_inspect_reports_guir1_box_convention(tmp_path):
    from test_data_ingest import guir1_row, write_guir1

    write_guir1(tmp_path / "train.parquet", [guir1_row(SHOT, "click", [0.5, 0.4, 0.6, 0.5], id=0)])
    r = cli("inspect", "--from", "guir1", "--input", tmp_path / "train.parquet", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["bbox_convention"] == {"normalized": 1}
    assert any("convention normalized" in n for n in report["notes"])


# ----------------------------------------------------------------------------------------------- clean


def _rows():
    from core.data.ingest import READERS

    steps = list(READERS["aitw"](AITZ, summary=ConversionSummary()))
    click = step_to_row(steps[2])  # 270x600 screenshot, click at (163.9, 299.0)
    base = {**click, "bbox": [100.0, 280.0, 220.0, 320.0]}
    rows = {
        "ok": base,
        "slightly_out": {**base, "bbox": [100.0, 280.0, 273.0, 320.0]},  # 3 px past the right edge: clipped
        "far_out": {**base, "bbox": [100.0, 280.0, 400.0, 320.0]},
        "inverted": {**base, "bbox": [220.0, 280.0, 100.0, 320.0]},
        "empty_instruction": {**base, "instruction": "   "},
        "point_out": {**base, "bbox": None, "action": json.dumps({"type": "click", "point": [163.9, 640.0]})},
        "point_edge": {**base, "bbox": None, "instruction": "tap the bottom",
                       "action": json.dumps({"type": "click", "point": [163.9, 601.0]})},
        "duplicate": dict(base),
        "hotkey": {**base, "instruction": "save", "action_type": "hotkey",
                   "action": json.dumps({"type": "hotkey", "text": "ctrl+s"})},
    }
    # distinct instructions, so that only the row called "duplicate" repeats an (image, instruction) pair
    return [{**row, "id": name, "instruction": row["instruction"] if name in ("ok", "duplicate", "empty_instruction")
             else f"{row['instruction']} ({name})"} for name, row in rows.items()]


def test_cleaner_rules():
    cleaner = Cleaner(summary=ConversionSummary(), actions=frozenset({"click", "scroll"}))
    kept = {s.id: s for s in cleaner.clean_rows(_rows())}
    assert set(kept) == {"ok", "slightly_out", "point_edge"}
    assert kept["slightly_out"].bbox == (100.0, 280.0, 270.0, 320.0)
    assert kept["point_edge"].action.point == (163.9, 600.0)
    assert cleaner.repaired == {"clipped bbox": 1, "clipped point": 1}
    assert cleaner.summary.skipped == {"bbox outside image": 1, "inverted bbox": 1, "empty instruction": 1,
                                       "point outside image": 1, "duplicate": 1, "action not in action space": 1}
    assert cleaner.summary.examples["duplicate"] == ["duplicate"] and cleaner.summary.read == 9


def test_clean_command(tmp_path):
    src = tmp_path / "dirty.parquet"
    pq.write_table(pa.Table.from_pylist(_rows(), schema=UNIFIED_SCHEMA), src)
    out = tmp_path / "clean.parquet"
    r = cli("clean", "--input", src, "--output", out, "--tolerance", "0.02")
    assert r.returncode == 0, r.stderr
    assert "read 9, written 4, skipped 5" in r.stdout and "repaired 1 x clipped bbox" in r.stdout
    assert [s.id for s in iter_steps(out)] == ["ok", "slightly_out", "point_edge", "hotkey"]
    r = cli("clean", "--input", src, "--output", out, "--tolerance", "0", "--actions", "click", "--no-dedupe")
    assert r.returncode == 2 and "clean.parquet already exists; pass --overwrite" in r.stderr
    assert [s.id for s in iter_steps(out)] == ["ok", "slightly_out", "point_edge", "hotkey"]  # kept
    r = cli("clean", "--input", src, "--output", out, "--tolerance", "0", "--actions", "click", "--no-dedupe",
            "--overwrite")
    assert r.returncode == 0, r.stderr
    assert [s.id for s in iter_steps(out)] == ["ok", "duplicate"]


# ----------------------------------------------------------------------------------------------- add-solution


def test_add_solution_guir1(tmp_path):
    from test_data_ingest import guir1_row, write_guir1

    src = write_guir1(tmp_path / "train.parquet", [
        guir1_row(SHOT, "click", [0.5, 0.4, 0.6, 0.5], id=0),
        guir1_row(SHOT, "type", [-100.0, -100.0], "Clock", id=1),
        guir1_row(SHOT, "close/delete", [-100.0, -100.0], id=2),  # no mobile_use equivalent
    ])
    out = tmp_path / "train.solution.parquet"
    r = cli("add-solution", "--input", src, "--output", out)
    assert r.returncode == 0, r.stderr
    assert "read 3, written 3, skipped 0" in r.stdout and "solution_tool_call is null for 1 rows" in r.stdout
    table = pq.read_table(out)
    src_table = pq.read_table(src)
    assert table.column_names == src_table.column_names + ["solution", "solution_tool_call"]
    assert table.column("image").to_pylist() == src_table.column("image").to_pylist()
    sol = table.column("solution").to_pylist()
    # 270x600 under GUI-R1's training resize (within 1,258,291 px) is 280x588: box centre (0.55, 0.45) of it
    assert sol[0] == "<think></think> <answer>[{'action': 'click', 'point': [154, 265], " \
                     "'input_text': 'no input text'}]</answer>"
    assert "'action': 'type', 'point': [-100, -100], 'input_text': 'Clock'" in sol[1]
    tool = table.column("solution_tool_call").to_pylist()
    assert '"action": "click", "coordinate": [550, 450]' in tool[0] and tool[2] is None
    r = cli("add-solution", "--input", src, "--output", out, "--template", "nope", "--overwrite")
    assert r.returncode == 2 and "unknown prompt template 'nope'" in r.stderr
    r = cli("add-solution", "--input", src, "--output", out)
    assert r.returncode == 2 and "train.solution.parquet already exists; pass --overwrite" in r.stderr
    assert pq.read_table(out).column("solution").to_pylist() == sol  # kept


# ----------------------------------------------------------------------------------------------- Data/utils


def test_data_utils_wrappers(tmp_path):
    r = cli("--from", "aitw", "--to", "unified", "--input", AITZ, "--output", tmp_path, "--name", "w",
            script="Data/utils/convert_to_format.py")
    assert r.returncode == 0, r.stderr
    assert len(list(iter_steps(tmp_path / "w.parquet"))) == 4
    r = cli("--input", tmp_path / "w.parquet", "--output", tmp_path / "c.parquet", script="Data/utils/clean_data.py")
    assert r.returncode == 0 and "read 4, written 4" in r.stdout, r.stderr
    r = cli("--from", "aitw", "--input", AITZ, "--output", tmp_path / "sw", script="Data/utils/convert_to_swift_format.py")
    assert r.returncode == 0 and "written 4" in r.stdout, r.stderr
    r = cli("--help", script="Data/utils/add_solution_field.py")
    assert r.returncode == 0 and "--tool-template" in r.stdout
    r = cli("--input", tmp_path / "missing.parquet", "--output", tmp_path / "x.parquet",
            script="Data/utils/add_solution_field.py")
    assert r.returncode == 2


def test_hfd_help():
    r = subprocess.run(["bash", str(ROOT / "Data" / "hfd.sh"), "--help"], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0 and "ritzzai/GUI-R1" in r.stdout and "Data/GUI-R1-3K" in r.stdout
