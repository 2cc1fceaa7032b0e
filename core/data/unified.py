"""The unified parquet: one row per :class:`core.schema.Step`, images stored inline as bytes.

Columns (``UNIFIED_SCHEMA``): ``id``; ``image`` struct{bytes, path} (the Hugging Face ``datasets`` Image
layout, so ``datasets`` reads it as an image column); ``image_width``/``image_height`` (ORIGINAL pixels);
``instruction``; ``history`` (JSON list of HistoryItem); ``history_text``; ``task_type``; ``action_type``;
``action`` (JSON of :class:`core.actions.Action`, ORIGINAL pixels); ``bbox`` (x1, y1, x2, y2 ORIGINAL pixels
or null); ``source``; ``group``; ``ui_type``; ``split``; ``extra`` (JSON object).

Files are written atomically (a unique temp sibling, then :func:`core.io.publish`) and read in record batches, never whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from core.actions import Action
from core.io import publish, temp_sibling
from core.schema import HistoryItem, Step, StepValidationError

UNIFIED_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
        ("image_width", pa.int32()),
        ("image_height", pa.int32()),
        ("instruction", pa.string()),
        ("history", pa.string()),
        ("history_text", pa.string()),
        ("task_type", pa.string()),
        ("action_type", pa.string()),
        ("action", pa.string()),
        ("bbox", pa.list_(pa.float64())),
        ("source", pa.string()),
        ("group", pa.string()),
        ("ui_type", pa.string()),
        ("split", pa.string()),
        ("extra", pa.string()),
    ]
)


def step_to_row(step: Step) -> dict[str, Any]:
    """A Step as a dict matching ``UNIFIED_SCHEMA`` (image bytes inline when the step has them)."""
    image = step.image
    return {
        "id": step.id,
        "image": {"bytes": image if isinstance(image, bytes) else None,
                  "path": image if isinstance(image, str) else None},
        "image_width": step.image_size[0],
        "image_height": step.image_size[1],
        "instruction": step.instruction,
        "history": json.dumps([h.model_dump(exclude_none=True) for h in step.history]),
        "history_text": step.history_text,
        "task_type": step.task_type,
        "action_type": step.action.type,
        "action": step.action.model_dump_json(exclude_none=True),
        "bbox": list(step.bbox) if step.bbox is not None else None,
        "source": step.source,
        "group": step.group,
        "ui_type": step.ui_type,
        "split": step.split,
        "extra": json.dumps(step.extra, default=str),
    }


def _json_field(record: str, row: dict[str, Any], field: str, default: str, kind: type) -> Any:
    """Column ``field`` of ``row`` parsed as JSON of type ``kind``; anything else is an error on ``field``."""
    raw = row.get(field) or default
    try:
        value = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        raise StepValidationError(record, field, f"not JSON: {str(raw)[:200]!r}") from None
    if not isinstance(value, kind):
        raise StepValidationError(record, field, f"expected a JSON {kind.__name__}, got {str(raw)[:200]!r}")
    return value


def _model(record: str, field: str, build: Callable[[], Any]) -> Any:
    try:
        return build()
    except (ValidationError, TypeError, ValueError) as e:
        msg = e.errors()[0]["msg"] if isinstance(e, ValidationError) else str(e)
        raise StepValidationError(record, field, msg.removeprefix("Value error, ")[:300]) from None


def row_to_step(row: dict[str, Any], record: str | None = None) -> Step:
    """Inverse of :func:`step_to_row`; raises ``StepValidationError`` naming the record (``record``, default the
    row's id) and field (missing columns, JSON that is not the expected list / object, invalid actions)."""
    record = record or str(row.get("id"))
    for column in ("id", "image_width", "image_height", "instruction", "action"):
        if row.get(column) is None or row.get(column) == "":
            raise StepValidationError(record, column, "missing (column absent, null or empty)")
    image = row.get("image") or {}
    if not isinstance(image, dict):
        raise StepValidationError(record, "image", "expected struct{bytes, path}")
    history = _json_field(record, row, "history", "[]", list)
    return Step.build(
        record,
        id=row["id"],
        image=image.get("bytes") if image.get("bytes") is not None else image.get("path"),
        image_size=(row["image_width"], row["image_height"]),
        instruction=row["instruction"],
        history=tuple(_model(record, f"history[{i}]", lambda h=h: HistoryItem(**h)) for i, h in enumerate(history)),
        history_text=row.get("history_text"),
        task_type=row.get("task_type") or "low",
        action=_model(record, "action", lambda: Action.model_validate_json(row["action"])),
        bbox=_model(record, "bbox", lambda: tuple(row["bbox"])) if row.get("bbox") is not None else None,
        source=row.get("source") or "unknown",
        group=row.get("group"),
        ui_type=row.get("ui_type"),
        split=row.get("split"),
        extra=_json_field(record, row, "extra", "{}", dict),
    )


class UnifiedWriter:
    """Stream Steps into a unified parquet; the file appears under its name only when closed cleanly."""

    def __init__(self, path: str | Path, *, batch_rows: int = 256):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = temp_sibling(self.path)
        self._writer = pq.ParquetWriter(self._tmp, UNIFIED_SCHEMA, compression="zstd")
        self._rows: list[dict[str, Any]] = []
        self._batch_rows = batch_rows
        self.n_written = 0

    def write(self, step: Step) -> None:
        self._rows.append(step_to_row(step))
        if len(self._rows) >= self._batch_rows:
            self._flush()

    def write_all(self, steps: Iterable[Step]) -> None:
        for s in steps:
            self.write(s)

    def _flush(self) -> None:
        if self._rows:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=UNIFIED_SCHEMA))
            self.n_written += len(self._rows)
            self._rows = []

    def close(self) -> None:
        try:
            self._flush()
            self._writer.close()
            publish(self._tmp, self.path)
        except BaseException:  # disk full while flushing: no temp file left behind
            self.abort()
            raise

    def abort(self) -> None:
        try:
            self._writer.close()
        except OSError:  # the failure that ended the run (disk full) can fail the close too
            pass
        finally:
            self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> UnifiedWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def iter_parquet_batches(path: str | Path, *, batch_size: int = 64, columns: list[str] | None = None
                         ) -> Iterator[pa.RecordBatch]:
    """Record batches of any parquet file, one row group at a time and without pyarrow's read-ahead
    (``pre_buffer``), so memory is bounded by the row group and ``batch_size``, not by the file."""
    pf = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
    for group in range(pf.num_row_groups):
        yield from pf.iter_batches(batch_size=batch_size, row_groups=[group], columns=columns)


def iter_unified_batches(path: str | Path, *, batch_size: int = 64, columns: list[str] | None = None
                         ) -> Iterator[pa.RecordBatch]:
    """Record batches of a unified parquet (see :func:`iter_parquet_batches`)."""
    yield from iter_parquet_batches(path, batch_size=batch_size, columns=columns)


def iter_steps(path: str | Path, *, batch_size: int = 64) -> Iterator[Step]:
    """Every Step of a unified parquet, streamed."""
    for batch in iter_unified_batches(path, batch_size=batch_size):
        for row in batch.to_pylist():
            yield row_to_step(row)


__all__ = ["UNIFIED_SCHEMA", "UnifiedWriter", "iter_parquet_batches", "iter_steps", "iter_unified_batches", "row_to_step", "step_to_row"]
