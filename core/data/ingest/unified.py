"""Read back a unified parquet (``core.data.unified``): rows are streamed in record batches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from core.data.ingest._common import OUTSIDE_ROOT, checked_size, handle, input_files, inside, load_image
from core.data.summary import ConversionSummary
from core.data.unified import iter_unified_batches, row_to_step
from core.schema import Step, StepValidationError


def checked_image(step: Step, root: Path) -> Step:
    """``step`` with its image checked: inline bytes must decode to the stored size; a path (relative ones are
    resolved against ``root``) must lie inside ``root`` and hold such an image. Returns the step with the
    resolved path."""
    if isinstance(step.image, bytes):
        checked_size(step.id, step.image, step.image_size)
        return step
    if not isinstance(step.image, str) or not step.image:
        raise StepValidationError(step.id, "image", "missing image: no bytes and no path")
    path = root / step.image
    if not inside(root, path):
        raise StepValidationError(step.id, "image", f"{OUTSIDE_ROOT}: {step.image[:300]!r} lies outside {root} "
                                                    "(the dataset folder, or --images)")
    load_image(step.id, [path], declared_size=step.image_size)
    return step.model_copy(update={"image": str(path)})


def read_unified(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
                 summary: ConversionSummary) -> Iterator[Step]:
    """Steps of a unified parquet (or every ``*.parquet`` under a folder). Inline image bytes are checked to be
    a readable image of the stored size; an image path must lie inside ``images_dir`` (default: the parquet's
    folder), relative ones are resolved against it."""
    for path in input_files(Path(input_path), (".parquet",)):
        root = Path(images_dir) if images_dir is not None else path.parent
        index = 0
        for batch in iter_unified_batches(path):
            for row in batch.to_pylist():
                summary.read += 1
                record = f"{path.stem}:{index}" if row.get("id") in (None, "") else str(row["id"])
                index += 1
                try:
                    yield checked_image(row_to_step(row, record), root)
                except StepValidationError as e:
                    handle(e, skip_missing=skip_missing, summary=summary)


__all__ = ["checked_image", "read_unified"]
