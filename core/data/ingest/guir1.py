"""GUI-R1 parquet files (train/test and the benchmark files).

Columns: ``image`` (struct{bytes, path} or binary), ``instruction``, ``history`` (kept verbatim in
``Step.history_text``), ``gt_action``, ``gt_bbox``, ``gt_input_text`` (``no input text`` when unused),
``task_type`` (high/low), ``group``, ``ui_type`` and optionally ``id``, ``verify_bbox``, ``success_rate``,
``scale``. ``gt_bbox`` is ``[x1, y1, x2, y2]`` or a 2-number point; a negative value marks "no box" (GUI-R1
writes ``[-100, -100]`` for actions without a target). The box frame is decided per file by a vote of its rows:
a row whose non-negative coordinates are all <= 1 votes normalized, a row with one above 1 votes pixels; the
file is normalized ([0, 1], train.parquet) when the normalized votes win, else ORIGINAL pixels (benchmark files).
One bad row cannot flip a file: the rows that disagree with their file's frame are named errors (``gt_bbox``).
``coords="normalized"|"pixels"`` (``--coords``) forces the frame and skips the vote. Rows are streamed in
record batches.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from core.actions import NO_INPUT_TEXT, POINT_ACTIONS, canonical_action_name
from core.data.ingest._common import (
    checked_size,
    handle,
    image_candidates,
    input_files,
    load_image,
    make_action,
    note,
    numbers,
    text_field,
)
from core.data.summary import ConversionSummary
from core.data.unified import iter_parquet_batches
from core.schema import Step, StepValidationError

BATCH_ROWS = 64
NORMALIZED, PIXELS = "normalized", "pixels"
_OPTIONAL_EXTRA = ("verify_bbox", "success_rate", "scale")


@dataclass(frozen=True)
class FileFrame:
    """The box frame of one file: ``frame`` (normalized / pixels), whether the user forced it, and the vote
    (rows with coordinates all in [0, 1] / rows with one above 1)."""

    frame: str
    forced: bool = False
    in_range: int = 0
    above_one: int = 0

    def check(self, record: str, coords: list[float]) -> None:
        """A row whose coordinates contradict a voted frame is an error naming its field."""
        if self.forced or not coords:
            return
        votes = f"{self.in_range} rows of this file are in [0, 1], {self.above_one} have a value above 1"
        if self.frame == NORMALIZED and max(coords) > 1:
            raise StepValidationError(record, "gt_bbox", f"{coords} has a value above 1 in a normalized file "
                                                         f"({votes}); pass --coords to force the frame")
        if self.frame == PIXELS and max(coords) <= 1 and self.in_range:
            raise StepValidationError(record, "gt_bbox", f"{coords} looks normalized in a pixel file "
                                                         f"({votes}); pass --coords to force the frame")

    def describe(self) -> str:
        how = "forced by --coords" if self.forced else f"{self.in_range} rows in [0, 1], {self.above_one} above 1"
        return (f"gt_bbox convention {self.frame} ({how}; "
                + ("[0, 1], scaled by the image size)" if self.frame == NORMALIZED else "original pixels)"))


def _row_coords(value: Any) -> list[float]:
    """The non-negative coordinates of a ``gt_bbox`` value, or [] when it is not a list of finite numbers."""
    try:
        coords = numbers("vote", "gt_bbox", value, (0, 2, 4)) if value is not None else []
    except StepValidationError:
        return []
    return [] if any(v < 0 for v in coords) else coords


def file_frame(path: Path, coords: str | None = None) -> FileFrame:
    """The :class:`FileFrame` of ``path``: ``coords`` when given, else the vote of its rows (only the
    ``gt_bbox`` column is read, batch by batch). A tie or a file without coordinates counts as pixels."""
    if coords is not None:
        if coords not in (NORMALIZED, PIXELS):
            raise ValueError(f"--coords must be {NORMALIZED} or {PIXELS}, got {coords!r}")
        return FileFrame(coords, forced=True)
    if "gt_bbox" not in pq.read_schema(path).names:
        return FileFrame(PIXELS)
    in_range = above_one = 0
    for batch in iter_parquet_batches(path, batch_size=4096, columns=["gt_bbox"]):
        for value in batch.column(0).to_pylist():
            row = _row_coords(value)
            if row:
                in_range += max(row) <= 1
                above_one += max(row) > 1
    return FileFrame(NORMALIZED if in_range > above_one else PIXELS, in_range=in_range, above_one=above_one)


def detect_bbox_convention(path: Path) -> str:
    """``normalized`` or ``pixels``: the frame most rows of the file agree on (:func:`file_frame`)."""
    return file_frame(path).frame


def _image(row: dict[str, Any], record: str, path: Path, images_dir: Path | None
           ) -> tuple[bytes, tuple[int, int]]:
    img = row.get("image")
    data = img.get("bytes") if isinstance(img, dict) else img if isinstance(img, (bytes, bytearray)) else None
    if data:
        return bytes(data), checked_size(record, bytes(data), None)
    name = img.get("path") if isinstance(img, dict) else img if isinstance(img, str) else None
    if not name or not isinstance(name, str):
        raise StepValidationError(record, "image", "missing image: no bytes and no path in the row")
    return load_image(record, image_candidates(name, images_dir=images_dir, record_dir=path.parent))


def _text(value: Any) -> str | None:
    if value is None:
        return None
    s = str(value)
    return None if s.strip().lower() == NO_INPUT_TEXT or not s.strip() else s


def row_to_step(row: dict[str, Any], *, record: str, image: bytes, size: tuple[int, int],
                convention: str | FileFrame, split: str) -> Step:
    """One GUI-R1 row as a Step (coordinates scaled to ORIGINAL pixels when the file is normalized)."""
    frame = convention if isinstance(convention, FileFrame) else FileFrame(convention, forced=True)
    w, h = size
    sx, sy = (w, h) if frame.frame == NORMALIZED else (1.0, 1.0)
    name = canonical_action_name(str(row.get("gt_action") or ""))
    text = _text(row.get("gt_input_text"))
    raw_box = row.get("gt_bbox")
    coords = [] if raw_box is None else numbers(record, "gt_bbox", raw_box, (0, 2, 4))
    if any(v < 0 for v in coords):  # GUI-R1's "no target" marker
        coords = []
    frame.check(record, coords)
    point: tuple[float, float] | None = None
    bbox: tuple[float, float, float, float] | None = None
    if len(coords) == 4:
        bbox = (coords[0] * sx, coords[1] * sy, coords[2] * sx, coords[3] * sy)
    elif len(coords) == 2:
        point = (coords[0] * sx, coords[1] * sy)
    fields: dict[str, Any] = {"type": name}
    if name in POINT_ACTIONS:
        if point is None and bbox is not None:
            point = ((bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2)
        if point is None:
            raise StepValidationError(record, "gt_bbox", f"action {name!r} needs a box or point, got {raw_box!r}")
        fields["point"] = point
    elif name == "scroll":
        fields["direction"] = text
    elif text is not None:
        fields["text"] = text
    action = make_action(record, "gt_action", **fields)
    extra = {k: row[k] for k in ("id", *_OPTIONAL_EXTRA) if row.get(k) is not None}
    extra["bbox_convention"] = frame.frame
    history = row.get("history")
    return Step.build(
        record,
        id=record, image=image, image_size=size,
        instruction=text_field(row.get("instruction")),
        history_text=None if history is None else str(history),
        task_type=str(row.get("task_type") or "low").strip().lower(),
        action=action, bbox=bbox, source="guir1",
        group=row.get("group"), ui_type=row.get("ui_type"), split=split, extra=extra,
    )


def parse_row(row: dict[str, Any], *, record: str, path: Path, images_dir: Path | None,
              convention: str | FileFrame) -> Step:
    """A raw GUI-R1 row of file ``path`` as a Step (image from the row's bytes, or its path resolved against
    ``images_dir`` / the file's folder)."""
    image, size = _image(row, record, path, images_dir)
    return row_to_step(row, record=record, image=image, size=size, convention=convention, split=path.stem)


def record_name(path: Path, row: dict[str, Any], index: int) -> str:
    """``<file stem>:<id>`` (or the row index when the file has no ``id`` column)."""
    return f"{path.stem}:{row['id'] if row.get('id') is not None else index}"


def read_guir1(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
               summary: ConversionSummary, coords: str | None = None) -> Iterator[Step]:
    """Steps of a GUI-R1 parquet file (or every ``*.parquet`` under a folder), ORIGINAL pixels; ``coords``
    forces the box frame of every file (``normalized`` / ``pixels``), else each file's rows vote."""
    for path in input_files(Path(input_path), (".parquet",)):
        frame = file_frame(path, coords)
        note(summary, f"{path.name}: {frame.describe()}")
        index = 0
        for batch in iter_parquet_batches(path, batch_size=BATCH_ROWS):
            for row in batch.to_pylist():
                record = record_name(path, row, index)
                index += 1
                summary.read += 1
                try:
                    yield parse_row(row, record=record, path=path, images_dir=images_dir, convention=frame)
                except StepValidationError as e:
                    handle(e, skip_missing=skip_missing, summary=summary)


__all__ = ["NORMALIZED", "PIXELS", "FileFrame", "detect_bbox_convention", "file_frame", "parse_row", "read_guir1", "record_name", "row_to_step"]
