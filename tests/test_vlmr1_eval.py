"""VLM-R1's evaluation entry points (``VLM-R1/src/eval/test_rec_r1.py``, ``test_rec_baseline.py``) over ``core``.

Real rows from ``../shared/data`` (the 4-step AitZ episode, scored as AndroidControl-high navigation) are
converted to unified parquet and evaluated with two tiny random Qwen2.5-VL models standing in for the base
model (seed 0) and the trained checkpoint (seed 1): predictions, per-run reports and one comparison are written,
a rerun resumes instead of predicting again, and bad ``--bench`` values are usage errors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.data.cli import run_convert

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
EVAL = REPO / "VLM-R1" / "src" / "eval"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data folder {DATA} is absent")


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run([sys.executable, str(EVAL / script), *args], cwd=REPO, env=env, capture_output=True,
                          text=True)


@pytest.fixture(scope="module")
def benches(tmp_path_factory) -> list[str]:
    nav, _ = run_convert("aitw", "unified", DATA / "aitz", tmp_path_factory.mktemp("bench"), name="aitz")
    return [f"androidcontrol_high={nav}"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_checkpoint_and_base_are_evaluated_and_compared(benches, tmp_path):
    from core.testing import tiny_qwen25vl_path

    base = str(tiny_qwen25vl_path())
    trained = tmp_path / "trained"
    subprocess.run([sys.executable, "-m", "core", "tiny-model", "--output", str(trained), "--seed", "1"], cwd=REPO,
                   check=True, capture_output=True)
    out = tmp_path / "eval"
    bench_args = [a for b in benches for a in ("--bench", b)]
    infer_args = ["--max-new-tokens", "8", "--batch-size", "4"]

    proc = _run("test_rec_baseline.py", "--model", base, *bench_args, "--out", str(out), *infer_args)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    baseline = _lines(out / "baseline" / "predictions" / "androidcontrol_high_test.json")
    assert len(baseline) == 4 and {r["model"] for r in baseline} == {base}

    proc = _run("test_rec_r1.py", "--model", str(trained), "--base-model", base, *bench_args, "--out", str(out),
                *infer_args)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert _lines(out / "baseline" / "predictions" / "androidcontrol_high_test.json") == baseline  # resumed
    trained_rows = _lines(out / "r1" / "predictions" / "androidcontrol_high_test.json")
    assert len(trained_rows) == 4 and {r["model"] for r in trained_rows} == {str(trained)}
    for run in ("baseline", "r1"):
        report = json.loads((out / run / "eval" / "report.json").read_text())
        assert report["name"] == run and set(report["results"]) == {"androidcontrol_high"}
    compare = (out / "compare.md").read_text()
    assert compare.splitlines()[0] == "| Benchmark | Metric | baseline | r1 | Δ |"
    assert {line.split(" | ")[1] for line in compare.splitlines()[2:]} == {"type", "gr", "sr"}


def test_bad_bench_is_a_usage_error(benches, tmp_path):
    for spec, message in (("screenspot", "expected NAME=FILE"), ("nope=x.parquet", "unknown benchmark 'nope'"),
                          (f"screenspot={tmp_path / 'missing.parquet'}", "does not exist")):
        proc = _run("test_rec_baseline.py", "--model", "m", "--bench", spec, "--out", str(tmp_path))
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
