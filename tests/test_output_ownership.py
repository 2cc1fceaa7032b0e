"""A command replaces only what it wrote (``core.outputs``, docs/output-policy.md), through the commands as a user
types them, each with the hostile value: a folder output owns only the files its manifest lists; "output inside
input" compares resolved paths; a JSONL is resumed only when this command wrote it; a llamafactory dataset name
is never taken over; a ``world export`` selection is never repeated nor empty."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_output_policy import assert_one_error_line, benchmark, gui_agent, in_process  # noqa: F401

from core.outputs import manifest_path, run_record_path

ROLLOUT = ("rollout", "--policy", "scripted", "--tasks", "settings_toggle-1", "--max-steps", "3", "--gallery", "1")


def _listed(folder: Path, command: str) -> set[str]:
    return set(json.loads(manifest_path(folder, command).read_text())["files"])


# ------------------------------------------------------------------ item 2: a folder output owns only its files


def test_rollout_replaces_only_the_files_it_wrote(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "summary.json").write_text("my summary")
    for extra in ((), ("--overwrite",)):  # a summary rollout never wrote is refused, even with --overwrite
        line = assert_one_error_line(in_process(*ROLLOUT, "--output", out, *extra), "--output",
                                     "summary.json exists but was not written by rollout")
        assert "--overwrite replaces only rollout's own files" in line
    assert (out / "summary.json").read_text() == "my summary" and not (out / "episodes.jsonl").exists()
    (out / "summary.json").unlink()
    (out / "gallery").mkdir()
    (out / "gallery" / "notes.html").write_text("mine")
    assert in_process(*ROLLOUT, "--output", out).returncode == 0
    own = _listed(out, "rollout")
    assert {"summary.json", "gallery/index.html"} <= own and any(n.endswith("/000.png") for n in own)
    assert "gallery/notes.html" not in own
    assert in_process(*ROLLOUT, "--output", out).returncode == 0  # the same run resumes: rewrites its own files
    assert in_process(*ROLLOUT, "--output", out, "--overwrite").returncode == 0
    assert (out / "gallery" / "notes.html").read_text() == "mine"  # --overwrite never removes another file
    assert _listed(out, "rollout") == own
    stray = out / "gallery" / "settings_toggle-1" / "999.png"  # a file it may write but did not
    stray.write_bytes(b"not rollout's")
    assert_one_error_line(in_process(*ROLLOUT, "--output", out, "--overwrite"), "999.png exists but was not "
                          "written by rollout")
    assert stray.read_bytes() == b"not rollout's" and (out / "summary.json").exists()


def test_world_show_replaces_only_the_files_it_wrote(tmp_path):
    out = tmp_path / "show"
    out.mkdir()
    (out / "step_00.png").write_bytes(b"my picture")
    for extra in ((), ("--overwrite",)):
        assert_one_error_line(gui_agent("world", "show", "calculator-200001", "--output", out, *extra),
                              "step_00.png exists but was not written by world-show")
    assert (out / "step_00.png").read_bytes() == b"my picture" and not (out / "steps.json").exists()
    (out / "step_00.png").unlink()
    (out / "notes.txt").write_text("mine")
    assert in_process("world", "show", "calculator-200001", "--output", out).returncode == 0
    first = _listed(out, "world-show")
    assert "steps.json" in first and "step_00.png" in first
    assert_one_error_line(in_process("world", "show", "calculator-200001", "--output", out),
                          "steps.json already exists; pass --overwrite")
    r = in_process("world", "show", "settings_toggle-3", "--output", out, "--overwrite")
    assert r.returncode == 0, r.stderr
    steps = json.loads((out / "steps.json").read_text())["steps"]
    assert sorted(p.name for p in out.glob("step_*.png")) == [s["screen"] for s in steps]  # no stale step of
    assert (out / "notes.txt").read_text() == "mine"                                        # the earlier task


def test_eval_gallery_replaces_only_the_files_it_wrote(benchmark, tmp_path):  # noqa: F811
    preds, gallery = tmp_path / "pred.jsonl", tmp_path / "gallery"
    assert in_process("infer", "--backend", "baseline", "--model", "centre", "--input", benchmark[0],
                      "--output", preds).returncode == 0
    (gallery / "img").mkdir(parents=True)
    (gallery / "img" / "00000.png").write_bytes(b"my picture")
    (gallery / "notes.txt").write_text("mine")
    evaluate = ("eval", "--predictions", preds, "--benchmark", "androidcontrol_high", "--gallery", gallery)
    for extra in ((), ("--overwrite",)):
        assert_one_error_line(in_process(*evaluate, *extra), "--gallery", "img/00000.png exists but was not "
                              "written by eval-gallery")
    assert (gallery / "img" / "00000.png").read_bytes() == b"my picture" and not (gallery / "index.html").exists()
    (gallery / "img" / "00000.png").unlink()
    assert in_process(*evaluate).returncode == 0
    assert "index.html" in _listed(gallery, "eval-gallery")
    assert_one_error_line(in_process(*evaluate), "index.html already exists; pass --overwrite")
    assert in_process(*evaluate, "--overwrite").returncode == 0
    assert (gallery / "notes.txt").read_text() == "mine"


def test_folder_outputs_never_write_or_delete_through_a_link_nor_over_a_folder(benchmark, tmp_path):  # noqa: F811
    """Issue 50 items 4 and 14: a sub-folder the command writes in that is a symbolic link (a fixed one, ``img``,
    or one its manifest lists, ``gallery/<benchmark>``) is refused in one line with and without --overwrite, and
    the files it leads to stay; so is a file in that sub-folder's place (the gallery's screenshots would be
    dropped) and a folder where a listed file was."""
    preds, gallery, report = tmp_path / "pred.jsonl", tmp_path / "gallery", tmp_path / "report"
    assert in_process("infer", "--backend", "baseline", "--model", "centre", "--input", benchmark[0],
                      "--output", preds).returncode == 0
    evaluate = ("eval", "--predictions", preds, "--benchmark", "androidcontrol_high", "--gallery", gallery)
    assert in_process(*evaluate).returncode == 0
    pictures = sorted(p.name for p in (gallery / "img").iterdir())
    outside = tmp_path / "outside"
    shutil.copytree(gallery / "img", outside)
    shutil.rmtree(gallery / "img")
    (gallery / "img").symlink_to(outside)
    for extra in ((), ("--overwrite",)):
        assert_one_error_line(in_process(*evaluate, *extra), "--gallery", "img is a symbolic link")
    assert sorted(p.name for p in outside.iterdir()) == pictures  # nothing deleted through the link
    (gallery / "img").unlink()
    (gallery / "img").write_text("a file")
    assert_one_error_line(in_process(*evaluate, "--overwrite"), "--gallery", "img is a file where eval-gallery "
                          "writes a folder")
    (gallery / "img").unlink()
    (gallery / "index.html").unlink()
    (gallery / "index.html").mkdir()
    assert_one_error_line(in_process(*evaluate, "--overwrite"), "--gallery", "index.html is a folder where "
                          "eval-gallery writes a file")
    (gallery / "index.html").rmdir()
    assert in_process(*evaluate, "--overwrite").returncode == 0

    shutil.copy(preds, tmp_path / "androidcontrol_high_test.jsonl")
    make_report = ("eval-report", "--pred-dir", tmp_path, "--out", report, "--no-plots")
    assert in_process(*make_report).returncode == 0
    bench_gallery = report / "gallery" / "androidcontrol_high"
    kept = tmp_path / "kept"
    shutil.move(bench_gallery, kept)
    bench_gallery.symlink_to(kept)  # matched by gallery/*/img/*.png: the manifest lists files under it
    assert_one_error_line(in_process(*make_report, "--overwrite"), "--out", "androidcontrol_high is a symbolic link")
    assert (kept / "index.html").exists() and len(list((kept / "img").iterdir())) == len(pictures)


def test_malformed_manifest_or_run_record_is_one_error_line(benchmark, tmp_path):  # noqa: F811
    """Issue 50 item 4: a manifest or run record nested too deeply, not an object, or a FIFO (never opened for a
    blocking read: the command must not hang) is one error line naming it, with the command a user types."""
    import os
    import subprocess
    import sys

    preds, gallery = tmp_path / "pred.jsonl", tmp_path / "gallery"
    infer = ("infer", "--backend", "baseline", "--model", "centre", "--input", benchmark[0], "--output", preds)
    assert in_process(*infer).returncode == 0
    evaluate = ("eval", "--predictions", preds, "--benchmark", "androidcontrol_high", "--gallery", gallery)
    assert in_process(*evaluate).returncode == 0

    def command(*args) -> subprocess.CompletedProcess:  # a child process: a hang fails the test, never blocks it
        return subprocess.run([sys.executable, "-m", "core", *map(str, args)], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=False)

    for path, args, needle in ((manifest_path(gallery, "eval-gallery"), (*evaluate, "--overwrite"),
                                "is not a readable manifest of files"),
                               (run_record_path(preds), infer, "is not a readable run record of pred.jsonl")):
        for bad in ("[" * 100_000 + "]" * 100_000, '{"files": ' + "[" * 5_000 + "]" * 5_000 + "}", "[1, 2]",
                    None):
            path.unlink()
            if bad is None:
                os.mkfifo(path)
            else:
                path.write_text(bad)
            assert_one_error_line(command(*args), path.name, needle)
        path.unlink()
    assert in_process(*infer, "--overwrite").returncode == 0  # the record is rewritten


# ------------------------------------------------------------------ item 3: output inside input, links resolved


def test_convert_output_inside_its_input_through_a_symlink_is_refused(benchmark, tmp_path):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(benchmark[0], data / "a.parquet")
    (tmp_path / "link").symlink_to(data)
    convert = ("data", "convert", "--from", "unified", "--to", "unified", "--input", data,
               "--output", tmp_path / "link" / "out")
    for extra in ((), ("--overwrite",)):  # a rerun would read link/out/*.parquet back: rows 3 -> 6 -> 9
        assert_one_error_line(in_process(*convert, *extra), "lies inside --input", "read its own output back")
    assert not (data / "out").exists()
    r = in_process("data", "clean", "--input", tmp_path / "link", "--output", data / "clean.parquet")
    assert_one_error_line(r, "lies inside --input")


# ------------------------------------------------------------------ item 4: resume only a file this command wrote


def test_infer_and_rollout_never_resume_a_foreign_jsonl(benchmark, tmp_path):  # noqa: F811
    foreign = '{"id": "settings_toggle-1"}\n{"id": "x"}\n'
    preds = tmp_path / "x.jsonl"
    preds.write_text(foreign)
    infer = ("infer", "--backend", "baseline", "--model", "centre", "--input", benchmark[0], "--output", preds)
    line = assert_one_error_line(in_process(*infer), "x.jsonl was not written by this command", "--overwrite")
    assert "lack its fields pred" in line and preds.read_text() == foreign  # nothing appended
    assert in_process(*infer, "--overwrite").returncode == 0
    rows = preds.read_text()
    run_record_path(preds).unlink()  # an older version's file: no run record, its rows carry infer's fields
    r = in_process(*infer)
    assert r.returncode == 0 and " 0 new rows" in r.stdout and preds.read_text() == rows

    out = tmp_path / "run"
    out.mkdir()
    (out / "episodes.jsonl").write_text(foreign)
    assert_one_error_line(in_process(*ROLLOUT, "--output", out), "episodes.jsonl was not written by this command")
    assert (out / "episodes.jsonl").read_text() == foreign
    assert in_process(*ROLLOUT, "--output", out, "--overwrite").returncode == 0
    episodes = (out / "episodes.jsonl").read_text()
    run_record_path(out / "episodes.jsonl").unlink()
    manifest_path(out, "rollout").unlink()  # a folder written before run records and manifests: resumed
    assert in_process(*ROLLOUT, "--output", out).returncode == 0
    assert (out / "episodes.jsonl").read_text() == episodes and "summary.json" in _listed(out, "rollout")


def test_a_resumed_rollout_replaces_only_the_json_summary_it_wrote(tmp_path):
    """`rollout --json FILE` on a resumed run rewrites FILE only when it is the summary this run wrote (a rollout
    summary of this folder's episodes); an unrelated file, or another run's summary, is refused in one line
    without --overwrite and left as it was."""
    out, other, summary = tmp_path / "run", tmp_path / "other", tmp_path / "s.json"
    assert in_process(*ROLLOUT, "--output", out, "--json", summary).returncode == 0
    assert in_process(*ROLLOUT, "--output", out, "--json", summary).returncode == 0  # resumed: its own summary
    assert json.loads(summary.read_text())["output"] == str(out / "episodes.jsonl")
    assert in_process(*ROLLOUT, "--output", other).returncode == 0
    notes = tmp_path / "notes.txt"
    for content, why in [("my notes", "not a readable JSON document"),
                         ('{"episodes": 3, "mine": true}', "it lacks its fields success_rate, per_family, output"),
                         ((other / "summary.json").read_text(), "its episodes are ")]:
        notes.write_text(content)
        line = assert_one_error_line(in_process(*ROLLOUT, "--output", out, "--json", notes), "--json",
                                     "notes.txt exists but was not written by this rollout run", why,
                                     "pass --overwrite to replace it")
        assert notes.read_text() == content, line
    assert in_process(*ROLLOUT, "--output", out, "--json", notes, "--overwrite").returncode == 0
    assert json.loads(notes.read_text())["output"] == str(out / "episodes.jsonl")
    summary.unlink()
    (summary.parent / "s.json").mkdir()  # a folder in its place is refused as ever
    assert_one_error_line(in_process(*ROLLOUT, "--output", out, "--json", summary), "--json", "is a folder")
    assert_one_error_line(in_process(*ROLLOUT, "--output", tmp_path / "new", "--json", notes), "--json",
                          "notes.txt already exists; pass --overwrite")  # a new run: no file is its own yet


# ------------------------------------------------------------------ item 8: llamafactory dataset names are unique


def test_llamafactory_exports_sharing_a_stem_never_replace_each_other(benchmark, tmp_path):  # noqa: F811
    for name in ("ss.mobile", "ss.web"):  # Path("ss.mobile").stem == Path("ss.web").stem == "ss"
        (tmp_path / name).mkdir()
        shutil.copy(benchmark[0], tmp_path / name / "a.parquet")
    data = tmp_path / "data"

    def export(name: str, *extra):
        return in_process("data", "convert", "--from", "unified", "--to", "llamafactory", "--input",
                          tmp_path / name, "--output", data / name, *extra)

    assert export("ss.mobile").returncode == 0
    info = (data / "dataset_info.json").read_text()
    assert json.loads(info)["ss"]["file_name"] == "ss.mobile/ss.jsonl"
    for extra in ((), ("--overwrite",)):
        assert_one_error_line(export("ss.web", *extra), "already has a dataset 'ss'", "ss.mobile/ss.jsonl",
                              "ss.web/ss.jsonl", "choose another --name")
    assert (data / "dataset_info.json").read_text() == info and not (data / "ss.web" / "ss.jsonl").exists()
    assert export("ss.mobile", "--overwrite").returncode == 0  # the same dataset again: its own entry
    assert export("ss.web", "--name", "ss_web").returncode == 0
    assert set(json.loads((data / "dataset_info.json").read_text())) == {"ss", "ss_web"}


# ------------------------------------------------------------------ item 9: a selection is never repeated nor empty


def test_world_export_refuses_a_repeated_or_empty_selection(tmp_path):
    out = tmp_path / "x.parquet"
    for args, needle in ((("--levels", "low,low"), "--levels 'low,low' names 'low' more than once"),
                         (("--levels", ","), "--levels ',' selects nothing"),
                         (("--families", ","), "--families ',' selects nothing"),
                         (("--families", ""), "--families '' selects nothing"),
                         (("--families", "calculator, calculator"), "names 'calculator' more than once"),
                         (("--levels", "low,medium"), "unknown level(s) 'medium'")):
        assert_one_error_line(in_process("world", "export", "--split", "test", *args, "--output", out), needle)
        assert not out.exists()
    r = in_process("world", "export", "--split", "test", "--families", "calculator", "--n", "1", "--levels", "low",
                   "--output", out)
    assert r.returncode == 0 and out.exists()
