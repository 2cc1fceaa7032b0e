"""The unified step record used by every ingest, export, reward and metric.

Coordinates (``Step.bbox``, the points inside ``Step.action`` and ``Step.history``) are float pixels of the
ORIGINAL image (``Step.image_size`` = (width, height)).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from core.actions import Action
from core.regions import polygon_error

TaskType = Literal["low", "high", "grounding"]
TASK_TYPES: tuple[str, ...] = ("low", "high", "grounding")
#: ``Step.extra`` key of a polygon gold region (:mod:`core.regions`): ``[[x, y], ...]`` ORIGINAL pixels, at least
#: three vertices, inside the image; ``Step.bbox`` holds its bounding box.
POLYGON_KEY = "polygon"
#: ``Step.extra`` key of the gold box as a benchmark's reference evaluator compares it, [x1, y1, x2, y2] FRACTIONS
#: of the image (MMBench-GUI L2, which compares in fractions: :func:`core.data.ingest.mmbench_gui.box_fractions`);
#: prediction rows carry it as ``gt_bbox_fractions`` (:func:`core.inference.rows.gold_columns`).
FRACTION_BOX_KEY = "bbox_fractions"


class HistoryItem(BaseModel):
    """One previous step of the episode: the structured action and/or a natural-language description."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Action | None = None
    description: str | None = None


class StepValidationError(ValueError):
    """A record that cannot become a :class:`Step`; the message names the record and the field."""

    def __init__(self, record: str, field: str, message: str):
        self.record, self.field, self.reason = record, field, message
        super().__init__(f"record {record}: field '{field}': {message}")


class _FieldError(ValueError):
    """A cross-field check that knows which field is wrong (pydantic alone would report the whole record)."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


def non_finite_field(value: Any, path: str) -> str | None:
    """The dotted path of the first NaN/inf number inside ``value`` (models, mappings, sequences, any depth;
    iterative, so deep JSON cannot exhaust the stack), else None."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return where
            continue
        if isinstance(item, BaseModel):
            item = {name: getattr(item, name) for name in type(item).model_fields}
        if isinstance(item, dict):
            children = [(f"{where}.{k}" if where else str(k), v) for k, v in item.items()]
        elif isinstance(item, (list, tuple)):
            children = [(f"{where}[{i}]", v) for i, v in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))  # depth first, in order: the first bad number is reported
    return None


class Step(BaseModel):
    """One GUI step: a screenshot, an instruction and the gold action.

    - ``image``: encoded image bytes, or a path (str) to the image file; ``image_size`` is its ORIGINAL
      (width, height) in pixels.
    - ``history``: previous steps of the episode (structured); ``history_text`` keeps a dataset's own
      rendering verbatim when it has one (GUI-R1's ``history`` column), so prompts can reproduce it exactly.
    - ``task_type``: ``low`` (element-level instruction), ``high`` (goal-level) or ``grounding``.
    - ``bbox``: gold element box (x1, y1, x2, y2), ORIGINAL pixels, optional.
    - ``group``: platform / group (mobile, web, desktop, or a dataset's own group); ``ui_type``: text / icon.
    - ``extra``: source-specific fields kept through the pipeline (episode id, step index, verify_bbox, ...);
      ``extra["polygon"]`` (:data:`POLYGON_KEY`) is a polygon gold region, checked here like ``bbox``.
    - A refusal row (the instruction's target is not on the screen; OSWorld-G) has the gold action
      ``impossible`` (:data:`core.regions.REFUSAL_ACTION`) and no ``bbox``.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    id: str
    image: bytes | str | None = None
    image_size: tuple[int, int]
    instruction: str
    history: tuple[HistoryItem, ...] = ()
    history_text: str | None = None
    task_type: TaskType = "low"
    action: Action
    bbox: tuple[float, float, float, float] | None = None
    source: str = "unknown"
    group: str | None = None
    ui_type: str | None = None
    split: str | None = None
    extra: dict[str, Any] = {}

    @field_validator("instruction")
    @classmethod
    def _instruction_not_empty(cls, v: str) -> str:
        if not v or not v.strip():
            raise ValueError("instruction is empty")
        return v

    @field_validator("image_size")
    @classmethod
    def _positive_size(cls, v: tuple[int, int]) -> tuple[int, int]:
        if v[0] <= 0 or v[1] <= 0:
            raise ValueError(f"image_size must be positive (width, height), got {v}")
        return v

    @model_validator(mode="after")
    def _geometry(self) -> Step:
        """Every number finite (NaN compares false, so it would pass the range checks), then boxes and points
        inside the image."""
        for name in ("action", "bbox", "history", "extra"):
            bad = non_finite_field(getattr(self, name), name)
            if bad is not None:
                raise _FieldError(bad.split("[")[0], f"{bad[:200]} is not a finite number")
        w, h = self.image_size
        if self.bbox is not None:
            x1, y1, x2, y2 = self.bbox
            if x2 < x1 or y2 < y1:
                raise _FieldError("bbox", f"bbox {list(self.bbox)} has x2 < x1 or y2 < y1")
            if x1 < 0 or y1 < 0 or x2 > w or y2 > h:
                raise _FieldError("bbox", f"bbox {list(self.bbox)} lies outside the {w}x{h} image")
        if POLYGON_KEY in self.extra:
            reason = polygon_error(self.extra[POLYGON_KEY])
            if reason:
                raise _FieldError(f"extra.{POLYGON_KEY}", reason)
            for x, y in self.extra[POLYGON_KEY]:
                if not (0 <= x <= w and 0 <= y <= h):
                    raise _FieldError(f"extra.{POLYGON_KEY}", f"vertex {[x, y]} lies outside the {w}x{h} image")
        for name in ("point", "end_point"):
            p = getattr(self.action, name)
            if p is not None and not (0 <= p[0] <= w and 0 <= p[1] <= h):
                raise _FieldError(f"action.{name}", f"action.{name} {list(p)} lies outside the {w}x{h} image")
        return self

    @classmethod
    def build(cls, record_name: str, **fields: Any) -> Step:
        """Validate ``fields`` into a Step; raise :class:`StepValidationError` naming the record and field."""
        try:
            return cls(**fields)
        except ValidationError as e:
            err = e.errors()[0]
            cause = (err.get("ctx") or {}).get("error")
            loc = cause.field if isinstance(cause, _FieldError) else ".".join(str(p) for p in err["loc"]) or "record"
            raise StepValidationError(record_name, loc, err["msg"].removeprefix("Value error, ")) from None

    def image_bytes(self) -> bytes:
        """The encoded image (reads the file when ``image`` is a path)."""
        if isinstance(self.image, bytes):
            return self.image
        if isinstance(self.image, str):
            with open(self.image, "rb") as f:
                return f.read()
        raise StepValidationError(self.id, "image", "no image bytes or path")

    def image_sha1(self) -> str:
        return hashlib.sha1(self.image_bytes()).hexdigest()


__all__ = ["FRACTION_BOX_KEY", "POLYGON_KEY", "HistoryItem", "Step", "StepValidationError", "TASK_TYPES", "TaskType", "non_finite_field"]
