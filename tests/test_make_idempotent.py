"""A make target is idempotent (issue 38, item 10): `make data-convert` and `make data` run again with the same
command and unchanged inputs say their output is up to date and exit 0, convert again over their own output when an
input or option changed, and never replace an output they did not write (scripts/stamp.py, mk/data.mk)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP_ENVS = ["-o", ".venvs/rl/.ready", "-o", ".venvs/llamafactory/.ready", "-o", ".venvs/base/.ready"]


def make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", *SKIP_ENVS, *args], cwd=REPO, capture_output=True, text=True, check=False)


def test_make_data_convert_twice_is_up_to_date_then_follows_its_input(shared_data, tmp_path):
    src = tmp_path / "aitz"
    shutil.copytree(shared_data / "aitz", src)
    args = ["data-convert", "DATA_FROM=aitw", f"DATA_INPUT={src}", f"DATA_OUT={tmp_path / 'out'}"]
    first = make(*args)
    assert first.returncode == 0, first.stdout + first.stderr
    output = tmp_path / "out" / "unified" / "aitz.parquet"
    written = output.stat().st_mtime_ns
    again = make(*args)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.splitlines() == [
        f"== {src} -> unified: up to date ({tmp_path / 'out' / 'unified' / '.make-data.aitz.json'}: same command, "
        "no input file newer)"]
    assert output.stat().st_mtime_ns == written  # not touched
    # An input file changes: converted again, over its own output.
    stamp = tmp_path / "out" / "unified" / ".make-data.aitz.json"
    later = stamp.stat().st_mtime + 10
    some = next(p for p in src.rglob("*") if p.is_file())
    os.utime(some, (later, later))
    changed = make(*args)
    assert changed.returncode == 0, changed.stdout + changed.stderr
    assert "input or options changed since the last conversion, converting again" in changed.stdout
    assert "read 4, written 4" in changed.stdout and output.stat().st_mtime_ns != written
    # Another option: converted again too.
    assert "converting again" in make(*args, "DATA_ARGS=--workers 2").stdout


def test_make_data_convert_never_replaces_an_output_it_did_not_write(shared_data, tmp_path):
    out = tmp_path / "out" / "unified"
    out.mkdir(parents=True)
    (out / "aitz.parquet").write_bytes(b"mine")
    r = make("data-convert", "DATA_FROM=aitw", f"DATA_INPUT={shared_data / 'aitz'}", f"DATA_OUT={tmp_path / 'out'}")
    assert r.returncode == 2 and "already exists" in r.stderr
    assert (out / "aitz.parquet").read_bytes() == b"mine"


def test_make_data_twice_is_up_to_date(shared_data, tmp_path):
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary
    from core.inference.bench import write_guir1_benchmark

    steps = list(READERS["aitw"](shared_data / "aitz", summary=ConversionSummary()))
    raw = tmp_path / "raw"
    write_guir1_benchmark(steps[:2], raw / "train.parquet")
    args = ["data", f"GUIR1_DIR={raw}", f"DATA_ROOT={tmp_path / 'out'}", "DATA_TARGETS=swift unified"]
    first = make(*args)
    assert first.returncode == 0, first.stdout + first.stderr
    again = make(*args)
    assert again.returncode == 0, again.stdout + again.stderr
    assert [line.split(": up to date")[0] for line in again.stdout.splitlines()] == [
        f"== {raw / 'train.parquet'} -> swift", f"== {raw / 'train.parquet'} -> unified"]
