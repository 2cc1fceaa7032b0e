"""``infer --preset`` picks the authors' prompt by the benchmark the file holds, read from the file, never guessed
from its name (issue 38, item 2): a ScreenSpot file converted as docs/data.md shows gets the grounding prompt; a
file that does not decide the prompt is one error line naming ``--benchmark``; a name that contradicts the rows is
refused."""

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

from core.inference.bench import input_benchmark, write_guir1_benchmark
from core.presets import AmbiguousBenchmark, get_preset

REPO = Path(__file__).resolve().parents[1]


def gui_agent(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's core, whatever is installed
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=REPO, capture_output=True, text=True,
                          check=False, env=env)


@pytest.fixture(scope="module")
def files(shared_data, tmp_path_factory) -> dict[str, Path]:
    """The ScreenSpot file as docs/data.md converts it, and the AitZ episode in GUI-R1's layout under a name that
    says nothing (navigation rows, no benchmark field)."""
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary

    d = tmp_path_factory.mktemp("bench")
    r = gui_agent("data", "convert", "--from", "screenspot", "--to", "unified", "--input",
                  str(shared_data / "screenspot" / "screenspot_v1_annotations.jsonl"), "--images",
                  str(shared_data / "screenspot" / "images"), "--skip-missing", "--output", str(d / "converted"))
    assert r.returncode == 0, r.stderr
    steps = list(READERS["aitw"](shared_data / "aitz", summary=ConversionSummary()))
    write_guir1_benchmark(steps, d / "aitz_episode.parquet")
    screens = list(READERS["screenspot"](shared_data / "screenspot" / "screenspot_v1_annotations.jsonl",
                                         images_dir=shared_data / "screenspot" / "images", skip_missing=True,
                                         summary=ConversionSummary()))
    write_guir1_benchmark(screens + steps, d / "mixed.parquet")  # task_type grounding next to episodes
    write_guir1_benchmark(screens, d / "grounding_set.parquet")
    table = pq.read_table(d / "grounding_set.parquet")  # GUI-R1's layout where task_type says nothing (low)
    table = table.set_column(table.schema.get_field_index("task_type"), "task_type",
                             pa.array(["low"] * table.num_rows))
    pq.write_table(table, d / "grounding_set.parquet")
    return {"screenspot": d / "converted" / "screenspot_v1_annotations.parquet",
            "navigation": d / "aitz_episode.parquet", "grounding": d / "grounding_set.parquet",
            "mixed": d / "mixed.parquet", "dir": d}


def dry_run(path: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    r = gui_agent("infer", "--backend", "baseline", "--model", "centre", "--input", str(path), "--output",
                  str(path.with_suffix(".json")), "--dry-run", *args)
    return r, [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []


def test_screenspot_file_as_data_md_converts_it_gets_the_grounding_prompt(files):
    r, rows = dry_run(files["screenspot"], "--preset", "guir1")
    assert r.returncode == 0, r.stderr
    assert rows and {row["template"] for row in rows} == {"guir1-inference-screenspot"}
    assert {row["resize"]["max_pixels"] for row in rows} == {2_097_152}  # GUI-R1's ScreenSpot bound


def test_navigation_rows_that_name_no_benchmark_are_one_line_naming_benchmark(files):
    r, _ = dry_run(files["navigation"], "--preset", "guir1")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith("error: --input ") and "pass --benchmark NAME" in r.stderr, r.stderr
    assert not files["navigation"].with_suffix(".json").exists()
    r, rows = dry_run(files["navigation"], "--preset", "guir1", "--benchmark", "guiodyssey")
    assert r.returncode == 0, r.stderr
    assert {row["template"] for row in rows} == {"guir1-inference-guiodyssey"}
    r, rows = dry_run(files["navigation"], "--preset", "os_atlas")  # one navigation prompt: nothing to guess
    assert r.returncode == 0, r.stderr
    assert {row["template"] for row in rows} == {"os-atlas-android"}


def test_a_file_name_that_contradicts_the_rows_is_refused(files):
    named = files["dir"] / "androidcontrol_low_test.parquet"
    shutil.copy(files["screenspot"], named)
    r, _ = dry_run(named, "--preset", "guir1")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr  # one line, however long the path
    assert "androidcontrol_low (navigation) but its rows are grounding rows" in r.stderr
    assert "--benchmark" in r.stderr
    r, rows = dry_run(named, "--preset", "guir1", "--benchmark", "screenspot_pro")  # the user says which
    assert r.returncode == 0 and {row["template"] for row in rows} == {"guir1-inference-screenspot"}, r.stderr


def test_benchmark_needs_a_preset_and_a_known_name(files):
    r, _ = dry_run(files["screenspot"], "--benchmark", "screenspot")
    assert r.returncode == 2 and "only with --preset" in r.stderr
    r, _ = dry_run(files["screenspot"], "--preset", "guir1", "--benchmark", "screenspot_v9")
    assert r.returncode == 2 and "unknown benchmark 'screenspot_v9'" in r.stderr


def test_rows_decide_the_kind(files):
    found = input_benchmark(files["screenspot"])
    assert (found.name, found.kind) == ("screenspot", "grounding") and "source 'screenspot'" in found.evidence
    found = input_benchmark(files["grounding"])  # GUI-R1 layout: no history and a target box on every row
    assert (found.name, found.kind) == (None, "grounding")
    assert get_preset("guir1").template_for_file(found.name, found.kind) == "guir1-inference-screenspot"
    found = input_benchmark(files["navigation"])  # first step without history, then steps with history
    assert (found.name, found.kind) == (None, "navigation")
    with pytest.raises(ValueError, match="no navigation prompt"):
        get_preset("uground").template_for_file(None, "navigation")
    found = input_benchmark(files["mixed"])
    assert (found.name, found.kind) == (None, None)  # grounding rows and episodes in one file
    with pytest.raises(AmbiguousBenchmark, match="--benchmark"):
        get_preset("guir1").template_for_file(found.name, found.kind)
    assert get_preset("guir1").template_for_file(None, "grounding") == "guir1-inference-screenspot"
