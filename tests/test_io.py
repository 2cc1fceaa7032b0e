"""core.io: atomic writes keep old contents on failure and normal permissions; the output lock excludes writers."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from core.io import (
    OutputLockedError,
    atomic_path,
    atomic_write,
    atomic_write_bytes,
    atomic_write_json,
    lock_path,
    output_lock,
    publish,
    temp_sibling,
)


def _mode(p) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_new_file_gets_umask_mode_and_existing_file_keeps_its_mode(tmp_path):
    old = os.umask(0o022)
    try:
        new = atomic_write_bytes(tmp_path / "sub" / "a.bin", b"abc")
        assert new.read_bytes() == b"abc" and _mode(new) == 0o644  # not mkstemp's 0600
        kept = tmp_path / "b.txt"
        kept.write_text("x")
        kept.chmod(0o600)
        atomic_write_json(kept, {"k": "é"})
        assert kept.read_text(encoding="utf-8") == '{\n  "k": "é"\n}\n' and _mode(kept) == 0o600
    finally:
        os.umask(old)


def test_exception_keeps_old_contents_and_leaves_no_temp(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="boom"), atomic_write(target, "w") as f:
        f.write("half")
        raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]
    with pytest.raises(ValueError, match="mode"), atomic_write(target, "a"):
        pass


def test_atomic_path_replaces_a_directory_and_cleans_up(tmp_path):
    out = tmp_path / "ds.hf"
    out.mkdir()
    (out / "old.arrow").write_text("old")
    with atomic_path(out) as tmp:
        tmp.mkdir()
        (tmp / "new.arrow").write_text("new")
    assert [p.name for p in out.iterdir()] == ["new.arrow"]
    with pytest.raises(KeyError), atomic_path(out) as tmp:
        tmp.mkdir()
        raise KeyError("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.hf"]


def test_publish_moves_a_kept_temp_file(tmp_path):
    tmp = temp_sibling(tmp_path / "x.parquet")
    assert tmp.parent == tmp_path and not tmp.exists() and tmp != temp_sibling(tmp_path / "x.parquet")
    tmp.write_bytes(b"data")
    assert publish(tmp, tmp_path / "x.parquet").read_bytes() == b"data" and not tmp.exists()


def test_second_writer_fails_at_once_naming_the_output(tmp_path):
    out = tmp_path / "preds.jsonl"
    with output_lock(out):
        assert lock_path(out).exists()
        with pytest.raises(OutputLockedError) as e, output_lock(out):
            pass
        assert str(out) in str(e.value) and "another run" in str(e.value) and e.value.path == out
        code = ("import sys; from core.io import output_lock, OutputLockedError\n"
                "try:\n    output_lock(sys.argv[1]).__enter__()\nexcept OutputLockedError as e:\n"
                "    print(e); sys.exit(3)\n")
        child = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
        assert child.returncode == 3 and str(out) in child.stdout
    assert not lock_path(out).exists()
    with output_lock(out):  # released: a later run gets it
        pass
