"""Readers of native GUI-agent datasets: each streams :class:`core.schema.Step` records.

Every reader has the signature ``read_<name>(input_path, *, images_dir=None, skip_missing=False, summary)``
and yields Steps whose coordinates are ORIGINAL pixels, with image bytes passed through as read. A bad record
(missing/corrupt image, invalid box, unknown action) raises ``StepValidationError`` naming the record, or with
``skip_missing`` is counted in ``summary.skipped`` under its reason; ``summary.read`` counts source records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from core.console import quoted
from core.data.ingest._common import image_pixel_limit, set_image_pixel_limit
from core.data.ingest.aitw import read_aitw
from core.data.ingest.guiodyssey import read_guiodyssey
from core.data.ingest.guir1 import read_guir1
from core.data.ingest.mind2web import read_mind2web
from core.data.ingest.mmbench_gui import read_mmbench_gui
from core.data.ingest.osworld_g import read_osworld_g
from core.data.ingest.screenagent import read_screenagent
from core.data.ingest.screenspot import read_screenspot
from core.data.ingest.ui_vision import read_ui_vision
from core.data.ingest.unified import read_unified
from core.data.summary import ConversionSummary
from core.schema import Step

Reader = Callable[..., Iterator[Step]]

READERS: dict[str, Reader] = {
    "guir1": read_guir1,
    "screenspot": read_screenspot,
    "aitw": read_aitw,
    "mind2web": read_mind2web,
    "guiodyssey": read_guiodyssey,
    "screenagent": read_screenagent,
    "osworld_g": read_osworld_g,
    "ui_vision": read_ui_vision,
    "mmbench_gui": read_mmbench_gui,
    "unified": read_unified,
}


def read(source: str, input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
         summary: ConversionSummary, coords: str | None = None) -> Iterator[Step]:
    """Dispatch to ``READERS[source]``; ``KeyError`` lists the known sources. ``coords`` (normalized / pixels)
    forces the box frame of a GUI-R1 file; other sources state their frame and refuse it (``ValueError``)."""
    if source not in READERS:
        raise KeyError(f"unknown source {quoted(source)}; known: {', '.join(READERS)}")
    if coords is not None:
        if source != "guir1":
            raise ValueError(f"--coords applies to --from guir1 only; {source} files state their own frame")
        return read_guir1(Path(input_path), images_dir=images_dir, skip_missing=skip_missing, summary=summary,
                          coords=coords)
    return READERS[source](Path(input_path), images_dir=images_dir, skip_missing=skip_missing, summary=summary)


__all__ = ["READERS", "image_pixel_limit", "read", "read_aitw", "read_guiodyssey", "read_guir1", "read_mind2web",
           "read_mmbench_gui", "read_osworld_g", "read_screenagent", "read_screenspot", "read_ui_vision",
           "read_unified", "set_image_pixel_limit"]
