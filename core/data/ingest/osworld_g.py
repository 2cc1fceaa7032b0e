"""OSWorld-G grounding annotations (Jedi, Xie et al., arXiv:2505.13227; github.com/xlang-ai/OSWorld-G,
``benchmark/OSWorld-G.json`` and ``benchmark/OSWorld-G_refined.json``, images in ``benchmark/images/``).

A record: ``id``, ``image_path``, ``image_size`` [W, H], ``instruction``, ``box_type`` and ``box_coordinates``
(ORIGINAL pixels), ``GUI_types`` (list of element types). ``box_type``:

- ``bbox``: ``[x, y, w, h]`` (top-left corner and size); the Step's ``bbox`` is ``[x, y, x + w, y + h]``;
- ``polygon``: vertices ``[x0, y0, x1, y1, ...]`` (a list of ``[x, y]`` pairs is read too), at least three; kept
  in ``extra["polygon"]`` (:data:`core.schema.POLYGON_KEY`) with the bounding box in ``bbox``;
- ``refusal``: the target is not on the screen; ``box_coordinates`` is ignored, the gold action is ``impossible``.

The paper's categories (text_matching, element_recognition, layout_understanding, fine_grained_manipulation,
refusal; a row may have several) come from ``classification_result.json`` beside the annotation file
(``{"classified": {category: [row or row id, ...]}}``); they are written to ``ui_type`` joined by ``+`` in the
paper's order (:data:`core.eval.registry.OSWORLD_G_CATEGORIES`), which is what ``gui-agent eval`` breaks results
down by. Without that file rows carry no category (a summary note says so). A folder ``--input`` reads its ``OSWorld-G.json``; pass
``OSWorld-G_refined.json`` itself for the refined instructions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.console import quoted
from core.data.ingest._common import (
    grounding_step,
    image_candidates,
    image_path_and_size,
    note,
    number,
    numbers,
    one_of,
    read_json_steps,
)
from core.data.summary import ConversionSummary
from core.eval.registry import CATEGORY_SEPARATOR, OSWORLD_G_BOX_TYPES, OSWORLD_G_CATEGORIES
from core.geometry import xywh_to_xyxy
from core.regions import MIN_VERTICES
from core.schema import Step, StepValidationError

CLASSIFICATION_FILE = "classification_result.json"
DEFAULT_FILE = "OSWorld-G.json"


def load_categories(path: Path) -> dict[str, list[str]]:
    """``{row id: [category, ...]}`` from a ``classification_result.json`` (the paper's categories in its order,
    others sorted after them); ``ValueError`` naming the file when it is not that layout."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"{path}: not a JSON classification file: {e}") from None
    classified = data.get("classified") if isinstance(data, dict) else None
    if not isinstance(classified, dict):
        raise ValueError(f"{path}: expected {{\"classified\": {{category: [rows]}}}}")
    order = {c: i for i, c in enumerate(OSWORLD_G_CATEGORIES)}
    out: dict[str, list[str]] = {}
    for category in sorted(classified, key=lambda c: (order.get(c, len(order)), c)):
        entries = classified[category]
        if not isinstance(entries, list):
            raise ValueError(f"{path}: category {quoted(category)} is not a list of rows")
        for entry in entries:
            row_id = entry.get("id") if isinstance(entry, dict) else entry
            if isinstance(row_id, str) and category not in out.setdefault(row_id, []):
                out[row_id].append(category)
    return out


def _polygon(record: str, value: Any) -> tuple[tuple[float, float], ...]:
    """``box_coordinates`` of a polygon row, flat ``[x0, y0, ...]`` or ``[[x0, y0], ...]``, as vertices."""
    pairs = isinstance(value, list) and value and all(isinstance(v, list) and len(v) == 2 for v in value)
    flat = [c for v in value for c in v] if pairs else value
    if not isinstance(flat, list) or len(flat) % 2 or len(flat) < 2 * MIN_VERTICES:
        raise StepValidationError(record, "box_coordinates", f"a polygon needs {MIN_VERTICES} or more [x, y] "
                                                             f"vertices (x0, y0, x1, y1, ...), got {value!r:.200}")
    xy = [number(record, "box_coordinates", v) for v in flat]
    return tuple(zip(xy[0::2], xy[1::2], strict=True))


def record_to_step(rec: dict[str, Any], *, record: str, images_dir: Path | None, record_dir: Path, split: str,
                   categories: dict[str, list[str]] | None) -> Step:
    """One OSWorld-G record as a grounding Step (coordinates ORIGINAL pixels; see the module docstring)."""
    name, size = image_path_and_size(record, rec)
    box_type = one_of(record, "box_type", rec.get("box_type"), OSWORLD_G_BOX_TYPES)
    region: dict[str, Any] = {}
    if box_type == "bbox":
        region["bbox"] = xywh_to_xyxy(numbers(record, "box_coordinates", rec.get("box_coordinates"), (4,)))
    elif box_type == "polygon":
        region["polygon"] = _polygon(record, rec.get("box_coordinates"))
    gui_types = rec.get("GUI_types")
    row_categories = (categories or {}).get(str(rec.get("id")), [])
    return grounding_step(
        record, image_candidates(name, images_dir=images_dir, record_dir=record_dir),
        declared_size=size, instruction=rec.get("instruction"), source="osworld_g",
        split=split, ui_type=CATEGORY_SEPARATOR.join(row_categories) or None,
        extra={"box_type": box_type, "image_name": name, "categories": row_categories,
               **({"GUI_types": gui_types} if isinstance(gui_types, list) else {})},
        **region)


def read_osworld_g(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
                   summary: ConversionSummary) -> Iterator[Step]:
    """Steps of an OSWorld-G annotation file (a folder: its ``OSWorld-G.json``), with the categories of the
    ``classification_result.json`` beside it."""
    path = Path(input_path)
    if path.is_dir():
        path = path / DEFAULT_FILE
        if not path.is_file():
            raise FileNotFoundError(f"no {DEFAULT_FILE} in {input_path}; pass the annotation file itself "
                                    f"({DEFAULT_FILE} or OSWorld-G_refined.json)")
    classification = path.parent / CLASSIFICATION_FILE
    categories = load_categories(classification) if classification.is_file() else None
    if categories is None:
        note(summary, f"no {CLASSIFICATION_FILE} beside {path.name}: rows carry no paper category (ui_type), so "
                      "gui-agent eval reports every row under 'unclassified', as OSWorld-G's script does")
    yield from read_json_steps(
        path, (".json",), skip_missing=skip_missing, summary=summary,
        to_step=lambda rec, record, p: record_to_step(rec, record=record, images_dir=images_dir,
                                                      record_dir=p.parent, split=p.stem, categories=categories))


__all__ = ["CLASSIFICATION_FILE", "load_categories", "read_osworld_g", "record_to_step"]
