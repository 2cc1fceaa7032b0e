"""Pieces every reward shares: the knobs, and the gold record / prediction each reward compares.

The gold side is :func:`core.records.from_reward_inputs` (any on-disk flavour: GUI-R1 JSON, ``mobile_use``
arguments, verl ``extra_info``, trl / ms-swift columns; the frame is explicit or inferred and recorded);
the comparison is :func:`core.matching.match`.  The model answers in ``extra_info["frame"]`` ('resized'
pixels for Qwen2.5-VL / GUI-R1, 'grid1000' for Qwen3-VL, 'normalized' fractions, or 'original' pixels).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.geometry import Frame, ImageGeometry
from core.matching import Predicted
from core.parsers import ParsedAction
from core.records import GoldRecordError as RewardInputError
from core.records import load_json_object, parse_frame

#: The identity geometry: converts tool-call names without touching coordinates.
_RAW = ImageGeometry.unresized(1000, 1000)


@dataclass(frozen=True)
class Knobs:
    """How ``format`` and ``accuracy`` make ``overall``.

    ``overall = accuracy_weight * accuracy + format_weight * format``; with ``gate_format`` the format term
    counts only when ``accuracy > 0`` (R1-V-GUI-agent: stops base models from farming the format reward).
    """

    accuracy_weight: float = 0.8
    format_weight: float = 0.2
    gate_format: bool = False

    def overall(self, accuracy: float, fmt: float) -> float:
        if self.gate_format and not accuracy > 0:
            fmt = 0.0
        return self.accuracy_weight * accuracy + self.format_weight * fmt


def load_ground_truth(ground_truth: Any) -> dict:
    """The ground truth as a dict (JSON object string, bytes or mapping); :class:`RewardInputError` otherwise."""
    return load_json_object(ground_truth)


def model_frame(extra_info: Mapping | None) -> Frame | None:
    """The frame the model answers in: ``extra_info["frame"]`` (None: the gold record's own frame)."""
    return parse_frame((extra_info or {}).get("frame"), "extra_info.frame")


def predicted(parsed: ParsedAction, extra_info: Mapping | None, default_frame: Frame | None = None) -> Predicted:
    """A parsed answer as a :class:`core.matching.Predicted`, its point in the model's frame (``extra_info``'s,
    else ``default_frame``, else the gold's). Tool-call names become core names (``terminate`` -> complete /
    impossible, ``system_button`` -> press_*, ``swipe`` -> scroll with its direction) with coordinates kept raw.
    Raises ValueError when a tool call's arguments cannot be an action."""
    frame = model_frame(extra_info) or default_frame
    if parsed.fmt != "tool_call":
        return Predicted(parsed.action, parsed.point, parsed.text, parsed.direction, frame)
    a = parsed.to_action(_RAW, Frame.ORIGINAL)  # names only: identity geometry keeps the numbers as written
    return Predicted(a.type, parsed.point if a.point is not None else None, a.text, a.direction, frame)


__all__ = ["Knobs", "RewardInputError", "load_ground_truth", "model_frame", "predicted"]
