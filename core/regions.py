"""Gold regions other than a box: polygons (OSWorld-G's ``polygon`` box type) and the refusal region.

A polygon is a tuple of (x, y) vertices in ORIGINAL-image pixels, in order (either orientation) and closed
implicitly (the last vertex joins the first). :func:`point_in_polygon` defines containment as OSWorld-G's
official evaluator does (``_is_point_in_polygon`` of its ``_eval``; docs/evaluation.md cites it): even-odd ray
casting, a horizontal ray from the point to +x crossing an edge when the edge's ends lie on either side of the
point's height (``y_i > y`` differs from ``y_j > y``) and the point is strictly left of the crossing. So a point on
the boundary is inside or outside as the crossing test falls (on a box-shaped polygon: the left and top edges in,
the right and bottom edges out), and a degenerate polygon (zero area) holds no point at all.

A polygon has at least :data:`MIN_VERTICES` vertices (:func:`polygon_error`). A refusal gold (the instruction's
target is not on the screen) has no region at all: its gold action is ``impossible`` (:data:`REFUSAL_ACTION`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.actions import canonical_action_name
from core.console import quoted
from core.numbers import is_finite_number

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


def point_in_polygon(point: Sequence[float], polygon: Polygon) -> bool:
    """Whether ``point`` (x, y) lies in ``polygon`` (same frame), by OSWorld-G's evaluator's test (module docstring):
    for each edge from the previous vertex j to vertex i, a crossing when ``(y_i > y) != (y_j > y)`` and
    ``x < (x_j - x_i) * (y - y_i) / (y_j - y_i) + x_i``, computed in that order so exact edges fall as there."""
    x, y = float(point[0]), float(point[1])
    inside = False
    for i, (xi, yi) in enumerate(polygon):
        xj, yj = polygon[i - 1]
        if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
            inside = not inside
    return inside


def interior_point(polygon: Polygon) -> tuple[float, float]:
    """A point of ``polygon`` for a gold click: the middle of the widest inside stretch of the horizontal line
    through the middle of its bounding box (even-odd, so concave and self-intersecting polygons are handled);
    a degenerate polygon, which has no inside at all, gives the mean of its vertices (on its segments; no click
    hits such a gold)."""
    y = (min(p[1] for p in polygon) + max(p[1] for p in polygon)) / 2
    xs = sorted(a[0] + (y - a[1]) * (b[0] - a[0]) / (b[1] - a[1])
                for a, b in zip((polygon[-1], *polygon[:-1]), polygon, strict=True) if (a[1] > y) != (b[1] > y))
    stretches = [(xs[i + 1] - xs[i], xs[i]) for i in range(0, len(xs) - 1, 2)]
    width, left = max(stretches, default=(0.0, 0.0))
    if width > 0:
        return left + width / 2, y
    return sum(p[0] for p in polygon) / len(polygon), sum(p[1] for p in polygon) / len(polygon)


__all__ = ["MIN_VERTICES", "Polygon", "REFUSAL_ACTION", "REFUSAL_ACTIONS", "as_polygon", "interior_point",
           "point_in_polygon", "polygon_bbox", "polygon_error", "refuses"]
