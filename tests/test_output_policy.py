"""The output policy of every writer (``core.outputs``, docs/output-policy.md), through the commands as a user
types them: an existing output is replaced only with ``--overwrite``; a run resumes only when every option that
changes its output matches, and the error names each difference with both values; bad outputs, bad numbers and
a failing disk end with one ``error:`` line and exit 2, leaving no torn file and no resume state of a run that
wrote nothing."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.cli import app
from core.outputs import OptionsChanged, option_changes, refuse_existing, resumable_output, run_record_path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def gui_agent(*args, file_size_limit: int | None = None) -> subprocess.CompletedProcess:
    """``gui-agent ARGS`` in a child process; ``file_size_limit``: RLIMIT_FSIZE in bytes, so that a write past it
    fails in the kernel (EFBIG) as it fails on a full disk (ENOSPC), in pyarrow's C++ writers too."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the failing write returns an error instead of a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-m", "core", *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                          env=env, check=False, preexec_fn=limit if file_size_limit else None)


def in_process(*args) -> subprocess.CompletedProcess:
    r = CliRunner().invoke(app, [str(a) for a in args])
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


def assert_one_error_line(r: subprocess.CompletedProcess, *needles: str) -> str:
    assert r.returncode == 2 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
    lines = [line for line in r.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and all(n in lines[0] for n in needles), r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory) -> tuple[Path, Path]:
    """Two held-out sim-phone benchmark files (4 and 2 tasks) in the unified parquet layout."""
    folder = tmp_path_factory.mktemp("bench")
    a, b = folder / "a.parquet", folder / "b.parquet"
    assert gui_agent("world", "export", "--split", "test", "--n", "2", "--output", a).returncode == 0
    assert gui_agent("world", "export", "--split", "test_family", "--n", "1", "--output", b).returncode == 0
    return a, b


# ------------------------------------------------------------------ the policy itself


def test_option_changes_names_every_difference_with_both_values():
    assert option_changes({"seed": 0, "input": "a"}, {"seed": 99, "input": "a", "top_p": 1.0}) == [
        "seed 0 -> 99", "top_p None -> 1.0"]
    assert option_changes({"seed": 0}, {"seed": 0, "top_p": 1.0}, only_recorded=True) == []
    assert option_changes({"resize": {"max_pixels": 1, "factor": 28}}, {"resize": {"max_pixels": 2, "factor": 28}}
                          ) == ["resize.max_pixels 1 -> 2"]


def test_resumable_output_refuses_other_options_and_forgets_a_run_that_wrote_nothing(tmp_path):
    out = tmp_path / "rows.jsonl"
    has_rows = lambda: out.exists() and out.stat().st_size > 0  # noqa: E731
    with pytest.raises(RuntimeError), resumable_output(out, {"seed": 0}, overwrite=False, has_rows=has_rows):
        assert run_record_path(out).exists()
        raise RuntimeError("the run failed before its first row")
    assert not run_record_path(out).exists()  # nothing written: no resume state
    with resumable_output(out, {"seed": 0}, overwrite=False, has_rows=has_rows) as resuming:
        assert not resuming
        out.write_text("row\n")
    with pytest.raises(OptionsChanged, match=r"seed 0 -> 1") as e, \
            resumable_output(out, {"seed": 1}, overwrite=False, has_rows=has_rows):
        pass
    assert e.value.changes == ["seed 0 -> 1"] and out.read_text() == "row\n"
    with resumable_output(out, {"seed": 0}, overwrite=False, has_rows=has_rows) as resuming:
        assert resuming
    with resumable_output(out, {"seed": 1}, overwrite=True, has_rows=has_rows, clear=out.unlink) as resuming:
        assert not resuming and not out.exists()
    assert json.loads(run_record_path(out).read_text()) == {"seed": 1}


def test_refuse_existing(tmp_path):
    (tmp_path / "f").write_text("keep")
    with pytest.raises(ValueError, match=r"--json .*f already exists; pass --overwrite"):
        refuse_existing(tmp_path / "f", overwrite=False, option="--json")
    refuse_existing(tmp_path / "f", overwrite=True)
    with pytest.raises(ValueError, match="is a folder; it must be a file"):
        refuse_existing(tmp_path, overwrite=True)
    with pytest.raises(ValueError, match="is a file; it must be a folder"):
        refuse_existing(tmp_path / "f", overwrite=True, folder=True)


# ------------------------------------------------------------------ existing outputs: refused without --overwrite


def test_world_export_and_eval_json_refuse_an_existing_file(benchmark, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    r = gui_agent("world", "export", "--n", "1", "--output", notes)
    assert_one_error_line(r, "--output", "notes.txt already exists; pass --overwrite")
    assert notes.read_text() == "my notes"
    assert gui_agent("world", "export", "--n", "1", "--output", notes, "--overwrite").returncode == 0
    assert notes.read_bytes()[:4] == b"PAR1"

    preds = tmp_path / "pred.jsonl"
    assert in_process("infer", "--backend", "baseline", "--model", "centre", "--input", benchmark[0],
                      "--output", preds).returncode == 0
    report = tmp_path / "report.json"
    report.write_text("earlier report")
    evaluate = ("eval", "--predictions", preds, "--benchmark", "androidcontrol_high", "--json", report)
    assert_one_error_line(in_process(*evaluate), "--json", "report.json already exists; pass --overwrite")
    assert report.read_text() == "earlier report"
    assert in_process(*evaluate, "--overwrite").returncode == 0
    assert json.loads(report.read_text())["benchmark"] == "androidcontrol_high"

    folder = tmp_path / "preds"
    folder.mkdir()
    preds.rename(folder / "androidcontrol_high_test.json")
    assert in_process("eval-report", "--pred-dir", folder, "--out", tmp_path / "rep", "--no-plots").returncode == 0
    r = in_process("eval-report", "--pred-dir", folder, "--out", tmp_path / "rep", "--no-plots")
    assert_one_error_line(r, "--out", "report.json already exists")
    assert in_process("eval-report", "--pred-dir", folder, "--out", tmp_path / "rep", "--no-plots",
                      "--overwrite").returncode == 0


def test_bad_output_paths_are_one_error_line(tmp_path):
    (tmp_path / "file").write_text("keep")
    r = gui_agent("rollout", "--policy", "scripted", "--tasks", "settings_toggle-1", "--output", tmp_path / "file")
    assert_one_error_line(r, "--output", "is a file; it must be a folder")
    r = gui_agent("rollout", "--policy", "scripted", "--tasks", "settings_toggle-1", "--output", "/proc/x")
    assert_one_error_line(r, "/proc/x")
    r = gui_agent("world", "show", "settings_toggle-3", "--output", tmp_path / "file")
    assert_one_error_line(r, "--output", "is a file; it must be a folder")
    assert (tmp_path / "file").read_text() == "keep"
    assert gui_agent("world", "show", "settings_toggle-3", "--output", tmp_path / "show").returncode == 0
    assert_one_error_line(gui_agent("world", "show", "settings_toggle-3", "--output", tmp_path / "show"),
                          "steps.json already exists; pass --overwrite")


# ------------------------------------------------------------------ resume only when every option matches


def test_infer_resumes_only_with_the_same_input_and_generation_options(benchmark, tmp_path):
    a, b = benchmark
    out = tmp_path / "pred.jsonl"
    base = ("infer", "--backend", "baseline", "--model", "random", "--output", out)
    r = in_process(*base, "--input", a, "--seed", "3")
    assert r.returncode == 0, r.stderr
    before = out.read_bytes()
    line = assert_one_error_line(in_process(*base, "--input", b, "--seed", "3"), "input '", "b.parquet'")
    assert str(a.resolve()) in line and str(b.resolve()) in line
    line = assert_one_error_line(in_process(*base, "--input", a, "--seed", "99", "--temperature", "0.5",
                                            "--max-new-tokens", "64"),
                                 "seed 3 -> 99", "temperature 0.0 -> 0.5", "max_new_tokens 1024 -> 64")
    assert "--overwrite to start over" in line
    assert out.read_bytes() == before  # nothing appended by the refused runs
    r = in_process(*base, "--input", a, "--seed", "3")  # the same command resumes: nothing new
    assert r.returncode == 0 and " 0 new rows" in r.stdout
    r = in_process(*base, "--input", b, "--seed", "99", "--overwrite")
    assert r.returncode == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert {row["image_source"] for row in rows} == {str(b)}
    r = in_process("infer", "--backend", "baseline", "--model", "centre", "--input", a, "--output", tmp_path)
    assert r.returncode == 2 and "is a folder; it must be a file" in " ".join(r.stderr.replace("│", " ").split())


def test_rollout_resumes_only_with_the_same_seed_and_settings(tmp_path):
    run = ("rollout", "--policy", "random", "--tasks", "settings_toggle-1,open_note-2", "--gallery", "0",
           "--max-steps", "3", "--output", tmp_path)
    assert in_process(*run).returncode == 0
    before = (tmp_path / "episodes.jsonl").read_bytes()
    r = in_process(*run, "--seed", "99", "--max-screenshots", "2", "--max-pixels", "501760")
    assert_one_error_line(r, "seed 0 -> 99", "max_screenshots 1 -> 2", "resize.max_pixels 1258291 -> 501760")
    assert (tmp_path / "episodes.jsonl").read_bytes() == before
    assert in_process(*run).returncode == 0 and (tmp_path / "episodes.jsonl").read_bytes() == before  # resumed
    assert in_process(*run, "--seed", "99", "--overwrite").returncode == 0
    rows = [json.loads(x) for x in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and {row["seed"] for row in rows} == {99}


def test_rollout_validates_every_task_before_running_any(tmp_path):
    r = gui_agent("rollout", "--policy", "scripted", "--tasks", "settings_toggle-1,open_note-2,bogus-3",
                  "--output", tmp_path / "out")
    assert_one_error_line(r, "--tasks", "1 unknown task(s)", "unknown task family 'bogus'")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "needle"), [
    (("--temperature", "nan"), "--temperature: must be a finite number, got nan"),
    (("--max-new-tokens", "0"), "--max-new-tokens: must be >= 1, got 0"),
    (("--top-p", "1.5"), "--top-p: must be <= 1, got 1.5"),
])
def test_infer_numbers_are_checked_before_anything_runs(benchmark, tmp_path, args, needle):
    r = in_process("infer", "--backend", "baseline", "--model", "centre", "--input", benchmark[0],
                   "--output", tmp_path / "p.jsonl", *args)
    assert_one_error_line(r, needle)
    assert not (tmp_path / "p.jsonl").exists()


def test_rollout_numbers_are_checked_before_anything_runs(tmp_path):
    r = in_process("rollout", "--policy", "random", "--temperature", "-1", "--output", tmp_path / "o")
    assert_one_error_line(r, "--temperature: must be >= 0, got -1.0")
    r = in_process("rollout", "--policy", "random", "--episodes", "0", "--output", tmp_path / "o")
    assert_one_error_line(r, "--episodes: must be >= 1, got 0")
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------ a failing disk; a failed run leaves no state


def test_world_export_on_a_full_disk_is_one_line_and_leaves_no_file(tmp_path):
    out = tmp_path / "world.parquet"
    r = gui_agent("world", "export", "--n", "3", "--output", out, file_size_limit=20_000)
    assert_one_error_line(r, f"cannot write {out}: ", "File too large")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no parquet, no temp file, no lock
    assert gui_agent("world", "export", "--n", "3", "--output", out).returncode == 0  # nothing to overwrite


def test_rollout_on_a_full_disk_keeps_whole_rows_and_resumes(tmp_path):
    run = ("rollout", "--policy", "random", "--tasks", "train", "--episodes", "12", "--max-steps", "4",
           "--gallery", "0", "--output", tmp_path)
    r = gui_agent(*run, file_size_limit=8_000)  # about half of the 12 episodes' rows
    assert_one_error_line(r, f"cannot use {tmp_path / 'episodes.jsonl'}: File too large")
    data = (tmp_path / "episodes.jsonl").read_bytes()
    assert 0 < len(data) <= 8_000 and data.endswith(b"\n")  # the torn row was cut off
    kept = [json.loads(x) for x in data.decode().splitlines()]
    assert 0 < len(kept) < 12
    r = gui_agent(*run)  # the same command resumes after the failure
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and [row["id"] for row in rows[:len(kept)]] == [row["id"] for row in kept]


def test_prediction_writer_cuts_off_a_batch_the_disk_could_not_take(tmp_path, monkeypatch):
    import core.inference.runner as runner

    out = tmp_path / "p.jsonl"
    with runner.PredictionWriter(out) as writer:
        writer.write_rows([{"id": "a"}])
        real_write, calls = os.write, []

        def full_disk(fd, data):
            calls.append(len(data))
            if len(calls) == 1:
                return real_write(fd, bytes(data[:5]))  # part of the batch fits
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(runner.os, "write", full_disk)
        with pytest.raises(OSError, match="No space left"):
            writer.write_rows([{"id": "b"}, {"id": "c"}])
    assert out.read_text() == '{"id": "a"}\n'


@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data")
def test_a_mistyped_convert_input_leaves_no_resume_state(tmp_path):
    convert = ("data", "convert", "--from", "screenspot", "--to", "swift", "--output", tmp_path / "out")
    typo = DATA / "screenspot" / "screenspot_v1_annotation.jsonl"
    assert_one_error_line(gui_agent(*convert, "--input", typo, "--name", "t"), "does not exist")
    assert not list((tmp_path / "out").iterdir())  # no .t.run.json, no t.jsonl.tmp
    r = gui_agent(*convert, "--input", DATA / "screenspot" / "screenspot_v1_annotations.jsonl", "--name", "t",
                  "--images", DATA / "screenspot" / "images", "--skip-missing")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["images", "t.jsonl"]


@pytest.mark.parametrize("where", ["under_a_file", "deep_under_a_file", "proc"])
def test_eval_and_eval_compare_refuse_an_unwritable_output_in_one_line(benchmark, tmp_path, where):
    """Round 5, item 9 (rule 8): ``eval --json`` / ``--markdown`` and ``eval-compare --markdown`` to a path under a
    file (a missing folder inside it too) or under /proc: one error line naming the option, before any scoring,
    nothing written. (A missing folder elsewhere is created, as before.)"""
    preds = tmp_path / "pred.jsonl"
    assert in_process("infer", "--backend", "baseline", "--model", "centre", "--input", benchmark[0],
                      "--output", preds).returncode == 0
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    target = {"under_a_file": blocker / "r.json", "proc": Path("/proc/r.json"),
              "deep_under_a_file": blocker / "nope" / "r.json"}[where]
    base = ("eval", "--predictions", preds, "--benchmark", "androidcontrol_high")
    for option in ("--json", "--markdown"):
        assert_one_error_line(in_process(*base, option, target), option)
    report = tmp_path / "report.json"
    assert in_process(*base, "--json", report).returncode == 0
    assert_one_error_line(in_process("eval-compare", report, report, "--markdown", target), "--markdown")
    assert not target.exists() and blocker.read_text() == "x"
    fresh = tmp_path / "new" / "folder" / "r.json"  # missing folders: created, as the writers always did
    assert in_process(*base, "--json", fresh).returncode == 0 and fresh.is_file()
