"""Gold regions other than a box: polygons (OSWorld-G's ``polygon`` box type) and the refusal region.

A polygon is a tuple of (x, y) vertices in ORIGINAL-image pixels, in order (either orientation) and closed
implicitly (the last vertex joins the first). :func:`point_in_polygon` defines containment:

- a point ON the boundary (within :data:`EDGE_EPS` px of an edge) is inside, as a box's edges are inside a box
  (:func:`core.geometry.point_in_box`);
- elsewhere the even-odd rule: a horizontal ray from the point to +x crosses the boundary an odd number of times,
  a vertex exactly at the ray's height counting for the edge that lies above it (half-open), so concave polygons
  are exact and a self-intersecting one has the even-odd interior;
- a degenerate polygon (every vertex on one line: zero area) holds only its boundary, the segments.

A polygon has at least :data:`MIN_VERTICES` vertices (:func:`polygon_error`). A refusal gold (the instruction's
target is not on the screen) has no region at all: its gold action is ``impossible`` (:data:`REFUSAL_ACTION`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from core.actions import canonical_action_name
from core.console import quoted
from core.numbers import is_finite_number

#: Distance (ORIGINAL px) within which a point counts as lying on a polygon's edge.
EDGE_EPS = 1e-9
MIN_VERTICES = 3
#: The gold action of a refusal row: the target does not exist, the right answer is to refuse (no click).
REFUSAL_ACTION = "impossible"
#: Predicted actions that refuse instead of clicking: ``impossible`` (terminate(status="failure"), UI-TARS
#: call_user / fail, OS-Atlas IMPOSSIBLE) and ``answer`` (a text reply). Definition: ``registry.REFUSAL_PREDICTION``.
REFUSAL_ACTIONS = frozenset({REFUSAL_ACTION, "answer"})


def refuses(action: str | None, point: Sequence[float] | None) -> bool:
    """Whether a parsed answer refuses: its canonical action is one of :data:`REFUSAL_ACTIONS`, or its point has
    both coordinates negative (OSWorld-G's refusal convention, e.g. ``[-1, -1]``). The one rule for the metrics
    (``core.eval.metrics.is_refusal``) and for ``infer --zoom`` (a refusal keeps its answer: nothing to zoom on)."""
    if action is not None and canonical_action_name(action) in REFUSAL_ACTIONS:
        return True
    return point is not None and len(point) >= 2 and point[0] < 0 and point[1] < 0

Polygon = tuple[tuple[float, float], ...]


def polygon_error(value: Any) -> str | None:
    """Why ``value`` is not a polygon (a list of at least 3 ``[x, y]`` pairs of finite numbers), else None."""
    if not isinstance(value, (list, tuple)):
        return f"expected a list of [x, y] vertices, got {type(value).__name__}"
    if len(value) < MIN_VERTICES:
        return f"a polygon needs at least {MIN_VERTICES} vertices, got {len(value)}"
    for i, v in enumerate(value):
        if not (isinstance(v, (list, tuple)) and len(v) == 2 and is_finite_number(v[0]) and is_finite_number(v[1])):
            return f"vertex {i} is not two finite numbers: {quoted(v, 80)}"
    return None


def as_polygon(value: Any) -> Polygon:
    """``value`` as a :data:`Polygon`; ``ValueError`` with :func:`polygon_error`'s reason otherwise."""
    reason = polygon_error(value)
    if reason:
        raise ValueError(reason)
    return tuple((float(x), float(y)) for x, y in value)


def polygon_bbox(polygon: Polygon) -> tuple[float, float, float, float]:
    """The bounding box (x1, y1, x2, y2) of ``polygon``, same frame."""
    xs = [p[0] for p in polygon]
    ys = [p[1] for p in polygon]
    return min(xs), min(ys), max(xs), max(ys)


def _on_edge(x: float, y: float, a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether (x, y) lies on segment a-b, within :data:`EDGE_EPS` px (a zero-length segment is its point)."""
    (ax, ay), (bx, by) = a, b
    if not (min(ax, bx) - EDGE_EPS <= x <= max(ax, bx) + EDGE_EPS
            and min(ay, by) - EDGE_EPS <= y <= max(ay, by) + EDGE_EPS):
        return False
    cross = (bx - ax) * (y - ay) - (by - ay) * (x - ax)
    return abs(cross) <= EDGE_EPS * math.hypot(bx - ax, by - ay)


def point_in_polygon(point: Sequence[float], polygon: Polygon) -> bool:
    """Whether ``point`` (x, y) lies in ``polygon`` (same frame): boundary included, even-odd rule inside (see the
    module docstring)."""
    x, y = float(point[0]), float(point[1])
    inside = False
    for i, b in enumerate(polygon):
        a = polygon[i - 1]
        if _on_edge(x, y, a, b):
            return True
        if (a[1] > y) != (b[1] > y) and x < a[0] + (y - a[1]) * (b[0] - a[0]) / (b[1] - a[1]):
            inside = not inside
    return inside


def interior_point(polygon: Polygon) -> tuple[float, float]:
    """A point of ``polygon`` for a gold click: the middle of the widest inside stretch of the horizontal line
    through the middle of its bounding box (even-odd, so concave and self-intersecting polygons are handled);
    a degenerate polygon, which has no inside stretch, gives the mean of its vertices (on its segments)."""
    y = (min(p[1] for p in polygon) + max(p[1] for p in polygon)) / 2
    xs = sorted(a[0] + (y - a[1]) * (b[0] - a[0]) / (b[1] - a[1])
                for a, b in zip((polygon[-1], *polygon[:-1]), polygon, strict=True) if (a[1] > y) != (b[1] > y))
    stretches = [(xs[i + 1] - xs[i], xs[i]) for i in range(0, len(xs) - 1, 2)]
    width, left = max(stretches, default=(0.0, 0.0))
    if width > 0:
        return left + width / 2, y
    return sum(p[0] for p in polygon) / len(polygon), sum(p[1] for p in polygon) / len(polygon)


__all__ = ["EDGE_EPS", "MIN_VERTICES", "Polygon", "REFUSAL_ACTION", "REFUSAL_ACTIONS", "as_polygon", "interior_point",
           "point_in_polygon", "polygon_bbox", "polygon_error", "refuses"]
