"""Android-in-the-Wild / Android-in-the-Zoo episodes, and Aguvis-style pyautogui conversations.

AITW / AitZ: one JSON list of steps per episode (``episode_id``, ``step_id``, ``instruction``, ``image_path``,
``result_action_type``, ``result_action_text``, ``result_touch_yx`` / ``result_lift_yx`` as normalized
**[y, x]**). Action ids: 4 dual point, 3 type, 5 back, 6 home, 7 enter, 10 complete, 11 impossible. A dual
point is a click when touch and lift are within 0.04 (normalized Euclidean distance, AITW's own tap rule),
else a scroll whose direction is the content's (finger up = scroll down, :func:`core.actions.swipe_to_scroll`).
The history of a step is the structured actions of the previous steps, with AitZ's ``coat_action_desc``.

Aguvis: a JSON list of ``{"image": name, "conversations": [{"from": "human"|"gpt", "value": ...}]}`` whose
assistant turn ends with a ``pyautogui.*`` / ``mobile.*`` call in normalized [0, 1] coordinates; parsed with
``core.parsers.parse_pyautogui``. ``extra`` keeps the human turn (``question``) and the last assistant turn
(``answer``) verbatim: R1-V-GUI-agent trains on exactly those (``experiments/r1v``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.actions import Action, swipe_to_scroll
from core.data.ingest._common import handle, image_candidates, input_files, iter_json_records, load_image, make_action
from core.data.ingest._common import numbers, text_field
from core.data.summary import ConversionSummary
from core.geometry import Frame, ImageGeometry
from core.schema import HistoryItem, Step, StepValidationError

#: AITW's tap rule: touch and lift closer than this (normalized) is a tap.
TAP_DISTANCE = 0.04
_SIMPLE_ACTIONS = {5: "press_back", 6: "press_home", 7: "press_enter", 10: "complete", 11: "impossible"}


def aitw_action(step: dict[str, Any], record: str, size: tuple[int, int]) -> Action:
    """The Action of one AITW step (ORIGINAL pixels of an image of ``size`` (width, height))."""
    try:
        kind = int(step.get("result_action_type"))
    except (TypeError, ValueError, OverflowError):
        raise StepValidationError(record, "result_action_type",
                                  f"not an action id: {step.get('result_action_type')!r}") from None
    if kind in _SIMPLE_ACTIONS:
        return make_action(record, "result_action_type", type=_SIMPLE_ACTIONS[kind])
    if kind == 3:
        return make_action(record, "result_action_text", type="type", text=step.get("result_action_text") or None)
    if kind != 4:
        raise StepValidationError(record, "result_action_type", f"unknown AITW action id {kind}")
    ty, tx = numbers(record, "result_touch_yx", step.get("result_touch_yx"), (2,))
    ly, lx = numbers(record, "result_lift_yx", step.get("result_lift_yx"), (2,))
    for name, v in (("result_touch_yx", (ty, tx)), ("result_lift_yx", (ly, lx))):
        if not all(0 <= c <= 1 for c in v):
            raise StepValidationError(record, name, f"normalized [y, x] outside [0, 1]: {list(v)}")
    w, h = size
    if math.hypot(ty - ly, tx - lx) <= TAP_DISTANCE:
        return make_action(record, "result_touch_yx", type="click", point=(tx * w, ty * h))
    return make_action(record, "result_touch_yx", type="scroll",
                       direction=swipe_to_scroll((tx * w, ty * h), (lx * w, ly * h)))


def step_index(step: dict[str, Any], record: str) -> int:
    """The step's ``step_id`` as an int (0 when absent); anything else is an error on ``step_id``."""
    value = step.get("step_id", 0)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise StepValidationError(record, "step_id", f"not an integer: {value!r:.100}")
    try:
        return int(value)
    except ValueError:
        raise StepValidationError(record, "step_id", f"not an integer: {value!r:.100}") from None


def _episode_steps(path: Path, data: list[dict[str, Any]], *, images_dir: Path | None, skip_missing: bool,
                   summary: ConversionSummary) -> Iterator[Step]:
    history: list[HistoryItem] = []
    ordered: list[tuple[int, dict[str, Any]]] = []
    for i, step in enumerate(data):
        try:
            ordered.append((step_index(step, f"{step.get('episode_id', path.stem)}:{i}"), step))
        except StepValidationError as e:
            summary.read += 1
            handle(e, skip_missing=skip_missing, summary=summary)
    ordered.sort(key=lambda pair: pair[0])
    for position, (step_id, step) in enumerate(ordered):
        record = f"{step.get('episode_id', path.stem)}:{step_id if 'step_id' in step else position}"
        summary.read += 1
        desc = str(step["coat_action_desc"]) if step.get("coat_action_desc") else None
        action: Action | None = None
        try:
            name = step.get("image_path") or f"{path.stem}_{step_id if 'step_id' in step else position}.png"
            image, size = load_image(record, image_candidates(str(name), images_dir=images_dir,
                                                              record_dir=path.parent))
            action = aitw_action(step, record, size)
            yield Step.build(
                record, id=record, image=image, image_size=size,
                instruction=text_field(step.get("instruction")), history=tuple(history),
                task_type="high", action=action, source="aitw", group="mobile",
                extra={k: step[k] for k in ("episode_id", "step_id", "episode_length", "coat_action_desc",
                                            "result_touch_yx", "result_lift_yx", "image_path") if k in step},
            )
        except StepValidationError as e:
            handle(e, skip_missing=skip_missing, summary=summary)
        history.append(HistoryItem(action=action, description=desc))


_TASK_RE = re.compile(r"(?:Task|Instruction):\s*(.{1,4000}?)\s*(?:\n\s*\n|\nPrevious (?:actions|operations):|$)",
                      re.DOTALL)
_PREVIOUS_RE = re.compile(r"Previous (?:actions|operations):\s*\n?(.{0,20000})$", re.DOTALL)


def _aguvis_step(rec: dict[str, Any], record: str, *, images_dir: Path | None, record_dir: Path) -> Step:
    from core.parsers import parse_pyautogui

    turns = rec.get("conversations") or []
    if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
        raise StepValidationError(record, "conversations", "expected a list of {from, value} turns")
    human = str(next((t.get("value", "") for t in turns if t.get("from") in ("human", "user")), ""))
    answer = str(next((t.get("value", "") for t in reversed(turns) if t.get("from") in ("gpt", "assistant")), ""))
    m = _TASK_RE.search(human)
    if not m:
        raise StepValidationError(record, "conversations", "no 'Task:'/'Instruction:' line in the human turn")
    prev = _PREVIOUS_RE.search(human)
    image, size = load_image(record, image_candidates(str(rec.get("image") or ""), images_dir=images_dir,
                                                      record_dir=record_dir))
    parsed = parse_pyautogui(answer)
    if not parsed.ok or parsed.action is None:
        raise StepValidationError(record, "conversations", f"assistant turn not parsed: {parsed.error}")
    try:  # Aguvis writes coordinates as fractions of the screen
        action = parsed.action.to_action(ImageGeometry.unresized(*size), Frame.NORMALIZED)
    except ValueError as e:
        raise StepValidationError(record, "conversations", str(e)) from None
    return Step.build(record, id=record, image=image, image_size=size, instruction=m.group(1).strip(),
                      history_text=prev.group(1).strip() if prev else None, task_type="high",
                      action=action, source="aitw", extra={"answer": answer, "question": human})


def read_aitw(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
              summary: ConversionSummary) -> Iterator[Step]:
    """Steps of AITW/AitZ episode files (a ``.json`` or a folder of episode folders) or Aguvis conversations."""
    for path in input_files(Path(input_path), (".json", ".jsonl")):
        records = []
        for _, rec in iter_json_records(path):
            if isinstance(rec, StepValidationError):
                summary.read += 1
                handle(rec, skip_missing=skip_missing, summary=summary)
            else:
                records.append(rec)
        if records and all(isinstance(r, dict) and "result_action_type" in r for r in records):
            episodes: dict[str, list[dict[str, Any]]] = {}
            for r in records:
                episodes.setdefault(str(r.get("episode_id", path.stem)), []).append(r)
            for steps in episodes.values():
                yield from _episode_steps(path, steps, images_dir=images_dir, skip_missing=skip_missing,
                                          summary=summary)
        elif records and all(isinstance(r, dict) and "conversations" in r for r in records):
            for i, rec in enumerate(records):
                record = f"{path.stem}:{rec.get('id', i)}"
                summary.read += 1
                try:
                    yield _aguvis_step(rec, record, images_dir=images_dir, record_dir=path.parent)
                except StepValidationError as e:
                    handle(e, skip_missing=skip_missing, summary=summary)
        else:
            summary.read += 1
            handle(StepValidationError(path.name, "record", "neither AITW episode steps nor Aguvis conversations"),
                   skip_missing=skip_missing, summary=summary)


__all__ = ["TAP_DISTANCE", "aitw_action", "read_aitw"]
