"""Helpers shared by every reader: image loading, error-or-skip handling, record iteration, notes.

Readers raise :class:`core.schema.StepValidationError` for a bad record; :func:`guard` turns it into a
``summary.skip(reason, record)`` when the user asked to skip (``--skip-missing``), else lets it propagate.
Image failures use the reasons ``missing image`` / ``corrupt image`` / ``image size mismatch`` / ``image too
large`` / ``image outside root``; any other invalid field ``F`` is counted as ``invalid F``.

Images a record names are looked up only inside the dataset's folder or the ``--images`` root (lexically: a
path that climbs out with ``..`` or is absolute elsewhere is never opened), must decode as an image (header
read and, for PNG, every chunk's CRC checked, so a truncated file is caught) and may hold at most
:func:`image_pixel_limit` pixels (a decompression bomb is a row error, never a crash).
"""

from __future__ import annotations

import io
import json
import logging
import os
import struct
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError
from pydantic import ValidationError

from core.actions import Action
from core.data.summary import ConversionSummary
from core.geometry import box_center
from core.numbers import NumberError, checked_number
from core.regions import REFUSAL_ACTION, Polygon, interior_point, polygon_bbox
from core.schema import POLYGON_KEY, Step, StepValidationError

log = logging.getLogger("core.data.ingest")

MISSING_IMAGE = "missing image"
CORRUPT_IMAGE = "corrupt image"
SIZE_MISMATCH = "image size mismatch"
TOO_LARGE = "image too large"
OUTSIDE_ROOT = "image outside root"
_IMAGE_REASONS = (MISSING_IMAGE, CORRUPT_IMAGE, SIZE_MISMATCH, TOO_LARGE, OUTSIDE_ROOT)
#: Default pixel limit of one image: Pillow's own ``Image.MAX_IMAGE_PIXELS`` (89,478,485 px, about 9458 x 9458).
DEFAULT_IMAGE_PIXEL_LIMIT = 89_478_485


def skip_reason(err: StepValidationError) -> str:
    """The summary reason of a validation error (image reasons verbatim, else ``invalid <field>``)."""
    for reason in _IMAGE_REASONS:
        if err.field == "image" and err.reason.startswith(reason):
            return reason
    return f"invalid {err.field}"


def handle(err: StepValidationError, *, skip_missing: bool, summary: ConversionSummary) -> None:
    """Re-raise ``err``, or count it as skipped when ``skip_missing``."""
    if not skip_missing:
        raise err
    summary.skip(skip_reason(err), err.record)
    log.debug("skipped %s", err)


def note(summary: ConversionSummary, message: str) -> None:
    """Log ``message`` and keep it on the summary (``summary.notes``) for the final report."""
    log.info(message)
    summary.note(message)


def image_pixel_limit() -> int:
    """The largest image (width x height, pixels) any reader or Pillow decode accepts in this process."""
    return int(Image.MAX_IMAGE_PIXELS or DEFAULT_IMAGE_PIXEL_LIMIT)


def set_image_pixel_limit(pixels: int) -> None:
    """Set the pixel limit (``--max-image-pixels``). It is Pillow's own ``Image.MAX_IMAGE_PIXELS``, so every
    decode in the process (exporters, inference, gallery) refuses the same bombs the readers refuse."""
    if pixels < 1:
        raise ValueError(f"the image pixel limit must be >= 1, got {pixels}")
    Image.MAX_IMAGE_PIXELS = int(pixels)


def image_size_of(data: bytes, record: str) -> tuple[int, int]:
    """(width, height) from the image header, without decoding pixels; a PNG's chunk CRCs are verified too
    (catches truncation). ``corrupt image`` when unreadable, ``image too large`` over the pixel limit."""
    limit = image_pixel_limit()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our own limit check follows
            with Image.open(io.BytesIO(data)) as im:
                w, h = im.size
                if w * h <= limit and im.format == "PNG":
                    im.verify()
    except Image.DecompressionBombError:  # Pillow refuses twice its limit before we see the size
        raise StepValidationError(record, "image", f"{TOO_LARGE}: over twice the limit of {limit} pixels "
                                                   "(--max-image-pixels)") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, struct.error, EOFError) as e:
        raise StepValidationError(record, "image", f"{CORRUPT_IMAGE}: {type(e).__name__}: {e}") from None
    if w <= 0 or h <= 0:
        raise StepValidationError(record, "image", f"{CORRUPT_IMAGE}: size {w}x{h}")
    if w * h > limit:
        raise StepValidationError(record, "image", f"{TOO_LARGE}: {w}x{h} = {w * h} pixels exceeds the limit of "
                                                   f"{limit} (--max-image-pixels)")
    return w, h


class ImageCandidates(list):
    """Paths to try for an image, all inside the allowed roots; ``outside`` keeps the names that pointed
    elsewhere (never opened), for the error message."""

    def __init__(self, paths: list[Path], outside: list[str]):
        super().__init__(paths)
        self.outside = outside


def load_image(record: str, candidates: list[Path],
               declared_size: tuple[int, int] | None = None) -> tuple[bytes, tuple[int, int]]:
    """Bytes and (width, height) of the first existing file in ``candidates``, passed through unchanged.

    ``declared_size`` (width, height) is what the record claims; a different header size is an error because
    the record's coordinates would not match the pixels.
    """
    for path in candidates:
        try:
            if not path.is_file():
                continue
            data = path.read_bytes()
        except OSError as e:  # name too long, permission denied, ...
            raise StepValidationError(record, "image", f"{MISSING_IMAGE}: cannot read {str(path)[:300]}: "
                                                       f"{e.strerror or e}") from None
        return data, checked_size(record, data, declared_size)
    tried = ", ".join(str(p)[:300] for p in candidates) or "no path"
    outside = getattr(candidates, "outside", [])
    if outside:
        raise StepValidationError(record, "image", f"{OUTSIDE_ROOT}: {outside[0][:300]!r} lies outside the dataset "
                                                   f"folder and --images (tried only {tried})")
    raise StepValidationError(record, "image", f"{MISSING_IMAGE}: tried {tried}")


def checked_size(record: str, data: bytes, declared_size: tuple[int, int] | None) -> tuple[int, int]:
    size = image_size_of(data, record)
    if declared_size is not None and tuple(int(v) for v in declared_size) != size:
        raise StepValidationError(record, "image",
                                  f"{SIZE_MISMATCH}: record says {list(declared_size)}, file is {list(size)}")
    return size


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` lies inside ``root``, lexically (``..`` and absolute paths resolved, links not)."""
    root_s = os.path.normpath(os.path.abspath(root))
    path_s = os.path.normpath(os.path.abspath(path))
    return path_s == root_s or path_s.startswith(root_s.rstrip(os.sep) + os.sep)


def image_candidates(name: str, *, images_dir: Path | None, record_dir: Path) -> ImageCandidates:
    """Where an image named ``name`` (a path as the dataset wrote it) may be: ``--images`` first (full relative
    path, then the base name), then next to the record (same two forms, plus ``images/<base name>``). A form
    that leaves its root (absolute elsewhere, ``..``) is dropped and kept in ``.outside``."""
    rel = Path(name)
    base = Path(rel.name)
    out: list[Path] = []
    outside: list[str] = []
    roots = ([images_dir] if images_dir is not None else []) + [record_dir]
    for root in roots:
        for path in (root / rel, root / base):
            if inside(root, path):
                out.append(path)
            elif name not in outside:
                outside.append(name)
    if inside(record_dir, record_dir / "images" / base):
        out.append(record_dir / "images" / base)
    seen: set[Path] = set()
    return ImageCandidates([p for p in out if not (p in seen or seen.add(p))], outside)


def make_action(record: str, field: str, **fields: Any) -> Action:
    """An :class:`Action` from ``fields`` (None values dropped); an invalid one is an error on ``field``."""
    try:
        return Action(**{k: v for k, v in fields.items() if v is not None})
    except ValidationError as e:
        msg = e.errors()[0]["msg"].removeprefix("Value error, ")
        raise StepValidationError(record, field, msg) from None


def text_field(value: Any) -> Any:
    """A record's text field (an instruction) as :meth:`Step.build` gets it: absent (None) is "" (Step: "is empty");
    anything else as it is, so Step refuses a list, object, number or boolean by the field's name (as it refuses a
    wrongly typed ``group``) instead of the reader writing its Python repr."""
    return "" if value is None else value


def number(record: str, field: str, value: Any) -> float:
    """``value`` as a finite float (:func:`core.numbers.checked_number`), or an error naming the record and field."""
    try:
        return checked_number(value, field)
    except NumberError as e:
        raise StepValidationError(record, field, e.reason) from None


def numbers(record: str, field: str, value: Any, lengths: tuple[int, ...]) -> list[float]:
    """A list of finite floats whose length is one of ``lengths``."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if len(value) <= 10_000 else None
        except (json.JSONDecodeError, RecursionError):
            raise StepValidationError(record, field, f"not a list of numbers: {value!r:.200}") from None
    if not isinstance(value, (list, tuple)) or len(value) not in lengths:
        raise StepValidationError(record, field,
                                  f"expected {' or '.join(map(str, lengths))} numbers, got {value!r:.200}")
    return [number(record, field, v) for v in value]


def image_path_and_size(record: str, rec: dict[str, Any]) -> tuple[str, tuple[int, int]]:
    """The ``image_path`` and declared ``image_size`` (W, H) of a grounding benchmark record."""
    name = rec.get("image_path")
    if not isinstance(name, str) or not name:
        raise StepValidationError(record, "image_path", "missing image: no image_path field")
    w, h = numbers(record, "image_size", rec.get("image_size"), (2,))
    return name, (int(w), int(h))


def one_of(record: str, field: str, value: Any, allowed: tuple[str, ...]) -> str:
    """``value`` when it is one of ``allowed``, else an error on ``field`` listing them."""
    if value not in allowed:
        raise StepValidationError(record, field, f"expected one of {', '.join(allowed)}, got {value!r:.80}")
    return value


def grounding_step(record: str, candidates: list[Path], *, declared_size: tuple[int, int] | None, instruction: Any,
                   source: str, split: str, bbox: tuple[float, float, float, float] | None = None,
                   polygon: Polygon | None = None, group: Any = None, ui_type: Any = None,
                   extra: dict[str, Any] | None = None) -> Step:
    """A ``grounding`` Step whose gold region is ``bbox`` (x1, y1, x2, y2), ``polygon`` (vertices) or neither (a
    refusal row: the target is absent), all in ORIGINAL pixels of the image found among ``candidates``
    (``declared_size`` [W, H] checked against its header). The gold action: a click at the box centre, at
    :func:`core.regions.interior_point` of the polygon (``Step.bbox`` its bounding box, the vertices in
    ``extra["polygon"]``), or ``impossible``."""
    image, size = load_image(record, candidates, declared_size=declared_size)
    extra = dict(extra or {})
    if polygon is not None:
        bbox = polygon_bbox(polygon)
        extra[POLYGON_KEY] = [list(v) for v in polygon]
        action = make_action(record, "polygon", type="click", point=interior_point(polygon))
    elif bbox is not None:
        action = make_action(record, "bbox", type="click", point=box_center(bbox))
    else:
        action = make_action(record, "action", type=REFUSAL_ACTION)
    return Step.build(record, id=record, image=image, image_size=size, instruction=text_field(instruction),
                      task_type="grounding", action=action, bbox=bbox, source=source, group=group, ui_type=ui_type,
                      split=split, extra=extra)


def read_json_steps(input_path: Path, suffixes: tuple[str, ...], *, skip_missing: bool,
                    summary: ConversionSummary, to_step: Callable[[dict, str, Path], Step]) -> Iterator[Step]:
    """Steps of every JSON record of the ``suffixes`` files under ``input_path``: ``to_step(record, name, file)``
    per object (record name ``<file stem>:<id or index>``); bad records raise or, with ``skip_missing``, count."""
    for path in input_files(Path(input_path), suffixes):
        for i, rec in iter_json_records(path):
            summary.read += 1
            try:
                if isinstance(rec, StepValidationError):
                    raise rec
                record = f"{path.stem}:{rec.get('id', i) if isinstance(rec, dict) else i}"
                if not isinstance(rec, dict):
                    raise StepValidationError(record, "record", f"expected a JSON object, got {type(rec).__name__}")
                yield to_step(rec, record, path)
            except StepValidationError as e:
                handle(e, skip_missing=skip_missing, summary=summary)


def iter_json_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(index, record) of a ``.jsonl`` file (streamed line by line) or a ``.json`` list (one record per item;
    a single object counts as one record). A line (or file) that is not UTF-8 JSON comes as
    ``(index, StepValidationError)`` naming ``<file>:<line>``, for the caller to raise or count."""
    if path.suffix == ".jsonl":
        with path.open("rb") as f:
            for i, raw in enumerate(f):
                if raw.strip():
                    try:
                        yield i, json.loads(raw.decode("utf-8"))
                    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
                        yield i, StepValidationError(f"{path.name}:{i + 1}", "record", _json_error(e))
        return
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        line = (raw[:e.start].count(b"\n") + 1 if isinstance(e, UnicodeDecodeError)
                else e.lineno if isinstance(e, json.JSONDecodeError) else 1)
        yield 0, StepValidationError(f"{path.name}:{line}", "record", _json_error(e))
        return
    yield from enumerate(data if isinstance(data, list) else [data])


def _json_error(e: Exception) -> str:
    if isinstance(e, UnicodeDecodeError):
        return f"not UTF-8: byte {e.object[e.start:e.start + 1]!r} at offset {e.start}"
    if isinstance(e, RecursionError):
        return "JSON nested too deeply"
    return f"invalid JSON: {e}"


def input_files(input_path: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """``input_path`` itself, or every file with one of ``suffixes`` under the folder (sorted, recursive)."""
    input_path = Path(input_path)
    if input_path.is_file():
        return [input_path]
    if not input_path.is_dir():
        raise FileNotFoundError(f"input {input_path} does not exist")
    files = sorted(p for p in input_path.rglob("*") if p.is_file() and p.suffix in suffixes)
    if not files:
        raise FileNotFoundError(f"no {'/'.join(suffixes)} file under {input_path}")
    return files
