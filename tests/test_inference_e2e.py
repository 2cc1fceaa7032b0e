"""End to end on CPU: the tiny Qwen2.5-VL through the HF backend over real screenshots converted to benchmark
files (GUI-R1 layout and the unified parquet of ``gui-agent data convert``), via the real CLI in subprocesses:
row limit then resume, SIGKILL mid-run then resume, the experiment script, and ``gui-agent eval`` on the output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.inference.bench import write_guir1_benchmark

pytestmark = [pytest.mark.rl_env, pytest.mark.slow]
pytest.importorskip("transformers")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture(scope="module")
def tiny_model() -> str:
    from core.testing import tiny_qwen25vl_path

    return str(tiny_qwen25vl_path())


@pytest.fixture(scope="module")
def bench_dir(shared_data, tmp_path_factory) -> Path:
    """``androidcontrol_high_test.parquet`` (GUI-R1 layout, the AitZ episode) and ``screenspot_test.parquet``
    (unified, from ``data convert`` of the ScreenSpot rows whose screenshots exist)."""
    from core.data.cli import run_convert

    d = tmp_path_factory.mktemp("bench")
    aitz = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    write_guir1_benchmark(aitz, d / "androidcontrol_high_test.parquet")
    written, summary = run_convert("screenspot", "unified", DATA / "screenspot" / "screenspot_v1_annotations.jsonl",
                                   d / "converted", images_dir=DATA / "screenspot" / "images", skip_missing=True)
    assert summary.written == 4
    Path(written).rename(d / "screenspot_test.parquet")
    return d


def infer(model: str, inp: Path, out: Path, *extra: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "core", "infer", "--backend", "hf", "--model", model, "--input", str(inp),
           "--output", str(out), "--device", "cpu", *extra]
    proc = subprocess.run(cmd, cwd=REPO, env=ENV, check=False, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_limit_then_resume_then_eval(tiny_model, bench_dir, tmp_path):
    out = tmp_path / "androidcontrol_high_test.json"
    first = infer(tiny_model, bench_dir / "androidcontrol_high_test.parquet", out, "--limit", "2",
                  "--max-new-tokens", "8", "--batch-size", "2")
    assert "2 new rows" in first.stdout
    before = out.read_bytes()
    second = infer(tiny_model, bench_dir / "androidcontrol_high_test.parquet", out, "--max-new-tokens", "8",
                   "--batch-size", "2")
    assert "2 new rows" in second.stdout and "2 already there" in second.stdout
    assert out.read_bytes().startswith(before)  # appended, earlier rows untouched
    got = rows(out)
    assert [r["id"].rsplit(":", 1)[1] for r in got] == ["0", "1", "2", "3"]
    for r in got:
        assert r["error"] is None and isinstance(r["pred"], str)
        assert r["resize"] == {"min_pixels": 3136, "max_pixels": 1258291, "factor": 28, "resized_size": [280, 588]}
        assert r["template"] == "guir1-high" and r["image_size"] == [270, 600] and r["backend"] == "hf"
    assert [r["gt_action"] for r in got] == ["press_home", "scroll", "click", "complete"]
    # a different resize must not be appended to the same file
    bad = infer(tiny_model, bench_dir / "androidcontrol_high_test.parquet", out, "--max-pixels", "500000",
                check=False)
    assert bad.returncode == 2 and "max_pixels 1258291 -> 500000" in bad.stderr
    report = tmp_path / "eval.json"
    ev = subprocess.run([sys.executable, "-m", "core", "eval", "--predictions", str(out), "--benchmark",
                         "androidcontrol_high", "--json", str(report)], cwd=REPO, env=ENV, check=False, capture_output=True,
                        text=True)
    assert ev.returncode == 0, ev.stderr[-2000:]
    assert json.loads(report.read_text())["n_rows"] == 4


def test_killed_run_resumes_without_duplicates(tiny_model, bench_dir, tmp_path):
    inp = bench_dir / "screenspot_test.parquet"
    out = tmp_path / "screenspot_test.json"
    cmd = [sys.executable, "-m", "core", "infer", "--backend", "hf", "--model", tiny_model, "--input", str(inp),
           "--output", str(out), "--device", "cpu", "--batch-size", "1", "--max-new-tokens", "48"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        while proc.poll() is None:  # until the first row is written (or the run ends: then the assert below fails)
            if out.exists() and out.read_bytes().count(b"\n") >= 1:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    n_before = len(rows(out))
    assert 1 <= n_before < 4
    res = infer(tiny_model, inp, out, "--batch-size", "1", "--max-new-tokens", "48")
    assert f"{4 - n_before} new rows" in res.stdout
    got = rows(out)
    ids = [r["id"] for r in got]
    assert len(ids) == 4 == len(set(ids))
    for r in got:  # ScreenSpot 2560x1440 RGBA, resized under GUI-R1's training cap
        assert r["template"] == "guir1-grounding" and r["image_size"] == [2560, 1440]
        w, h = r["resize"]["resized_size"]
        assert w * h <= 1258291 and w % 28 == 0 and h % 28 == 0
        assert len(r["gt_bbox"]) == 4 and r["group"] == "web"
    ev = subprocess.run([sys.executable, "-m", "core", "eval", "--predictions", str(out), "--benchmark",
                         "screenspot"], cwd=REPO, env=ENV, check=False, capture_output=True, text=True)
    assert ev.returncode == 0, ev.stderr[-2000:]


def test_experiment_script_names_files_like_guir1(tiny_model, bench_dir, tmp_path):
    env = {**ENV, "MODEL_PATH": tiny_model, "DATA_DIR": str(bench_dir), "OUT_DIR": str(tmp_path / "pred"),
           "BACKEND": "hf", "PROMPT": "guir1", "INFER_ARGS": "--max-new-tokens 4 --limit 2 --device cpu"}
    proc = subprocess.run(["bash", str(REPO / "experiments" / "guir1" / "inference.sh")], cwd=tmp_path, env=env,
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    pred_dir = tmp_path / "pred" / Path(tiny_model).name
    shown = sorted(p.name for p in pred_dir.iterdir() if not p.name.startswith("."))  # hidden: the run records
    assert shown == ["androidcontrol_high_test.json", "screenspot_test.json"]
    assert "skip guiodyssey" in proc.stdout
    assert proc.stderr.count("backend ready for 2 file(s)") == 1, proc.stderr  # one model load for every file
    assert {r["template"] for r in rows(pred_dir / "androidcontrol_high_test.json")} == {
        "guir1-inference-androidcontrol"}
    assert {r["template"] for r in rows(pred_dir / "screenspot_test.json")} == {"guir1-inference-screenspot"}
    rep = subprocess.run([sys.executable, "-m", "core", "eval-report", "--pred-dir", str(pred_dir), "--out",
                          str(tmp_path / "report"), "--no-plots", "--no-gallery"], cwd=REPO, env=ENV,
                         check=False, capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr[-2000:]
    assert (tmp_path / "report" / "report.json").is_file()
