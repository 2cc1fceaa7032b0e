"""File output that is never seen half-written, and one writer per output.

Every module that writes a result file goes through here (one owner for atomic writing):

- :func:`atomic_write_bytes` / :func:`atomic_write_text` / :func:`atomic_write_json`: whole contents at once.
- :func:`atomic_write`: ``with atomic_write(path, "w") as f: ...`` streams into an open file.
- :func:`atomic_path`: ``with atomic_path(path) as tmp: library.save(tmp)`` for writers that want a path (pyarrow,
  matplotlib, ``datasets.save_to_disk``; a directory works too).
- :func:`publish`: the last step alone, for resumable jobs that keep their own temp file between runs
  (``<out>.tmp`` + a checkpoint) and move it into place when done.

All of them write a sibling temp file in the target's directory (unique name, so concurrent writers never share
one), ``fsync`` it, give it the target's current permission bits (a new file gets the normal ``0o666 & ~umask``,
0644 under the usual umask 022, not ``mkstemp``'s 0600), ``os.replace`` it onto the target, and ``fsync`` the
directory. On any exception the temp file is removed and the target keeps its old contents.

:func:`output_lock` (``with output_lock(out): ...``) holds an exclusive, non-blocking ``fcntl.flock`` on
``<out>.lock`` for the duration of a job; a second run writing the same output fails at once with
:class:`OutputLockedError` naming the path. The lock file is removed on release. POSIX only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import stat
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

_UMASK_LOCK = threading.Lock()


class OutputLockedError(RuntimeError):
    """Another run holds the lock of ``path`` (``<path>.lock``); raised at once, never waits."""

    def __init__(self, path: Path):
        self.path = Path(path)
        super().__init__(f"{self.path} is being written by another run (lock {lock_path(self.path)} is held); "
                         f"wait for it to finish or choose another output")


def lock_path(path: str | Path) -> Path:
    """The lock file that guards ``path``: ``<path>.lock`` beside it."""
    path = Path(path)
    return path.with_name(path.name + ".lock")


def _new_file_mode() -> int:
    with _UMASK_LOCK:  # os.umask can only be read by setting it
        umask = os.umask(0o022)
        os.umask(umask)
    return 0o666 & ~umask


def temp_sibling(path: str | Path, suffix: str = "") -> Path:
    """A unique, not yet existing name in ``path``'s directory: ``.<name>.<random>.tmp<suffix>``."""
    path = Path(path)
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp{suffix}")


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # some filesystems refuse to open or fsync a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def publish(tmp: str | Path, path: str | Path) -> Path:
    """Move the finished ``tmp`` onto ``path`` atomically and durably; returns ``path``.

    A file is fsynced and given ``path``'s permission bits (new: ``0o666 & ~umask``). A directory replaces an
    existing directory by two renames (the old one is removed afterwards), so readers see the old or the new
    folder, never a mix. ``tmp`` must be in the same filesystem as ``path`` (use :func:`temp_sibling`).
    """
    tmp, path = Path(tmp), Path(path)
    if tmp.is_dir():
        if path.exists():
            old = temp_sibling(path, ".old")
            os.replace(path, old)
            try:
                os.replace(tmp, path)
            except BaseException:
                os.replace(old, path)
                raise
            _remove(old)
        else:
            os.replace(tmp, path)
    else:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = _new_file_mode()
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    _fsync_dir(path.parent)
    return path


@contextlib.contextmanager
def atomic_path(path: str | Path, *, suffix: str = "") -> Iterator[Path]:
    """Yield a temp path beside ``path`` to write (a file or a directory); published on success, removed on error.

    ``suffix`` is appended to the temp name for writers that pick the format from it (``".png"``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_sibling(path, suffix)
    try:
        yield tmp
        publish(tmp, path)
    finally:
        _remove(tmp)


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """``open(temp, mode)`` for ``path``; the file replaces ``path`` when the block ends without an exception."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write mode must be 'w' or 'wb', got {mode!r}")
    with atomic_path(path) as tmp, open(tmp, mode, encoding=None if "b" in mode else encoding) as f:
        yield f
        f.flush()


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``."""
    with atomic_write(path, "wb") as f:
        f.write(data)
    return Path(path)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns ``path``."""
    with atomic_write(path, "w") as f:
        f.write(text)
    return Path(path)


def atomic_write_json(path: str | Path, obj: Any, *, indent: int | None = 2) -> Path:
    """Write ``obj`` as UTF-8 JSON (non-ASCII kept, NaN refused) plus a final newline, atomically."""
    return atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=indent, allow_nan=False) + "\n")


@contextlib.contextmanager
def output_lock(path: str | Path, *, wait: bool = False) -> Iterator[Path]:
    """Hold the exclusive lock of output ``path`` for the block; raises :class:`OutputLockedError` if held.

    The lock is ``fcntl.flock`` on ``<path>.lock`` (released by the kernel if the process dies, so a stale lock
    file never blocks a later run). Separate opens conflict even inside one process. ``wait=True`` queues
    behind the holder instead of failing (for short read-modify-write updates of a shared file).
    """
    path = Path(path)
    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputLockedError(path) from None
        try:  # the holder before us may have unlinked the file we opened: lock the one on disk
            if os.fstat(fd).st_ino == os.stat(lock).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield path
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)


__all__ = [
    "OutputLockedError",
    "atomic_path",
    "atomic_write",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "lock_path",
    "output_lock",
    "publish",
    "temp_sibling",
]
