"""The gold record: what the right action of one step is, in which coordinate frame, on which image.

:class:`GoldRecord` is the one typed answer to "what should the model have done": the action (canonical
:mod:`core.actions` name), its target (``box`` x1, y1, x2, y2 and/or ``point`` x, y), ``text``, scroll
``direction``, the mobile ``button`` / ``status`` it was written as, the image geometry (``image_size`` ORIGINAL
[W, H] px, ``resized_size`` [W, H] px of the image the model saw) and ``frame``, the frame of ``box``/``point``
(:class:`core.geometry.Frame`), always explicit. ``frame_inferred`` is True only when a legacy file did not say
and :func:`infer_legacy_frame` guessed. ``polygon`` is a polygon gold region (:mod:`core.regions`; ``box`` is then
its bounding box), written to prediction rows as ``gt_polygon``.

One writer/reader pair per on-disk flavour (the README's "records and frames" table):

========================  ==========================================  ===========================================
flavour                   write                                        read
========================  ==========================================  ===========================================
GUI-R1 ground truth JSON  :meth:`GoldRecord.to_guir1`                  :func:`from_reward_inputs`
verl ``extra_info``       :meth:`GoldRecord.to_extra_info`             :func:`from_reward_inputs` (its 2nd arg)
trl / ms-swift columns    :meth:`GoldRecord.to_reward_columns`         :func:`from_reward_inputs` (row kwargs)
mobile_use ground truth   :meth:`GoldRecord.to_mobile_use`             :func:`from_reward_inputs`
prediction file row       :meth:`GoldRecord.to_prediction_columns`     :func:`from_prediction_row`
========================  ==========================================  ===========================================

:func:`from_step` builds the record of a :class:`core.schema.Step` in any frame. Readers raise
:class:`GoldRecordError` naming the field; they never evaluate anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.actions import (
    GUIR1_NO_TARGET,
    Action,
    ActionArgs,
    NO_INPUT_TEXT,
    canonical_action_name,
    from_mobile_use,
    to_mobile_use,
)
from core.geometry import Frame, ImageGeometry
from core.numbers import NumberError, checked_number
from core.regions import Polygon, as_polygon
from core.schema import POLYGON_KEY

#: Actions written in the mobile_use flavour (Qwen3-VL tool call names).
MOBILE_USE_NAMES = frozenset({"click", "long_press", "swipe", "type", "answer", "system_button", "wait",
                              "terminate", "open", "key"})
MOBILE_ONLY_NAMES = frozenset({"system_button", "terminate", "swipe", "open", "key"})
MOBILE_USE_KEYS = frozenset({"coordinate", "coordinate2", "text", "button", "status", "time"})


class GoldRecordError(ValueError):
    """A gold record field that cannot be used; ``field`` names it (``extra_info.image_size``, ``gt_bbox``...)."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"ground truth field '{field}': {reason}")
        self.field, self.reason = field, reason


@dataclass(frozen=True)
class GoldRecord(ActionArgs):
    """The right action of one step: its name, its :class:`~core.actions.ActionArgs` and the gold ``box``.
    Coordinates in ``frame``; sizes are [W, H] pixels (see module docstring)."""

    action: str
    frame: Frame
    box: tuple[float, float, float, float] | None = None
    polygon: Polygon | None = None
    image_size: tuple[int, int] | None = None
    resized_size: tuple[int, int] | None = None
    frame_inferred: bool = False

    @property
    def geometry(self) -> ImageGeometry | None:
        """Original and resized sizes (None when the record has no ``image_size``)."""
        if self.image_size is None:
            return None
        w, h = self.image_size
        rw, rh = self.resized_size or self.image_size
        return ImageGeometry(width=w, height=h, resized_width=rw, resized_height=rh)

    @property
    def has_target(self) -> bool:
        return self.box is not None or self.point is not None

    def convert(self, xy: Sequence[float], src: Frame, dst: Frame) -> tuple[float, float]:
        """A point from frame ``src`` to ``dst`` on this record's image (pixel frames need ``image_size``)."""
        if src is dst:
            return float(xy[0]), float(xy[1])
        unit = {Frame.NORMALIZED: 1.0, Frame.GRID1000: 1000.0}
        if src in unit and dst in unit:
            return xy[0] / unit[src] * unit[dst], xy[1] / unit[src] * unit[dst]
        g = self.geometry
        if g is None:
            raise GoldRecordError("extra_info.image_size",
                                  f"needed to compare a {src.value}-frame point with a {dst.value}-frame target")
        return g.point((xy[0], xy[1]), src, dst)

    def in_frame(self, frame: Frame) -> GoldRecord:
        """The same record with ``box``/``point`` converted to ``frame``."""
        if frame is self.frame:
            return self
        box = None
        if self.box is not None:
            x1, y1 = self.convert(self.box[:2], self.frame, frame)
            x2, y2 = self.convert(self.box[2:], self.frame, frame)
            box = (x1, y1, x2, y2)
        point = None if self.point is None else self.convert(self.point, self.frame, frame)
        end = None if self.end_point is None else self.convert(self.end_point, self.frame, frame)
        polygon = None if self.polygon is None else tuple(self.convert(v, self.frame, frame) for v in self.polygon)
        return replace(self, box=box, point=point, end_point=end, polygon=polygon, frame=frame)

    # ------------------------------------------------------------------------------------------- writers

    def guir1_bbox(self, digits: int | None = 4) -> list[float]:
        """GUI-R1's ``gt_bbox``: the box, else the point, else ``[-100, -100]`` (numbers in ``frame``, rounded to
        ``digits`` decimals; None keeps them exact)."""
        target = self.box if self.box is not None else self.point
        if target is None:
            return list(GUIR1_NO_TARGET)
        return [float(v) if digits is None else round(v, digits) for v in target]

    def guir1_input_text(self) -> str:
        """GUI-R1's ``input_text``: the scroll direction, the text, else ``'no input text'``."""
        if self.action == "scroll":
            return self.direction or NO_INPUT_TEXT
        return self.text or NO_INPUT_TEXT

    def to_guir1(self) -> dict[str, Any]:
        """``{"action", "gt_bbox", "input_text", "frame"}``: GUI-R1's ground truth JSON plus its frame."""
        return {"action": self.action, "gt_bbox": self.guir1_bbox(), "input_text": self.guir1_input_text(),
                "frame": self.frame.value}

    def to_extra_info(self) -> dict[str, Any]:
        """The gold part of verl's ``extra_info``: frame, sizes, box/point in ``frame`` and in ORIGINAL pixels."""
        orig = self.in_frame(Frame.ORIGINAL) if self.geometry is not None else None

        def rounded(v: Sequence[float] | None) -> list[float] | None:
            return None if v is None else [round(x, 4) for x in v]

        return {
            "frame": self.frame.value,
            "image_size": list(self.image_size) if self.image_size else None,
            "resized_size": list(self.resized_size) if self.resized_size else None,
            "bbox": rounded(self.box), "point": rounded(self.point),
            "bbox_original": rounded(orig.box) if orig else None,
            "point_original": rounded(orig.point) if orig else None,
        }

    def to_reward_columns(self) -> dict[str, Any]:
        """trl / ms-swift row columns (rewards get them as keyword arguments): ``ground_truth`` JSON,
        ``extra_info`` (frame and sizes) and flat ``gt_action``/``gt_bbox``/``gt_input_text``/sizes/``frame``."""
        gt = self.to_guir1()
        info = self.to_extra_info()
        return {
            "ground_truth": json.dumps(gt),
            "extra_info": {"frame": info["frame"], "image_size": info["image_size"],
                           "resized_size": info["resized_size"]},
            "gt_action": gt["action"], "gt_bbox": gt["gt_bbox"], "gt_input_text": gt["input_text"],
            "image_size": info["image_size"], "resized_size": info["resized_size"],
            "bbox_original": info["bbox_original"], "frame": info["frame"],
        }

    def to_mobile_use(self) -> dict[str, Any] | None:
        """The ``mobile_use`` arguments (coordinates as ints on the 0-1000 grid), or None without a mobile form."""
        grid = self.in_frame(Frame.GRID1000)
        action = Action(type=self.action, point=grid.point, end_point=grid.end_point, text=self.text,
                        direction=self.direction, duration=self.duration)
        args = to_mobile_use(action, 1000, 1000)
        if args is None:
            return None
        for key in ("coordinate", "coordinate2"):
            if args.get(key) is not None:
                args[key] = [round(args[key][0]), round(args[key][1])]
        if args.get("time") is not None:
            args["time"] = float(args["time"])
        return args

    def to_prediction_columns(self) -> dict[str, Any]:
        """Gold columns of a prediction file row: GUI-R1's ``gt_*`` in ORIGINAL pixels plus ``gt_frame``, and
        ``gt_polygon`` (``[[x, y], ...]``) when the gold region is a polygon."""
        orig = self.in_frame(Frame.ORIGINAL)
        cols = {"gt_action": self.action, "gt_bbox": orig.guir1_bbox(None), "gt_input_text": self.guir1_input_text(),
                "image_size": list(self.image_size) if self.image_size else None, "gt_frame": Frame.ORIGINAL.value}
        if orig.polygon is not None:
            cols["gt_polygon"] = [list(v) for v in orig.polygon]
        return cols


# --------------------------------------------------------------------------------------------- builders


def from_step(step: Any, geometry: ImageGeometry, frame: Frame) -> GoldRecord:
    """The gold record of a :class:`core.schema.Step` (ORIGINAL pixels) with coordinates in ``frame``; the polygon
    region of ``step.extra`` (:data:`core.schema.POLYGON_KEY`, validated by the Step) comes along."""
    a = step.action
    polygon = step.extra.get(POLYGON_KEY)
    rec = GoldRecord(
        action=a.type, frame=Frame.ORIGINAL,
        box=None if step.bbox is None else tuple(float(v) for v in step.bbox),  # type: ignore[arg-type]
        polygon=None if polygon is None else as_polygon(polygon),
        point=None if a.point is None else (float(a.point[0]), float(a.point[1])),
        end_point=None if a.end_point is None else (float(a.end_point[0]), float(a.end_point[1])),
        text=a.text, direction=a.direction, duration=a.duration,
        image_size=(geometry.width, geometry.height), resized_size=(geometry.resized_width, geometry.resized_height),
    )
    return rec.in_frame(frame)


def _numbers(value: Any, field: str, lengths: tuple[int, ...]) -> tuple[float, ...]:
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy arrays from parquet / verl
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) not in lengths:
        raise GoldRecordError(field, f"expected {' or '.join(map(str, lengths))} numbers, got {value!r}"[:200])
    out = []
    for v in value:
        if not isinstance(v, (int, float)):
            raise GoldRecordError(field, f"not a finite number: {v!r}"[:200])
        try:
            out.append(checked_number(v, field))
        except NumberError as e:
            raise GoldRecordError(field, e.reason) from None
    return tuple(out)


def _size(extra: Mapping, key: str) -> tuple[int, int] | None:
    v = extra.get(key)
    if v is None:
        return None
    w, h = _numbers(v, f"extra_info.{key}", (2,))
    if w <= 0 or h <= 0:
        raise GoldRecordError(f"extra_info.{key}", f"size must be positive, got {[w, h]}")
    return int(w), int(h)


def parse_frame(value: Any, field: str) -> Frame | None:
    """A frame name as :class:`Frame` (None stays None); :class:`GoldRecordError` naming ``field`` otherwise."""
    if value is None:
        return None
    try:
        return Frame(str(value).strip().lower())
    except ValueError:
        raise GoldRecordError(field, f"unknown frame {value!r}; known: {[f.value for f in Frame]}") from None


def infer_legacy_frame(coords: Sequence[float], declared: Frame | None) -> tuple[Frame, bool]:
    """The frame of a legacy ground-truth target and whether it was guessed.

    A declared normalized frame is kept; coordinates all in [0, 1] (not all 0) are 'normalized' whatever the
    file says (no real pixel box is 1 px wide; GUI-R1's ``train.parquet`` boxes are fractions); otherwise the
    declared frame, else 'resized' (GUI-R1's answers are resized pixels).
    """
    if declared is not Frame.NORMALIZED and all(0.0 <= c <= 1.0 for c in coords) and any(c > 0 for c in coords):
        return Frame.NORMALIZED, True
    if declared is None:
        return Frame.RESIZED, True
    return declared, False


def load_json_object(value: Any, field: str = "ground_truth") -> dict:
    """A JSON object string, bytes or mapping as a dict; :class:`GoldRecordError` otherwise (never evaluates)."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise GoldRecordError(field, f"expected a JSON object string, got {type(value).__name__}")
    try:
        obj = json.loads(value)
    except (ValueError, RecursionError) as e:
        raise GoldRecordError(field, f"invalid JSON ({e})"[:200]) from None
    if not isinstance(obj, dict):
        raise GoldRecordError(field, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _text(gt: Mapping, key: str) -> str | None:
    v = gt.get(key)
    if v is not None and not isinstance(v, str):
        raise GoldRecordError(key, f"expected a string, got {type(v).__name__}")
    return None if v is None or v.strip().lower() == NO_INPUT_TEXT else v


def _is_mobile_use(gt: Mapping) -> bool:
    """mobile_use arguments: no GUI-R1 keys, and a mobile-only name or a mobile argument key."""
    if "gt_bbox" in gt or "input_text" in gt:
        return False
    name = str(gt.get("action", "")).lower()
    return name in MOBILE_ONLY_NAMES or (name in MOBILE_USE_NAMES and bool(MOBILE_USE_KEYS.intersection(gt)))


def _from_mobile_use(gt: Mapping, extra: Mapping, sizes: dict[str, Any]) -> GoldRecord:
    try:
        action = from_mobile_use(dict(gt))
    except (ValueError, TypeError) as e:
        raise GoldRecordError("action", str(e)[:200]) from None
    frame = parse_frame(gt.get("frame"), "frame") or parse_frame(extra.get("frame"), "extra_info.frame") or Frame.GRID1000
    button = gt.get("button") if isinstance(gt.get("button"), str) else None
    status = gt.get("status") if isinstance(gt.get("status"), str) else None
    return GoldRecord(action=action.type, frame=frame, point=action.point, end_point=action.end_point,
                      text=action.text, direction=action.direction, duration=action.duration, button=button,
                      status=status, **sizes)


def from_reward_inputs(ground_truth: Any, extra_info: Mapping | None = None) -> GoldRecord:
    """Read a reward's gold inputs, any flavour: GUI-R1 ``{"action", "gt_bbox", "input_text"[, "frame"]}`` or
    ``mobile_use`` ``{"action", "coordinate", "text", "button", "status"}`` JSON, with verl's ``extra_info`` or
    trl/ms-swift's row columns (``frame``, ``image_size``, ``resized_size``, ``bbox_original``); ``extra_info`` is
    a mapping or a JSON object string (anything else is a :class:`GoldRecordError` on ``extra_info``).

    The frame is ``ground_truth["frame"]``, else ``extra_info["frame"]``; a legacy row without one goes through
    :func:`infer_legacy_frame` and the record says ``frame_inferred``. A target given only as
    ``extra_info["bbox_original"]`` (or the older spelling ``gt_bbox_original``) is read in ORIGINAL pixels.
    """
    gt = load_json_object(ground_truth)
    extra = {} if extra_info is None else load_json_object(extra_info, "extra_info")
    action = gt.get("action")
    if not isinstance(action, str) or not action.strip():
        raise GoldRecordError("action", f"expected an action name, got {action!r}"[:200])
    sizes = {"image_size": _size(extra, "image_size"), "resized_size": _size(extra, "resized_size")}
    if _is_mobile_use(gt):
        return _from_mobile_use(gt, extra, sizes)
    name = canonical_action_name(action)
    text = _text(gt, "input_text")
    direction = text.strip().lower() if name == "scroll" and text else None
    declared = parse_frame(gt.get("frame"), "frame") or parse_frame(extra.get("frame"), "extra_info.frame")
    raw = gt.get("gt_bbox")
    if hasattr(raw, "tolist"):
        raw = raw.tolist()
    coords = None if raw is None or (isinstance(raw, Sequence) and len(raw) == 0) else \
        _numbers(raw, "gt_bbox", (2, 4))
    if coords is not None and tuple(coords) == tuple(GUIR1_NO_TARGET):
        coords = None
    base = GoldRecord(action=name, frame=declared or Frame.RESIZED, text=None if direction else text,
                      direction=direction, **sizes)
    if coords is not None:
        frame, guessed = infer_legacy_frame(coords, declared)
        box = coords if len(coords) == 4 else None
        return replace(base, frame=frame, frame_inferred=guessed, box=box,  # type: ignore[arg-type]
                       point=None if box else coords)
    for key in ("bbox_original", "gt_bbox_original"):
        if extra.get(key) is not None:
            c = _numbers(extra[key], f"extra_info.{key}", (2, 4))
            return replace(base, frame=Frame.ORIGINAL, box=c if len(c) == 4 else None,  # type: ignore[arg-type]
                           point=None if len(c) == 4 else c)
    return base if declared else replace(base, frame_inferred=True)


def from_prediction_row(row: Mapping, where: str = "row") -> GoldRecord:
    """The gold record of a prediction file row (``gt_action``, ``gt_bbox`` ORIGINAL px, ``gt_input_text``,
    ``image_size``); rows written before ``gt_frame`` existed are ORIGINAL pixels by definition."""
    frame = parse_frame(row.get("gt_frame"), f"{where}: gt_frame") or Frame.ORIGINAL
    gt = {"action": row.get("gt_action"), "gt_bbox": row.get("gt_bbox"), "input_text": row.get("gt_input_text"),
          "frame": frame.value}
    return from_reward_inputs(gt, {"image_size": row.get("image_size")})


__all__ = [
    "GoldRecord",
    "GoldRecordError",
    "MOBILE_USE_NAMES",
    "from_prediction_row",
    "from_reward_inputs",
    "from_step",
    "infer_legacy_frame",
    "load_json_object",
    "parse_frame",
]
