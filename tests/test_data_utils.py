"""The seed's data commands, run exactly as its README writes them: ``cd Data/utils && python <script>.py``.

Each script runs in a subprocess with ``Data/utils`` as the working directory, under the rl environment's
python and under a bare ``python3`` outside any environment (the seed's ``python`` is whatever is on PATH):

* no arguments: the command's usage (options listed, under the script's own name) and exit code 2;
* an unknown option: a usage error naming it, exit 2, no traceback;
* with arguments: the real AitZ episode from ``../shared/data`` converts, cleans, gains solution columns and
  exports to ms-swift's JSONL, and each output holds the 4 real steps.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[1]
UTILS = REPO / "Data" / "utils"
AITZ = REPO.parent / "shared" / "data" / "aitz"
SCRIPTS = ("convert_to_format.py", "convert_to_swift_format.py", "clean_data.py", "add_solution_field.py")
BARE_PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or shutil.which("python3")


def _pythons() -> list[str]:
    pythons = [sys.executable]
    if BARE_PYTHON and Path(BARE_PYTHON).resolve() != Path(sys.executable).resolve():
        pythons.append(BARE_PYTHON)
    return pythons


def _run(python: str, script: str, *args: str) -> subprocess.CompletedProcess:
    # a clean environment: no virtualenv variables, so the bare python is really outside the project's envs
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    return subprocess.run([python, script, *args], cwd=UTILS, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("python", _pythons())
@pytest.mark.parametrize("script", SCRIPTS)
def test_no_arguments_print_usage_and_exit_2(python, script):
    proc = _run(python, script)
    assert proc.returncode == 2, proc.stderr[-2000:]
    out = proc.stdout + proc.stderr
    assert f"Usage: {script} [OPTIONS]" in out
    assert "--input" in out and "--output" in out
    assert "Traceback" not in out


@pytest.mark.parametrize("python", _pythons())
def test_unknown_option_is_a_usage_error(python):
    proc = _run(python, "clean_data.py", "--bogus")
    assert proc.returncode == 2
    assert "No such option: --bogus" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(not AITZ.is_dir(), reason=f"shared data folder {AITZ} is absent")
@pytest.mark.parametrize("python", _pythons())
def test_scripts_work_with_arguments_on_real_data(python, tmp_path):
    from core.data.unified import iter_steps
    from core.parsers import parse_action

    unified = tmp_path / "unified"
    proc = _run(python, "convert_to_format.py", "--from", "aitw", "--to", "unified", "--input", "../../../shared/data/aitz",
                "--output", str(unified), "--name", "aitz")
    assert proc.returncode == 0, proc.stderr[-2000:]
    steps = list(iter_steps(unified / "aitz.parquet"))
    assert [s.action.type for s in steps] == ["press_home", "scroll", "click", "complete"]

    proc = _run(python, "clean_data.py", "--input", str(unified / "aitz.parquet"), "--output", str(tmp_path / "c.parquet"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert pq.read_metadata(tmp_path / "c.parquet").num_rows == 4

    proc = _run(python, "add_solution_field.py", "--input", str(unified / "aitz.parquet"), "--from", "unified",
                "--output", str(tmp_path / "s.parquet"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    solutions = pq.read_table(tmp_path / "s.parquet", columns=["solution"]).column("solution").to_pylist()
    assert [parse_action(s).action.action for s in solutions] == ["press_home", "scroll", "click", "complete"]

    proc = _run(python, "convert_to_swift_format.py", "--from", "aitw", "--input", "../../../shared/data/aitz",
                "--output", str(tmp_path / "swift"), "--name", "aitz")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "swift" / "aitz.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(len(r["images"]) == 1 and r["messages"][-1]["role"] == "assistant" for r in rows)
