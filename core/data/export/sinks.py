"""Resumable output sinks of the exporters: JSON Lines and parquet, renamed into place only when complete.

:class:`JsonlSink` writes ``<name>.tmp`` and :class:`ParquetSink` closed part files under ``<name>.parts/``, with a
checkpoint (:class:`Progress`) so that an interrupted run resumes where its last checkpoint was;
:func:`core.io.publish` moves the finished file into place.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.io import atomic_path, atomic_write_json, publish


@dataclass
class Progress:
    """Checkpointed state: input steps consumed, rows written and this exporter's skips."""

    consumed: int = 0
    written: int = 0
    skipped: Counter = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {"consumed": self.consumed, "written": self.written, "skipped": dict(self.skipped)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Progress:
        return cls(consumed=int(d["consumed"]), written=int(d["written"]), skipped=Counter(d.get("skipped", {})))


#: JSONL sinks checkpoint every this many rows; parquet sinks close a part every this many bytes.
CHECKPOINT_ROWS = 200
PART_BYTES = 512 << 20
#: Parquet row groups are flushed every this many (image) bytes.
ROW_GROUP_BYTES = 32 << 20


class JsonlSink:
    """JSON Lines written to ``<path>.tmp``, renamed to ``path`` on close.

    Every ``every`` rows the file is flushed and ``<path>.progress.json`` records its byte length and the
    :class:`Progress`; resuming truncates the temp file to that length and continues after those steps.
    """

    def __init__(self, path: Path, *, every: int | None = None):
        self.path = Path(path)
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.ckpt = self.path.with_name(self.path.name + ".progress.json")
        self.every = every or CHECKPOINT_ROWS
        self._since = 0
        self._f: Any = None

    def start(self, resume: bool) -> Progress | None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume and self.tmp.exists() and self.ckpt.exists():
            state = json.loads(self.ckpt.read_text(encoding="utf-8"))
            self._f = open(self.tmp, "r+b")  # noqa: SIM115 - kept open across write() calls
            self._f.truncate(int(state["bytes"]))
            self._f.seek(0, os.SEEK_END)
            return Progress.from_dict(state)
        self.ckpt.unlink(missing_ok=True)
        self._f = open(self.tmp, "wb")  # noqa: SIM115 - kept open across write() calls
        return None

    def write(self, row: dict[str, Any]) -> None:
        self._f.write(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
        self._since += 1

    def maybe_checkpoint(self, progress: Progress) -> None:
        if self._since >= self.every:
            self._f.flush()
            atomic_write_json(self.ckpt, {**progress.to_dict(), "bytes": self._f.tell()}, indent=1)
            self._since = 0

    def close(self) -> Path:
        self._f.close()
        publish(self.tmp, self.path)
        self.ckpt.unlink(missing_ok=True)
        return self.path

    def suspend(self) -> None:
        """Leave temp + progress on disk for a later resume (called when the run is interrupted)."""
        if self._f is not None and not self._f.closed:
            self._f.close()

    def discard(self) -> None:
        """Remove the temp file (an interrupted run with no checkpoint: nothing to resume)."""
        self.suspend()
        self.tmp.unlink(missing_ok=True)
        self.ckpt.unlink(missing_ok=True)


class ParquetSink:
    """Parquet rows written as closed part files under ``<path>.parts/``, merged into ``path`` on close.

    Row groups are flushed every ``group_bytes`` (images make rows large, so memory stays bounded by bytes,
    not rows); a part is closed every ``part_bytes`` and the :class:`Progress` is checkpointed with it, so an
    interrupted run resumes after the last closed part.
    """

    def __init__(self, path: Path, schema: Any, *, group_bytes: int | None = None, part_bytes: int | None = None):
        self.path = Path(path)
        self.schema = schema
        self.parts = self.path.with_name(self.path.name + ".parts")
        self.ckpt = self.parts / "progress.json"
        self.group_bytes = group_bytes or ROW_GROUP_BYTES
        self.part_bytes = part_bytes or PART_BYTES
        self._rows: list[dict[str, Any]] = []
        self._row_bytes = 0
        self._part_bytes = 0
        self._writer: Any = None
        self._done: list[str] = []

    def start(self, resume: bool) -> Progress | None:
        if resume and self.ckpt.exists():
            state = json.loads(self.ckpt.read_text(encoding="utf-8"))
            self._done = list(state["parts"])
            for p in self.parts.iterdir():
                if p.name not in self._done and p != self.ckpt:
                    p.unlink()
            return Progress.from_dict(state)
        shutil.rmtree(self.parts, ignore_errors=True)
        self.parts.mkdir(parents=True)
        return None

    def _part_tmp(self) -> Path:
        return self.parts / f"part-{len(self._done):05d}.parquet.tmp"

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._rows:
            return
        if self._writer is None:
            self._writer = pq.ParquetWriter(self._part_tmp(), self.schema, compression="zstd")
        self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self.schema))
        self._part_bytes += self._row_bytes
        self._rows, self._row_bytes = [], 0

    def write(self, row: dict[str, Any], nbytes: int = 0) -> None:
        self._rows.append(row)
        self._row_bytes += nbytes + 1024
        if self._row_bytes >= self.group_bytes:
            self._flush()

    def _close_part(self) -> None:
        self._flush()
        if self._writer is None:
            return
        self._writer.close()
        self._writer = None
        tmp = self._part_tmp()
        final = tmp.with_name(tmp.name.removesuffix(".tmp"))
        publish(tmp, final)
        self._done.append(final.name)
        self._part_bytes = 0

    def maybe_checkpoint(self, progress: Progress) -> None:
        if self._part_bytes + self._row_bytes >= self.part_bytes:
            self._close_part()
            atomic_write_json(self.ckpt, {**progress.to_dict(), "parts": self._done}, indent=1)

    def close(self) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._close_part()
        if len(self._done) == 1:
            publish(self.parts / self._done[0], self.path)
        else:
            with atomic_path(self.path) as tmp, pq.ParquetWriter(tmp, self.schema, compression="zstd") as w:
                if not self._done:
                    w.write_table(pa.Table.from_pylist([], schema=self.schema))
                for name in self._done:
                    pf = pq.ParquetFile(self.parts / name)
                    for i in range(pf.num_row_groups):
                        w.write_table(pf.read_row_group(i))
        shutil.rmtree(self.parts, ignore_errors=True)
        return self.path

    def suspend(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def discard(self) -> None:
        """Remove the part files (an interrupted run with no checkpoint: nothing to resume)."""
        self.suspend()
        shutil.rmtree(self.parts, ignore_errors=True)
