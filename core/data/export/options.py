""":class:`ExportOptions`, the options of every exporter (the bottom of :mod:`core.data.export`: the driver and
:mod:`.common` both read it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(kw_only=True)
class ExportOptions:
    """Options of every exporter.

    ``max_pixels``/``min_pixels``: store images already resized to the Qwen ``smart_resize`` size within these
    bounds (None for both = keep the original bytes untouched; gold coordinates then assume the template's
    own pixel bounds, by default the processor's 3136..12,845,056). ``template``: prompt template name from ``core.prompts`` (None = the
    default for each step's task type). ``name``: dataset name. ``workers``: threads for image work.
    ``resume``: continue an interrupted run from its checkpoint. ``llamafactory_dataset_info``: the
    ``dataset_info.json`` to create/update (None = ``<output_dir>/../dataset_info.json``). ``skip_missing``: an
    image that cannot be exported is counted and skipped (else the run stops naming the record), as the readers
    do with ``--skip-missing``.
    """

    name: str = "gui-agent"
    max_pixels: int | None = None
    min_pixels: int | None = None
    template: str | None = None
    workers: int = 1
    resume: bool = True
    llamafactory_dataset_info: Path | None = None
    skip_missing: bool = False

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name or self.name.strip() != self.name:
            raise ValueError(f"name must be a non-empty file-name-safe string, got {self.name!r}")
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        for f in ("max_pixels", "min_pixels"):
            v = getattr(self, f)
            if v is not None and v <= 0:
                raise ValueError(f"{f} must be positive, got {v}")
        if self.max_pixels and self.min_pixels and self.min_pixels > self.max_pixels:
            raise ValueError(f"min_pixels {self.min_pixels} > max_pixels {self.max_pixels}")

    @property
    def resizes(self) -> bool:
        return self.max_pixels is not None or self.min_pixels is not None


__all__ = ["ExportOptions"]
