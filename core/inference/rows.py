"""The parts of a prediction row that do not need a model: the gold columns, the history text, and
:class:`SkippedRecord` (a benchmark record the reader rejected). Read by :mod:`.bench` (writing benchmark files)
and :mod:`.runner` (writing prediction rows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.geometry import Frame, ImageGeometry
from core.prompts import render_guir1_history
from core.records import from_step
from core.schema import Step


@dataclass(frozen=True)
class SkippedRecord:
    """A benchmark record the reader could not turn into a Step (its row is written with ``error``)."""

    id: str
    reason: str


def gold_columns(step: Step) -> dict[str, Any]:
    """The gold columns of a prediction row (:meth:`core.records.GoldRecord.to_prediction_columns`): GUI-R1's
    ``gt_action``/``gt_bbox``/``gt_input_text`` in ORIGINAL pixels, ``gt_frame`` and ``image_size``."""
    w, h = int(step.image_size[0]), int(step.image_size[1])
    return from_step(step, ImageGeometry.unresized(w, h), Frame.ORIGINAL).to_prediction_columns()


def history_string(step: Step) -> str:
    """The history text of the row: the dataset's own string when it has one, else the rendering training uses."""
    return render_guir1_history(step)


__all__ = ["SkippedRecord", "gold_columns", "history_string"]
