"""ScreenSpot grounding annotations (v1, v2 and ScreenSpot-Pro style), images from ``--images``.

- v1 (and v2): ``bbox`` is ``[x, y, w, h]`` in ORIGINAL pixels, image name in ``image`` or ``img_filename``,
  ``platform``/``data_type`` give group/ui_type.
- Pro style: records carrying ``img_size`` ``[w, h]`` have ``bbox`` ``[x1, y1, x2, y2]`` and ``group``/
  ``ui_type`` fields; ``img_size`` is checked against the image header.
- SeeClick's v1 files and OS-Atlas' v2 files (``screenspot_<platform>[_v2].json``) carry no platform field: the
  group is then the platform named in the file name (mobile, desktop or web).

Every record becomes a ``grounding`` step whose gold action is a click at the box centre.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.data.ingest._common import (
    image_candidates,
    read_json_steps,
    load_image,
    make_action,
    numbers,
    text_field,
)
from core.data.summary import ConversionSummary
from core.geometry import box_center, xywh_to_xyxy
from core.schema import Step, StepValidationError

_EXTRA_KEYS = ("data_source", "application", "platform", "description", "scale", "id")


_PLATFORMS = ("mobile", "desktop", "web")


def platform_of_file(stem: str) -> str | None:
    """``mobile`` / ``desktop`` / ``web`` when a ScreenSpot file name says it (``screenspot_web_v2``), else None."""
    parts = stem.lower().split("_")
    return next((p for p in _PLATFORMS if p in parts), None)


def record_to_step(rec: dict[str, Any], *, record: str, images_dir: Path | None, record_dir: Path,
                   split: str) -> Step:
    """One ScreenSpot record as a grounding Step (bbox x1, y1, x2, y2 ORIGINAL pixels)."""
    name = rec.get("img_filename") or rec.get("image")
    if not name:
        raise StepValidationError(record, "image", "missing image: no image / img_filename field")
    pro_style = rec.get("img_size") is not None
    declared = tuple(numbers(record, "img_size", rec["img_size"], (2,))) if pro_style else None
    raw = numbers(record, "bbox", rec.get("bbox"), (4,))
    bbox = tuple(raw) if pro_style else xywh_to_xyxy(raw)
    image, size = load_image(record, image_candidates(str(name), images_dir=images_dir, record_dir=record_dir),
                             declared_size=declared)
    return Step.build(
        record, id=record, image=image, image_size=size,
        instruction=text_field(rec.get("instruction")), task_type="grounding",
        action=make_action(record, "bbox", type="click", point=box_center(bbox)),
        bbox=bbox, source="screenspot",
        group=rec.get("group") or rec.get("platform") or platform_of_file(split),
        ui_type=rec.get("ui_type") or rec.get("data_type"),
        split=split,
        extra={"bbox_format": "xyxy" if pro_style else "xywh", "image_name": str(name),
               **{k: rec[k] for k in _EXTRA_KEYS if rec.get(k) is not None}},
    )


def read_screenspot(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
                    summary: ConversionSummary) -> Iterator[Step]:
    """Steps of a ScreenSpot ``.jsonl``/``.json`` annotation file (or every one under a folder)."""
    yield from read_json_steps(
        Path(input_path), (".jsonl", ".json"), skip_missing=skip_missing, summary=summary,
        to_step=lambda rec, record, path: record_to_step(rec, record=record, images_dir=images_dir,
                                                         record_dir=path.parent, split=path.stem))


__all__ = ["platform_of_file", "read_screenspot", "record_to_step"]
