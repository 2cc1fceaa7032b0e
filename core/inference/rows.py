"""The parts of a prediction row that do not need a model: the gold columns, the history text, the ``pred_*``
fields of an answer (:func:`parse_answer`), and :class:`SkippedRecord` (a benchmark record the reader rejected).
Read by :mod:`.bench` (writing benchmark files), :mod:`.zoom` and :mod:`.runner` (writing prediction rows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.actions import Action
from core.geometry import Frame, ImageGeometry
from core.inference.requests import InferenceRequest
from core.prompts import render_guir1_history
from core.records import from_step
from core.schema import FRACTION_BOX_KEY, Step


@dataclass(frozen=True)
class SkippedRecord:
    """A benchmark record the reader could not turn into a Step (its row is written with ``error``)."""

    id: str
    reason: str


def gold_columns(step: Step) -> dict[str, Any]:
    """The gold columns of a prediction row (:meth:`core.records.GoldRecord.to_prediction_columns`): GUI-R1's
    ``gt_action``/``gt_bbox``/``gt_input_text`` in ORIGINAL pixels, ``gt_frame`` and ``image_size``; and
    ``gt_bbox_fractions`` where the benchmark's evaluator compares in fractions (:data:`core.schema.FRACTION_BOX_KEY`)."""
    w, h = int(step.image_size[0]), int(step.image_size[1])
    cols = from_step(step, ImageGeometry.unresized(w, h), Frame.ORIGINAL).to_prediction_columns()
    if step.extra.get(FRACTION_BOX_KEY) is not None:
        cols["gt_bbox_fractions"] = [float(v) for v in step.extra[FRACTION_BOX_KEY]]
    return cols


def history_string(step: Step) -> str:
    """The history text of the row: the dataset's own string when it has one, else the rendering training uses."""
    return render_guir1_history(step)


def parse_answer(text: str, req: InferenceRequest) -> tuple[dict[str, Any], Action | None]:
    """``parse_ok``/``parse_error``/``pred_action``/``pred_coord``/``pred_input_text`` of a model answer, and
    the parsed action in ORIGINAL pixels (None when it does not parse into a valid action)."""
    from core.parsers import parse_action

    tmpl = req.template_obj
    result = parse_action(text, fmt=getattr(tmpl, "answer_format", "auto") or "auto")
    out: dict[str, Any] = {"parse_ok": False, "parse_error": result.error, "pred_action": None,
                           "pred_coord": None, "pred_input_text": None}
    pa = result.action
    if not result.ok or pa is None:
        out["parse_error"] = result.error or "no action"
        return out, None
    out["pred_action"] = pa.action
    try:
        action = pa.to_action(req.geometry, Frame(getattr(tmpl, "frame", Frame.RESIZED)))
    except ValueError as e:
        out["parse_error"] = str(e)
        return out, None
    out.update(parse_ok=True, parse_error=None, pred_action=action.type,
               pred_coord=None if action.point is None else [float(action.point[0]), float(action.point[1])],
               pred_input_text=action.guir1_input_text())
    return out, action


__all__ = ["SkippedRecord", "gold_columns", "history_string", "parse_answer"]
