"""Is this action right?  One answer, used by the rewards (``default`` r1gui, ``gui_agent``, ``aitw``) and the
strict benchmark metrics.  GUI-R1's own evaluator and reward stay separate on purpose (``guir1`` modes): their
quirks are what they reproduce.

:func:`match` compares a :class:`Predicted` action with a :class:`core.records.GoldRecord` and returns a
:class:`Match` of small facts, each None where it does not apply:

- ``type_ok``: canonical action names agree (``enter`` == ``press_enter``);
- ``in_box``: the point lies in the gold box, edges included (box targets);
- ``distance``: from the point to the target (0 inside a box) and ``centre_distance`` to the box centre or
  the gold point, both in normalized units (dx / W, dy / H), i.e. fractions of the screen;
- ``text_score``: token F1 of typed/selected/opened text (:func:`core.text_match.text_f1`), ``text_ok`` its
  match (F1 >= 0.5 or a one-token substring, :func:`core.text_match.text_match`);
- ``direction_ok``: scroll directions agree, case-insensitively.

``Match.point_ok`` is ``in_box`` for a box, else ``distance < POINT_RADIUS`` (the AndroidControl / GUI-R1 "within
14% of the screen" rule); ``Match.ok`` is the step success: type and every argument that applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.actions import FREE_TEXT_ACTIONS, POINT_ACTIONS, canonical_action_name
from core.geometry import Frame
from core.records import GoldRecord, GoldRecordError
from core.text_match import text_f1, text_match

#: "Within 14% of the screen": radius, in normalized units, of a right point when the gold is a point.
POINT_RADIUS = 0.14
#: GUI-R1's reward radius for a point target: 140 pixels in its answer frame (resized pixels).
GUIR1_PIXEL_RADIUS = 140


@dataclass(frozen=True)
class Predicted:
    """A predicted action: canonical-or-alias ``action`` name, ``point`` (x, y) in ``frame`` (None: same frame
    as the gold record), ``text``, scroll ``direction``."""

    action: str | None
    point: tuple[float, float] | None = None
    text: str | None = None
    direction: str | None = None
    frame: Frame | None = None


@dataclass(frozen=True)
class Match:
    """What agrees between a prediction and its gold record (module docstring); None = does not apply."""

    type_ok: bool
    in_box: bool | None = None
    distance: float | None = None
    centre_distance: float | None = None
    text_score: float | None = None
    text_ok: bool | None = None
    direction_ok: bool | None = None
    radius: float = POINT_RADIUS

    @property
    def point_ok(self) -> bool | None:
        if self.in_box is not None:
            return self.in_box
        if self.distance is None:
            return None
        return self.distance < self.radius

    @property
    def ok(self) -> bool:
        return self.type_ok and all(v is not False for v in (self.point_ok, self.text_ok, self.direction_ok))


def needs_point(action: str) -> bool:
    return canonical_action_name(action) in POINT_ACTIONS


def _normalized(gold: GoldRecord, xy: tuple[float, float], frame: Frame) -> tuple[float, float] | None:
    """``xy`` in normalized units, or None when a pixel frame cannot be converted (no image size)."""
    if frame is Frame.NORMALIZED:
        return xy
    if frame is Frame.GRID1000:
        return xy[0] / 1000.0, xy[1] / 1000.0
    return None if gold.geometry is None else gold.convert(xy, frame, Frame.NORMALIZED)


def point_facts(point: tuple[float, float] | None, gold: GoldRecord, frame: Frame | None = None
                ) -> tuple[bool | None, float | None, float | None]:
    """``(in_box, distance, centre_distance)`` of a point given in ``frame`` (default: the gold's).

    A missing or non-finite point is outside, infinitely far. For a box in a pixel frame without
    ``image_size`` the distances are None. Raises :class:`core.records.GoldRecordError` when the gold has no
    target, or a point target / a frame change needs ``image_size`` and the record has none.
    """
    if not gold.has_target:
        raise GoldRecordError("gt_bbox", f"a {gold.action} action needs a target box or point")
    if point is None or not all(math.isfinite(v) for v in point):
        return (False if gold.box is not None else None), math.inf, math.inf
    frame = frame or gold.frame
    x, y = gold.convert(point, frame, gold.frame)
    in_box = None
    if gold.box is not None:
        x1, y1, x2, y2 = gold.box
        in_box = min(x1, x2) <= x <= max(x1, x2) and min(y1, y2) <= y <= max(y1, y2)
    p = _normalized(gold, (x, y), gold.frame)
    if p is None:
        if in_box is None:
            raise GoldRecordError("extra_info.image_size",
                                  f"needed to measure a distance to a {gold.frame.value}-frame point target")
        return in_box, None, None
    if gold.box is not None:
        (a, b), (c, d) = _normalized(gold, gold.box[:2], gold.frame), _normalized(gold, gold.box[2:], gold.frame)
        dx = max(min(a, c) - p[0], 0.0, p[0] - max(a, c))
        dy = max(min(b, d) - p[1], 0.0, p[1] - max(b, d))
        centre = ((a + c) / 2, (b + d) / 2)
        return in_box, math.hypot(dx, dy), math.hypot(p[0] - centre[0], p[1] - centre[1])
    g = _normalized(gold, gold.point, gold.frame)  # type: ignore[arg-type]
    d = math.hypot(p[0] - g[0], p[1] - g[1])
    return None, d, d


def match(pred: Predicted, gold: GoldRecord, *, radius: float = POINT_RADIUS) -> Match:
    """Compare ``pred`` with ``gold`` (module docstring). Arguments are checked only when the types agree."""
    if pred.action is None or canonical_action_name(pred.action) != canonical_action_name(gold.action):
        return Match(type_ok=False, radius=radius)
    action = canonical_action_name(gold.action)
    if action in POINT_ACTIONS:
        in_box, dist, centre = point_facts(pred.point, gold, pred.frame)
        return Match(type_ok=True, in_box=in_box, distance=dist, centre_distance=centre, radius=radius)
    if action == "scroll":
        ok = pred.direction is not None and gold.direction is not None \
            and pred.direction.strip().lower() == gold.direction.strip().lower()
        return Match(type_ok=True, direction_ok=ok, radius=radius)
    if action in FREE_TEXT_ACTIONS:
        p, g = pred.text or "", gold.text or ""
        return Match(type_ok=True, text_score=text_f1(p, g), text_ok=text_match(p, g), radius=radius)
    return Match(type_ok=True, radius=radius)


__all__ = ["GUIR1_PIXEL_RADIUS", "POINT_RADIUS", "Match", "Predicted", "match", "needs_point", "point_facts"]
