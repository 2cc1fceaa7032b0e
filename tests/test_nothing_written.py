"""``--skip-missing`` that skips every record is an error, like a run whose every row failed (issue 38, item 10):
exit 2, one ``error:`` line with the reasons, and no empty output file (nor an output folder the run made, nor a
``dataset_info.json`` entry) left behind. A run that keeps one record still succeeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def gui_agent(*args: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-m", "core", *map(str, args)], cwd=REPO, capture_output=True, text=True,
                          check=False, env=env)


@pytest.fixture
def annotations(shared_data, tmp_path) -> Path:
    """Three ScreenSpot records whose images are nowhere (the file lies away from the images folder)."""
    lines = (shared_data / "screenspot" / "screenspot_v1_annotations.jsonl").read_text().splitlines()[:3]
    path = tmp_path / "ss.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (tmp_path / "no-images").mkdir()
    return path


def assert_refused(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "every record was skipped (3 read: 3 x missing image)" in errors[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("target", ["unified", "llamafactory"])
def test_convert_skipping_every_record_is_an_error_leaving_nothing(annotations, tmp_path, target):
    out = tmp_path / "out"
    r = gui_agent("data", "convert", "--from", "screenspot", "--to", target, "--input", annotations, "--images",
                  tmp_path / "no-images", "--skip-missing", "--output", out)
    assert_refused(r)
    assert not out.exists()  # the folder this run made, empty, is gone too
    assert not (tmp_path / "dataset_info.json").exists()  # llamafactory registers nothing


def test_clean_skipping_every_record_is_an_error_leaving_nothing(annotations, tmp_path):
    out = tmp_path / "clean.parquet"
    r = gui_agent("data", "clean", "--from", "screenspot", "--input", annotations, "--images",
                  tmp_path / "no-images", "--skip-missing", "--output", out)
    assert_refused(r)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["no-images", "ss.jsonl"]


def test_one_record_kept_is_a_result(annotations, shared_data, tmp_path):
    rows = [json.loads(line) for line in annotations.read_text().splitlines()]
    image = next(p for p in (shared_data / "screenspot" / "images").iterdir())
    rows[0]["img_filename"] = image.name
    annotations.write_text("".join(json.dumps(row) + "\n" for row in rows))
    r = gui_agent("data", "convert", "--from", "screenspot", "--to", "unified", "--input", annotations, "--images",
                  image.parent, "--skip-missing", "--output", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "read 3, written 1, skipped 2" in r.stdout
