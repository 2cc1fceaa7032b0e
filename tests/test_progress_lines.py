"""Long work piped to a log prints progress lines (issue 38, item 7): ``core.console.progress_bar`` draws a bar on a
terminal and writes plain lines otherwise, every few percent of a known total and at least every 30 s (a fake
clock here, never wall time); data conversion, inference, rollout, eval and the verl demo data all go through it
(each run below with ``GUI_AGENT_PROGRESS_SECONDS=0``, a line at every update)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.console import PROGRESS_SECONDS, ProgressLines, progress_bar

REPO = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lines_every_five_percent_but_none_while_the_run_is_short():
    clock, out = Clock(), io.StringIO()
    bar = ProgressLines(total=1000, desc="convert", unit=" rows", clock=clock, file=out)
    for _ in range(100):  # 10% in the first 5 s: a short run says nothing
        clock.now += 0.05
        bar.update(1)
    assert out.getvalue() == ""
    for _ in range(900):  # then 0.5 s per row: a line per 5% (50 rows = 25 s)
        clock.now += 0.5
        bar.update(1)
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("convert: 150/1000 rows (15%), ") and "ETA" in lines[0], lines[0]
    assert [int(re.search(r"\((\d+)%\)", line).group(1)) for line in lines] == list(range(15, 101, 5))
    assert lines[-1].startswith("convert: 1000/1000 rows (100%), ") and "ETA" not in lines[-1]


def test_without_a_total_a_line_every_period_and_a_last_line():
    clock, out = Clock(), io.StringIO()
    with ProgressLines(desc="demo", unit="row", clock=clock, file=out, initial=0) as bar:
        for _ in range(100):
            clock.now += 1.0
            bar.update(1)
        bar.set_postfix(success="3/4", refresh=False)
    lines = out.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == ["demo: 30 row", "demo: 60 row", "demo: 90 row", "demo: 100 row"]
    assert lines[-1].endswith("success 3/4") and "1 row/s" in lines[0]
    assert PROGRESS_SECONDS == 30


def test_progress_bar_picks_lines_for_a_pipe_and_nothing_when_disabled(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    assert isinstance(progress_bar(range(3)), ProgressLines)
    assert list(progress_bar(range(3))) == [0, 1, 2]
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert not isinstance(progress_bar(range(3)), ProgressLines)
    assert not isinstance(progress_bar(range(3), enabled=False), ProgressLines)


def run(*args: object) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}
    env.update(PYTHONPATH=str(REPO), GUI_AGENT_PROGRESS_SECONDS="0")
    return subprocess.run([sys.executable, *map(str, args)], cwd=REPO, capture_output=True, text=True, check=False,
                          env=env)


@pytest.fixture(scope="module")
def converted(shared_data, tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("progress")
    r = run("-m", "core", "data", "convert", "--from", "screenspot", "--to", "unified", "--input",
            shared_data / "screenspot" / "screenspot_v1_annotations.jsonl", "--images",
            shared_data / "screenspot" / "images", "--skip-missing", "--output", out)
    return r, out / "screenspot_v1_annotations.parquet"


def test_data_convert_infer_and_eval_print_progress_lines_into_a_pipe(converted, tmp_path):
    r, parquet = converted
    assert r.returncode == 0, r.stderr
    assert re.search(r"^unified screenspot_v1_annotations: 4 step, ", r.stderr, re.M), r.stderr
    pred = tmp_path / "screenspot_test.json"
    r = run("-m", "core", "infer", "--backend", "baseline", "--model", "centre", "--input", parquet, "--output", pred)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^screenspot_test\.json: 4/4 row \(100%\), ", r.stderr, re.M), r.stderr
    r = run("-m", "core", "eval", "--predictions", pred, "--benchmark", "screenspot")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^screenspot \(strict\): 4 rows, ", r.stderr, re.M), r.stderr


def test_rollout_and_the_verl_demo_data_print_progress_lines_into_a_pipe(tmp_path):
    r = run("-m", "core", "rollout", "--policy", "scripted", "--env", "sim-phone", "--tasks", "train",
            "--episodes", "2", "--gallery", "0", "--output", tmp_path / "roll")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^rollout: 2/2 episode \(100%\), .*success", r.stderr, re.M), r.stderr
    r = run("verl/prepare_gui_agent_data.py", "--output_dir", tmp_path / "demo", "--create_demo", "--demo_samples", 2)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^train: 2/2 row \(100%\), ", r.stderr, re.M), r.stderr  # a total: percentages in the log
    assert re.search(r"^test: 1/1 row \(100%\), ", r.stderr, re.M), r.stderr
    assert "wrote " in r.stdout  # the summary line is still on stdout
