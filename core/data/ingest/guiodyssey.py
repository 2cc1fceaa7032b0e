"""GUIOdyssey and other chat-style records whose gold action is a ``solution`` string (btl-ui layout).

A record: ``images`` (paths such as ``examples/images/<name>``, resolved against ``--images`` then the
record's folder), ``image_sizes`` ``[[w, h]]``, ``messages`` (system/user/assistant chat; the user turn holds
``## User Instruction`` and ``## Action History`` sections), ``solution`` (JSON list ``[{"Action":
{"function": "Tap", "point_2d": [x, y]}}]``, ORIGINAL pixels) and an optional ``bbox`` [x1, y1, x2, y2].
Functions: Tap, LongPress, Type, Swipe (direction kept as written), Back, Home, Enter, Wait, Complete/Finish,
Impossible. The ``## Action History`` text is kept verbatim in ``Step.history_text``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.data.ingest._common import (
    image_candidates,
    read_json_steps,
    load_image,
    make_action,
    numbers,
)
from core.data.summary import ConversionSummary
from core.schema import Step, StepValidationError

_FUNCTIONS = {"tap": "click", "click": "click", "longpress": "long_press", "long_press": "long_press",
              "type": "type", "swipe": "scroll", "scroll": "scroll", "back": "press_back", "home": "press_home",
              "enter": "press_enter", "wait": "wait", "complete": "complete", "finish": "complete",
              "impossible": "impossible"}
_SECTION = r"##\s*{}\s*\n(.{{0,20000}}?)(?=\n##\s|\Z)"
_INSTRUCTION_RE = re.compile(_SECTION.format("User Instruction"), re.DOTALL)
_HISTORY_RE = re.compile(_SECTION.format("Action History"), re.DOTALL)
_MAX_SOLUTION_CHARS = 100_000


def _user_text(rec: dict[str, Any], record: str) -> str:
    turns = rec.get("messages") or rec.get("conversations") or []
    if not isinstance(turns, list):
        raise StepValidationError(record, "messages", f"expected a list of turns, got {type(turns).__name__}")
    for i, m in enumerate(turns):
        if not isinstance(m, dict):
            raise StepValidationError(record, f"messages[{i}]", f"expected a turn object, got {type(m).__name__}")
        if m.get("role", m.get("from")) in ("user", "human"):
            content = m.get("content", m.get("value", ""))
            if isinstance(content, list):  # OpenAI-style content parts
                content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content)
    return ""


def solution_action(solution: Any, record: str):
    """The Action of a ``solution`` string (ORIGINAL pixels)."""
    if isinstance(solution, str):
        if len(solution) > _MAX_SOLUTION_CHARS:
            raise StepValidationError(record, "solution", f"longer than {_MAX_SOLUTION_CHARS} characters")
        try:
            solution = json.loads(solution)
        except (json.JSONDecodeError, RecursionError) as e:
            raise StepValidationError(record, "solution", f"not JSON: {type(e).__name__}: {e}") from None
    item = solution[0] if isinstance(solution, list) and solution else solution
    call = item.get("Action", item) if isinstance(item, dict) else None
    if not isinstance(call, dict):
        raise StepValidationError(record, "solution", f"no Action object in {solution!r:.200}")
    fn = str(call.get("function", "")).strip()
    kind = _FUNCTIONS.get(fn.lower())
    if kind is None:
        raise StepValidationError(record, "solution", f"unknown function {fn!r}")
    point = None
    if kind in ("click", "long_press"):
        point = tuple(numbers(record, "solution.point_2d", call.get("point_2d"), (2,)))
    return make_action(record, "solution", type=kind, point=point,
                       text=call.get("text") if kind == "type" else None,
                       direction=call.get("direction") if kind == "scroll" else None)


def record_to_step(rec: dict[str, Any], *, record: str, images_dir: Path | None, record_dir: Path) -> Step:
    images = rec.get("images") or ([rec["image"]] if rec.get("image") else [])
    if not images:
        raise StepValidationError(record, "image", "missing image: no images field")
    if not isinstance(images, list) or not isinstance(images[0], str):
        raise StepValidationError(record, "images", f"expected a list of image paths, got {images!r:.200}")
    sizes = rec.get("image_sizes") or []
    if not isinstance(sizes, list):
        raise StepValidationError(record, "image_sizes", f"expected [[w, h]], got {sizes!r:.200}")
    declared = tuple(numbers(record, "image_sizes", sizes[0], (2,))) if sizes else None
    image, size = load_image(record, image_candidates(str(images[0]), images_dir=images_dir,
                                                      record_dir=record_dir), declared_size=declared)
    text = _user_text(rec, record)
    m = _INSTRUCTION_RE.search(text)
    if not m:
        raise StepValidationError(record, "messages", "no '## User Instruction' section in the user turn")
    hist = _HISTORY_RE.search(text)
    bbox = tuple(numbers(record, "bbox", rec["bbox"], (4,))) if rec.get("bbox") is not None else None
    return Step.build(
        record, id=record, image=image, image_size=size, instruction=m.group(1).strip(),
        history_text=hist.group(1).strip() if hist else None, task_type="high",
        action=solution_action(rec.get("solution"), record), bbox=bbox, source="guiodyssey", group="mobile",
        extra={"image_path": str(images[0]), "solution": rec.get("solution"),
               **({"max_pixels": rec["max_pixels"]} if rec.get("max_pixels") is not None else {})},
    )


def read_guiodyssey(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
                    summary: ConversionSummary) -> Iterator[Step]:
    """Steps of chat-style ``solution`` records (a ``.json``/``.jsonl`` file or every one under a folder)."""
    yield from read_json_steps(
        Path(input_path), (".json", ".jsonl"), skip_missing=skip_missing, summary=summary,
        to_step=lambda rec, record, path: record_to_step(rec, record=record, images_dir=images_dir,
                                                         record_dir=path.parent))


__all__ = ["read_guiodyssey", "record_to_step", "solution_action"]
