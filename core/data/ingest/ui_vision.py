"""UI-Vision element grounding annotations (Nayak et al., ICML 2025, arXiv:2503.15661; huggingface.co/datasets/
ServiceNow/ui-vision, ``annotations/element_grounding/element_grounding_{basic,functional,spatial}.json``; images
under its ``images/``, pass that folder as ``--images``).

A record: ``image_path`` (relative to ``images/``), ``image_size`` [W, H], ``bbox`` [x1, y1, x2, y2] ORIGINAL
pixels (reversed corners are swapped, as the reference evaluator ``eval/grounding/eval_uivision.py`` of
github.com/uivision/UI-Vision does), ``prompt_to_evaluate`` (the instruction), ``element_type`` (text / icon),
``platform`` (the application) and ``category`` (Education, Browsers, Development, Productivity, Creativity,
Entertainment). The setting (basic, functional, spatial) is the file's: ``element_grounding_<setting>.json``.

Steps: ``group`` = the setting, ``ui_type`` = the category (what ``gui-agent eval`` breaks results down by);
``extra`` keeps ``platform``, ``element_type`` and the image name, and ``bbox_fractions``
(:data:`core.schema.FRACTION_BOX_KEY`): the box as the reference compares it, each corner divided by
``image_size`` (``eval_sample_positive_gt``), so ``gui-agent eval`` decides exact edges as it does. A folder ``--input`` reads every
``element_grounding_*.json`` under it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.data.ingest._common import grounding_step, image_candidates, image_path_and_size, numbers, read_json_steps
from core.data.summary import ConversionSummary
from core.eval.registry import UI_VISION_SETTINGS
from core.schema import FRACTION_BOX_KEY, Step

FILE_PREFIX = "element_grounding_"


def setting_of(path: Path) -> str:
    """The setting an annotation file holds, from its name; ``ValueError`` for a file not named like UI-Vision's."""
    setting = path.stem.removeprefix(FILE_PREFIX)
    if not path.stem.startswith(FILE_PREFIX) or setting not in UI_VISION_SETTINGS:
        raise ValueError(f"{path.name}: UI-Vision element grounding files are named {FILE_PREFIX}<setting>.json "
                         f"with setting {', '.join(UI_VISION_SETTINGS)}; the setting of this one is unknown")
    return setting


def record_to_step(rec: dict[str, Any], *, record: str, images_dir: Path | None, record_dir: Path,
                   setting: str) -> Step:
    """One UI-Vision record as a grounding Step (bbox x1, y1, x2, y2 ORIGINAL pixels)."""
    name, size = image_path_and_size(record, rec)
    x1, y1, x2, y2 = numbers(record, "bbox", rec.get("bbox"), (4,))
    box = (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
    return grounding_step(
        record, image_candidates(name, images_dir=images_dir, record_dir=record_dir),
        declared_size=size, instruction=rec.get("prompt_to_evaluate"), source="ui_vision",
        split=setting, bbox=box, group=setting, ui_type=rec.get("category"),
        extra={"image_name": name, FRACTION_BOX_KEY: [v / size[i % 2] for i, v in enumerate(box)],
               **{k: rec[k] for k in ("platform", "element_type") if rec.get(k) is not None}})


def annotation_files(input_path: Path) -> list[Path]:
    """``input_path`` itself, or every ``element_grounding_*.json`` under the folder (sorted)."""
    path = Path(input_path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"input {path} does not exist")
    files = sorted(p for p in path.rglob(f"{FILE_PREFIX}*.json") if p.is_file())
    if not files:
        raise FileNotFoundError(f"no {FILE_PREFIX}<setting>.json file under {path}")
    return files


def read_ui_vision(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
                   summary: ConversionSummary) -> Iterator[Step]:
    """Steps of UI-Vision element grounding files (a folder: every ``element_grounding_*.json`` under it)."""
    for path, setting in [(p, setting_of(p)) for p in annotation_files(input_path)]:  # every name checked first
        yield from read_json_steps(
            path, (".json",), skip_missing=skip_missing, summary=summary,
            to_step=lambda rec, record, p, setting=setting: record_to_step(
                rec, record=record, images_dir=images_dir, record_dir=p.parent, setting=setting))


__all__ = ["annotation_files", "read_ui_vision", "record_to_step", "setting_of"]
