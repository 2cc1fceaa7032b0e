"""Per-run tallies every benchmark scorer shares: grouped warnings, unreadable predictions, failed rows kept
for the gallery.  Shared by :mod:`core.eval.metrics` and :mod:`core.eval.aitw` (neither imports the other's
internals).
"""

from __future__ import annotations

from typing import Any

from core.eval.io import Record

NO_PRED = "(none)"
_RAW_TEXT_LIMIT = 4000


class Warnings:
    """Warnings grouped by message, with a count and the first few row locations."""

    def __init__(self, examples: int = 5) -> None:
        self._d: dict[str, list[Any]] = {}
        self._examples = examples

    def add(self, message: str, where: str | None = None) -> None:
        entry = self._d.setdefault(message, [0, []])
        entry[0] += 1
        if where is not None and len(entry[1]) < self._examples:
            entry[1].append(where)

    def as_list(self) -> list[dict[str, Any]]:
        return [{"message": m, "count": c, "examples": ex} for m, (c, ex) in self._d.items()]


class Unparseable:
    """Rows whose prediction cannot be read: a count and the first ``examples`` of them."""

    def __init__(self, examples: int = 20) -> None:
        self.count = 0
        self.examples: list[dict[str, str]] = []
        self._max = examples

    def add(self, rec: Record, reason: str) -> None:
        self.count += 1
        if len(self.examples) < self._max:
            self.examples.append({"where": rec.where, "id": str(rec.row.get("id", "")), "reason": reason})

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "examples": self.examples}


class Failures:
    """The first ``limit`` wrong rows, with what the gallery draws (ORIGINAL pixels)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.rows: list[dict[str, Any]] = []

    def add(self, rec: Record, *, reason: str, point: tuple[float, float] | None, pred_action: str | None,
            gt_box: tuple[float, ...] | None) -> None:
        if len(self.rows) >= self.limit:
            return
        row = rec.row
        raw = row.get("pred")
        self.rows.append({
            "where": rec.where, "id": row.get("id"), "instruction": row.get("instruction"),
            "image_path": row.get("image_path") or (row.get("image") if isinstance(row.get("image"), str) else None),
            "image_source": row.get("image_source"),
            "image_size": row.get("image_size"), "gt_action": row.get("gt_action"), "gt_box": gt_box,
            "gt_input_text": row.get("gt_input_text"), "pred_action": pred_action, "pred_point": point,
            "pred_input_text": row.get("pred_input_text"),
            "pred": raw[:_RAW_TEXT_LIMIT] if isinstance(raw, str) else None, "reason": reason,
        })


__all__ = ["NO_PRED", "Failures", "Unparseable", "Warnings"]
