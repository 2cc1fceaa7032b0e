"""Streaming reader of prediction files (JSON lines; GUI-R1 names them ``*.json``) and field accessors.

Rows are read one at a time, so scoring memory does not grow with the file.  A file whose first
non-blank character is ``[`` is read as one JSON array (not streamed).  Gold fields that a metric needs
and that are missing or malformed raise :class:`PredictionFileError` naming the file, line and field;
prediction fields are model output and are never an error (a bad one makes the row wrong).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.console import bounded, quoted
from core.numbers import is_finite_number

class PredictionFileError(ValueError):
    """Bad input in a prediction file: ``where`` is ``file:line``. The message shows ``where`` bounded
    (:func:`core.console.bounded`: its start and its end, so the line number stays; a user path can be ~4,096
    characters) and the field through :func:`core.console.quoted`."""

    def __init__(self, where: str, field: str | None, reason: str) -> None:
        self.where, self.field, self.reason = where, field, reason
        loc = f"{bounded(where)}: field {quoted(field)}" if field else bounded(where)
        super().__init__(f"{loc}: {reason}")


@dataclass(frozen=True, slots=True)
class Record:
    """One row of a prediction file and where it came from (``file:line``)."""

    where: str
    row: dict[str, Any]


def _first_char(path: Path) -> str:
    with path.open("r", encoding="utf-8", errors="replace") as f:
        while True:
            chunk = f.read(4096)
            if not chunk:
                return ""
            stripped = chunk.lstrip()
            if stripped:
                return stripped[0]


def iter_records(paths: str | Path | Iterable[str | Path]) -> Iterator[Record]:
    """Yield every row of one or more prediction files, in order, with its ``file:line`` location. A row of
    ``gui-agent infer`` (it has ``backend``; its ``id`` names one benchmark row) whose ``id`` was seen before (two
    runs appended to one file, or the same rows in two files) is an error: it would be scored twice. GUI-R1's own
    files are not checked: their ``id`` is the screenshot's file name, shared by several instructions."""
    first_seen: dict[str, str] = {}
    for rec in _iter_rows(paths):
        rid = rec.row.get("id")
        if isinstance(rid, str) and "backend" in rec.row:
            if rid in first_seen:
                raise PredictionFileError(rec.where, "id", f"duplicate id {quoted(rid)} (first at "
                                                          f"{bounded(first_seen[rid])})")
            first_seen[rid] = rec.where
        yield rec


def _iter_rows(paths: str | Path | Iterable[str | Path]) -> Iterator[Record]:
    if isinstance(paths, (str, Path)):
        paths = [paths]
    for p in paths:
        path = Path(p)
        if not path.is_file():
            raise PredictionFileError(str(path), None, "no such file")
        if _first_char(path) == "[":
            try:
                rows = json.loads(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise PredictionFileError(str(path), None, f"invalid JSON array: {e}") from None
            for i, row in enumerate(rows):
                if not isinstance(row, dict):
                    raise PredictionFileError(f"{path}[{i}]", None, "row is not a JSON object")
                yield Record(f"{path}[{i}]", row)
            continue
        with path.open("rb") as f:
            for lineno, raw in enumerate(f, 1):
                if not raw.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    row = json.loads(raw.decode("utf-8"))
                except UnicodeDecodeError as e:
                    raise PredictionFileError(where, None, f"not UTF-8 (byte {e.start + 1})") from None
                except json.JSONDecodeError as e:
                    raise PredictionFileError(where, None, f"invalid JSON: {e.msg} (column {e.colno})") from None
                if not isinstance(row, dict):
                    raise PredictionFileError(where, None, "row is not a JSON object")
                yield Record(where, row)


# ----------------------------------------------------------------------------------------------- gold fields

def gold_str(rec: Record, field: str, default: str | None = None) -> str:
    v = rec.row.get(field, default)
    if v is None:
        raise PredictionFileError(rec.where, field, "missing")
    if not isinstance(v, str):
        raise PredictionFileError(rec.where, field, f"must be a string, got {type(v).__name__}")
    return v


def gold_numbers(rec: Record, field: str, lengths: tuple[int, ...]) -> tuple[float, ...]:
    """A list of finite numbers of one of ``lengths`` (e.g. a box of 4 or a point of 2)."""
    v = rec.row.get(field)
    if v is None:
        raise PredictionFileError(rec.where, field, "missing")
    if not isinstance(v, (list, tuple)) or not all(is_finite_number(x) for x in v):
        raise PredictionFileError(rec.where, field, f"must be a list of numbers, got {quoted(v, 80)}")
    if len(v) not in lengths:
        raise PredictionFileError(rec.where, field, f"must have {' or '.join(map(str, lengths))} numbers, got {len(v)}")
    return tuple(float(x) for x in v)


def gold_size(rec: Record) -> tuple[float, float]:
    """``image_size`` as (W, H) ORIGINAL pixels, both > 0."""
    w, h = gold_numbers(rec, "image_size", (2,))
    if w <= 0 or h <= 0:
        raise PredictionFileError(rec.where, "image_size", f"must be positive, got {[w, h]}")
    return w, h


def pred_point(v: Any) -> tuple[float, float] | None:
    """The first two items of a predicted coordinate as floats, or None when they are not two finite numbers."""
    if not isinstance(v, (list, tuple)) or len(v) < 2 or not (is_finite_number(v[0]) and is_finite_number(v[1])):
        return None
    return float(v[0]), float(v[1])
