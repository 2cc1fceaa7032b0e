"""MMBench-GUI L2 GUI element grounding annotations (Wang et al., arXiv:2507.19478; github.com/open-compass/
MMBench-GUI; ``L2_annotations.json`` and ``offline_images/<platform>/`` of huggingface.co/datasets/OpenGVLab/
MMBench-GUI; pass ``offline_images`` as ``--images``).

A record: ``index``, ``image_path``, ``image_size`` [W, H], ``instruction``, ``bbox`` [x1, y1, x2, y2],
``data_type`` (text / icon), ``platform`` (``os_windows``, ``os_mac``, ``os_linux``, ``os_ios``, ``os_android``,
``os_web``), ``app_name`` and ``grounding_type`` (``basic`` / ``advanced`` instruction). ``bbox`` is read as the
reference evaluator (``benchmarks/l2_element_grounding.py``) reads it: a box whose four values all lie in [0, 1]
is fractions of the image size; any other box is ORIGINAL pixels, a value of exactly -1 in it becoming 0. The
Step's ``bbox`` is ORIGINAL pixels; ``extra["bbox_fractions"]`` (:data:`core.schema.FRACTION_BOX_KEY`) is the box
as the reference compares it, fractions of the image (the file's own fractions, or each pixel value divided by the
image's width or height), so ``gui-agent eval`` decides exact edges as the reference does. Images are looked up as ``<platform>/<image_path>`` first (the reference's layout),
then as ``image_path``.

Steps: ``group`` = the platform, ``ui_type`` = the grounding type (what ``gui-agent eval`` breaks results down by,
so a row without one of the six platforms, or of the two types, is an error naming the row here, at convert);
``extra`` keeps ``data_type``, ``app_name``, ``index`` and the image name. A folder ``--input`` reads its
``L2_annotations.json``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.data.ingest._common import (
    ImageCandidates,
    grounding_step,
    image_candidates,
    image_path_and_size,
    numbers,
    one_of,
    read_json_steps,
)
from core.data.summary import ConversionSummary
from core.eval.registry import MMBENCH_GUI_LEVELS, MMBENCH_GUI_PLATFORMS
from core.schema import FRACTION_BOX_KEY, Step

DEFAULT_FILE = "L2_annotations.json"


def box_pixels(box: list[float], width: float, height: float) -> tuple[float, float, float, float]:
    """The reference's reading of an L2 ``bbox`` (see the module docstring), as ORIGINAL pixels."""
    x1, y1, x2, y2 = box
    if all(0 <= v <= 1 for v in box):
        return x1 * width, y1 * height, x2 * width, y2 * height
    return tuple(0.0 if v == -1 else v for v in box)  # type: ignore[return-value]


def box_fractions(box: list[float], width: float, height: float) -> list[float]:
    """The box the reference compares a click with (``evaluate``: a box of four values in [0, 1] as it is, any other
    box each value, -1 as 0, divided by the image's width or height), [x1, y1, x2, y2] FRACTIONS of the image."""
    if all(0 <= v <= 1 for v in box):
        return [float(v) for v in box]
    return [(0 if v == -1 else v) / (width if i % 2 == 0 else height) for i, v in enumerate(box)]


def _candidates(name: str, platform: Any, images_dir: Path | None, record_dir: Path) -> ImageCandidates:
    forms = [f"{platform}/{name}", name] if isinstance(platform, str) and platform else [name]
    found = [image_candidates(n, images_dir=images_dir, record_dir=record_dir) for n in forms]
    paths = [p for c in found for p in c]
    return ImageCandidates(list(dict.fromkeys(paths)), [o for c in found for o in c.outside])


def record_to_step(rec: dict[str, Any], *, record: str, images_dir: Path | None, record_dir: Path,
                   split: str) -> Step:
    """One MMBench-GUI L2 record as a grounding Step (bbox x1, y1, x2, y2 ORIGINAL pixels)."""
    name, size = image_path_and_size(record, rec)
    level = one_of(record, "grounding_type", rec.get("grounding_type"), MMBENCH_GUI_LEVELS)
    platform = one_of(record, "platform", rec.get("platform"), MMBENCH_GUI_PLATFORMS)  # eval's breakdown needs it
    native = numbers(record, "bbox", rec.get("bbox"), (4,))
    box = box_pixels(native, size[0], size[1])
    return grounding_step(
        record, _candidates(name, platform, images_dir, record_dir),
        declared_size=size, instruction=rec.get("instruction"), source="mmbench_gui",
        split=split, bbox=box, group=platform, ui_type=level,
        extra={"image_name": name, FRACTION_BOX_KEY: box_fractions(native, size[0], size[1]),
               **{k: rec[k] for k in ("data_type", "app_name", "index") if rec.get(k) is not None}})


def read_mmbench_gui(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
                     summary: ConversionSummary) -> Iterator[Step]:
    """Steps of an MMBench-GUI ``L2_annotations.json`` (a folder: the one in it)."""
    path = Path(input_path)
    if path.is_dir():
        path = path / DEFAULT_FILE
        if not path.is_file():
            raise FileNotFoundError(f"no {DEFAULT_FILE} in {input_path}; pass the L2 annotation file itself")
    yield from read_json_steps(
        path, (".json",), skip_missing=skip_missing, summary=summary,
        to_step=lambda rec, record, p: record_to_step(rec, record=record, images_dir=images_dir,
                                                      record_dir=p.parent, split=p.stem))


__all__ = ["box_fractions", "box_pixels", "read_mmbench_gui", "record_to_step"]
