"""The unified step parquet (:mod:`core.data.unified`) as an export target: Steps as they are, ORIGINAL pixels.

Images are stored inline byte for byte; ``max_pixels``/``min_pixels``/``template`` do not apply (the unified
format keeps original coordinates and no prompts). Written atomically by :class:`core.data.unified.UnifiedWriter`;
a rerun rewrites it (there is no per-row resume for this cheap copy).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from core.data.export.common import ExportOptions
from core.data.summary import ConversionSummary, refuse_nothing_written
from core.data.unified import UnifiedWriter
from core.schema import Step, StepValidationError


def export_unified(steps: Iterable[Step], output_dir: Path, *, options: ExportOptions,
                   summary: ConversionSummary) -> Path:
    """Write ``<output_dir>/<name>.parquet`` in the unified schema; returns its path."""
    from core.console import progress_bar

    out = Path(output_dir) / f"{options.name}.parquet"
    with UnifiedWriter(out) as writer:
        for step in progress_bar(steps, desc=f"unified {options.name}", unit="step"):
            if step.image is None:
                summary.skip("no image", step.id)
                continue
            if isinstance(step.image, str):
                try:
                    step = step.model_copy(update={"image": step.image_bytes()})
                except (OSError, StepValidationError) as e:
                    summary.skip("image missing or unreadable", f"{step.id}: {e}")
                    continue
            writer.write(step)
            summary.written += 1
        refuse_nothing_written(summary, skip_missing=options.skip_missing)  # in the writer: leaves no file
    return out
