"""GUI-G2's Gaussian point reward: partial credit for a click near the target instead of r1gui's hit-or-miss.

Source: Tang et al., "GUI-G2: Gaussian Reward Modeling for GUI Grounding", arXiv 2507.15846 (ZJU-REAL), its
Gaussian point reward with the box-adaptive variance. ``overall = accuracy_weight * accuracy + format_weight *
format`` (0.8 / 0.2, optional ``gate_format``: the :class:`core.rewards.common.Knobs` of r1gui); ``format`` is r1gui's
check of the same ``mode`` (:func:`core.rewards.r1gui.default_format`, or :func:`~core.rewards.r1gui.guir1_format`
with ``mode="guir1"``, so the GUI-R1 presets' ``{"mode": "guir1"}`` applies to both), the answer is always read and
compared as r1gui's default mode does (:func:`core.rewards.r1gui.judge`), and ``accuracy`` is:

* a point action (click, long_press, ...) of the right type with a gold box (x1, y1, x2, y2):
  ``exp(-1/2 ((dx / sx)^2 + (dy / sy)^2))`` with (dx, dy) the point's offset from the box centre and
  ``sx = alpha * |x2 - x1|``, ``sy = alpha * |y2 - y1|`` (``alpha`` 0.5 by default: the box edge is one sigma
  from the centre). The ratio is the same in every coordinate frame, so it is computed in the gold's frame.
* the same with a gold POINT (no box), or a box of zero width or height (its centre): the gold counts as a
  square of side ``2 * point_radius`` in fractions of the screen (default :data:`core.matching.POINT_RADIUS`,
  0.14: r1gui's hit radius), so ``sx = alpha * 2 * point_radius * W`` and ``sy`` likewise with ``H``
  (normalized units; a pixel-frame gold point needs ``extra_info.image_size``).
* a missing or non-finite point, or the wrong action type: 0.
* any other action (type, scroll, press_back, open_app ...): GUI-R1's rule as r1gui applies it, 1 when the type
  matches and the text (token F1 >= 0.5) or scroll direction agrees, else 0.

``arg_match`` keeps r1gui's binary verdict (point in the box / within ``point_radius``), so a run can log both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from core.actions import POINT_ACTIONS
from core.geometry import Frame
from core.matching import POINT_RADIUS
from core.records import GoldRecord
from core.rewards import r1gui
from core.rewards.common import Knobs

#: Keys of every result: r1gui's (``accuracy`` is the Gaussian value for point actions).
KEYS = r1gui.KEYS
#: sigma / box size (GUI-G2's adaptive variance); 0.5 puts the box edge at one sigma.
DEFAULT_ALPHA = 0.5


def positive_option(name: str, value: Any) -> float:
    """``value`` as a float; ValueError naming the option unless it is a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"gaussian reward option '{name}': must be a finite number > 0, got {value!r}")
    return float(value)


def gaussian_point_accuracy(point: tuple[float, float], frame: Frame | None, gold: GoldRecord, *,
                            alpha: float = DEFAULT_ALPHA, point_radius: float = POINT_RADIUS) -> float:
    """The Gaussian value (0..1] of a predicted ``point`` in ``frame`` (None: the gold's) for a gold with a target
    (module docstring). Raises :class:`core.records.GoldRecordError` when a frame change needs ``image_size``."""
    if point is None or not all(math.isfinite(v) for v in point):
        return 0.0
    box = gold.box
    if box is not None and box[0] != box[2] and box[1] != box[3]:
        x, y = gold.convert(point, frame or gold.frame, gold.frame)
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        sx, sy = alpha * abs(box[2] - box[0]), alpha * abs(box[3] - box[1])
    else:
        target = gold.point if box is None else ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        x, y = gold.convert(point, frame or gold.frame, Frame.NORMALIZED)
        cx, cy = gold.convert(target, gold.frame, Frame.NORMALIZED)  # type: ignore[arg-type]
        sx = sy = alpha * 2 * point_radius
    zx, zy = (x - cx) / sx, (y - cy) / sy
    return math.exp(-0.5 * (zx * zx + zy * zy))  # products overflow to inf (-> 0), where ** 2 would raise


def gaussian_score(completion: str, ground_truth: Any, extra_info: Mapping | None = None, *,
                   alpha: float = DEFAULT_ALPHA, knobs: Knobs | None = None, point_radius: float | None = None,
                   mode: str = "default") -> dict[str, float]:
    """Score one completion; returns :data:`KEYS`. Raises :class:`core.rewards.RewardInputError` on unusable
    ground truth and ValueError on a bad option."""
    alpha = positive_option("alpha", alpha)
    radius = positive_option("point_radius", POINT_RADIUS if point_radius is None else point_radius)
    if mode not in r1gui.MODES:
        raise ValueError(f"gaussian reward option 'mode': {mode!r} is not one of {list(r1gui.MODES)}")
    knobs = knobs or Knobs()
    fmt = r1gui.guir1_format(completion) if mode == "guir1" else r1gui.default_format(completion)
    judged = r1gui.judge(completion, ground_truth, extra_info, point_radius=radius)
    parts = dict(judged.parts)
    if judged.gold.action in POINT_ACTIONS and parts["action_match"]:
        parts["accuracy"] = gaussian_point_accuracy(judged.pred.point, judged.pred.frame, judged.gold,
                                                    alpha=alpha, point_radius=radius)
    return {"overall": knobs.overall(parts["accuracy"], fmt), "format": fmt, **parts}


__all__ = ["DEFAULT_ALPHA", "KEYS", "positive_option", "gaussian_point_accuracy", "gaussian_score"]
