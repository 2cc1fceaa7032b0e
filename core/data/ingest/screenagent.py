"""ScreenAgent desktop sessions, in both published layouts (niuzaisheng/ScreenAgent ``data/ScreenAgent/``):

- train: ``<session>/<timestamp>_translate.json`` per step with ``task_prompt_en`` / ``task_prompt_zh`` and
  the other ``_en`` / ``_zh`` fields, ``actions`` a JSON list;
- test: ``<session>/<timestamp>.json`` with ``task_prompt``, ``send_prompt``, ``LLM_response_editer``,
  ``current_task``, ``status`` and ``actions`` (a JSON list, or a Python repr string read by
  :func:`core.parsers.parse_literal`, never evaluated), no ``_en`` / ``_zh`` fields; mouse actions may carry a
  ``clickable_area`` (``upper_left_position`` / ``lower_right_position``), kept as the step's gold ``bbox``.

Screenshots are ``<session>/images/<saved_image_name>`` (1024x768 JPG); ``video_width``/``video_height`` are
checked against the image. When a session holds both ``<ts>.json`` and ``<ts>_translate.json`` the translated
file is read. ``current_task`` (sub-task) and ``task_prompt_zh`` are kept in ``extra``. ``actions[]``:

- ``MouseAction``: ``mouse_action_type`` click (``mouse_button`` right -> rightclick), double_click, move,
  drag (``mouse_position`` -> ``mouse_end_position`` when present), scroll_up/scroll_down; ``mouse_position``
  ``{width: x, height: y}`` is the ORIGINAL pixel point.
- ``KeyboardAction``: ``text`` -> type; ``press`` with ``keyboard_key`` (a key or a list pressed together) ->
  press_enter / press_tab / press_space / press_down / press_pgdn for those single keys, else hotkey
  ``ctrl+s`` style.
- ``WaitAction`` -> wait; ``PlanAction`` and ``EvaluateSubTaskAction`` are the agent's plans and self-checks,
  not screen actions: a step file holding only those is skipped with the reason ``plan action`` /
  ``evaluate action``.

Negative (wrong) examples, ``*_neg_*.json`` (``_translate_neg_plan`` in train, ``_neg_eval`` in test), are
counted and skipped as ``negative sample``. A step file with several screen actions gives one Step per action
(ids ``<session>/<stem>#<k>``); the history of a step is every earlier screen action of the session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.actions import Action
from core.data.ingest._common import handle, image_candidates, load_image, make_action, number
from core.data.summary import ConversionSummary
from core.schema import HistoryItem, Step, StepValidationError

_MOUSE = {"click": "click", "double_click": "doubleclick", "move": "moveto", "drag": "drag"}
_SINGLE_KEYS = {"return": "press_enter", "enter": "press_enter", "kp_enter": "press_enter", "tab": "press_tab",
                "space": "press_space", "down": "press_down", "page_down": "press_pgdn", "next": "press_pgdn"}
_KEY_NAMES = {"control_l": "ctrl", "control_r": "ctrl", "control": "ctrl", "shift_l": "shift", "shift_r": "shift",
              "alt_l": "alt", "alt_r": "alt", "super_l": "win", "super_r": "win", "return": "enter",
              "escape": "esc", "page_down": "pagedown", "page_up": "pageup", "next": "pagedown", "prior": "pageup"}
_SKIPPED = {"PlanAction": "plan action", "EvaluateSubTaskAction": "evaluate action"}
#: A step file's stem: ``<timestamp>[_translate][_neg_<kind>]``.
_STEP_FILE = re.compile(r"(?P<ts>\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\d+)(?P<translate>_translate)?(?P<neg>_neg_\w+)?")


def _point(record: str, field: str, pos: Any) -> tuple[float, float]:
    if not isinstance(pos, dict):
        raise StepValidationError(record, field, f"expected {{width: x, height: y}}, got {pos!r}")
    return number(record, f"{field}.width", pos.get("width")), number(record, f"{field}.height", pos.get("height"))


def clickable_area(act: dict[str, Any], record: str) -> tuple[float, float, float, float] | None:
    """The test split's ``clickable_area`` of a mouse action as an (x1, y1, x2, y2) box, ORIGINAL pixels."""
    area = act.get("clickable_area")
    if area is None:
        return None
    if not isinstance(area, dict):
        raise StepValidationError(record, "clickable_area", f"expected an object, got {area!r:.200}")
    x1, y1 = _point(record, "clickable_area.upper_left_position", area.get("upper_left_position"))
    x2, y2 = _point(record, "clickable_area.lower_right_position", area.get("lower_right_position"))
    return x1, y1, x2, y2


def screen_action(act: dict[str, Any], record: str) -> Action:
    """The Action of one ScreenAgent action dict (ORIGINAL pixels)."""
    kind = act.get("action_type")
    if kind == "MouseAction":
        mtype = str(act.get("mouse_action_type", ""))
        point = _point(record, "mouse_position", act.get("mouse_position"))
        if mtype.startswith("scroll_"):
            return make_action(record, "mouse_action_type", type="scroll", direction=mtype.removeprefix("scroll_"))
        if mtype not in _MOUSE:
            raise StepValidationError(record, "mouse_action_type", f"unknown mouse action {mtype!r}")
        name = _MOUSE[mtype]
        if name == "click" and str(act.get("mouse_button", "left")).lower() == "right":
            name = "rightclick"
        end = _point(record, "mouse_end_position", act.get("mouse_end_position")) if name == "drag" else None
        return make_action(record, "mouse_position", type=name, point=point, end_point=end)
    if kind == "KeyboardAction":
        ktype = act.get("keyboard_action_type")
        if ktype == "text":
            return make_action(record, "keyboard_text", type="type", text=act.get("keyboard_text") or None)
        if ktype == "press":
            keys = act.get("keyboard_key")
            keys = [keys] if isinstance(keys, str) else list(keys or [])
            if not keys or not all(isinstance(k, str) and k for k in keys):
                raise StepValidationError(record, "keyboard_key", f"expected key names, got {act.get('keyboard_key')!r}")
            if len(keys) == 1 and keys[0].lower() in _SINGLE_KEYS:
                return make_action(record, "keyboard_key", type=_SINGLE_KEYS[keys[0].lower()])
            return make_action(record, "keyboard_key", type="hotkey",
                               text="+".join(_KEY_NAMES.get(k.lower(), k.lower()) for k in keys))
        raise StepValidationError(record, "keyboard_action_type", f"unknown keyboard action {ktype!r}")
    if kind == "WaitAction":
        t = act.get("wait_time")
        return make_action(record, "wait_time", type="wait", duration=float(t) if isinstance(t, (int, float)) else None)
    raise StepValidationError(record, "action_type", f"unknown ScreenAgent action {kind!r}")


def _step_files(folder: Path) -> list[Path]:
    """The step files of one session, chronological; a ``_translate`` file replaces its untranslated twin."""
    chosen: dict[tuple[str, str], Path] = {}
    for path in folder.glob("*.json"):
        m = _STEP_FILE.fullmatch(path.stem)
        if m and (m["translate"] or (m["ts"], m["neg"] or "") not in chosen):
            chosen[(m["ts"], m["neg"] or "")] = path
    return [chosen[k] for k in sorted(chosen)]  # timestamps sort chronologically, a step before its negatives


def _sessions(input_path: Path) -> list[tuple[Path, list[Path]]]:
    folders = [input_path, *sorted(p for p in input_path.rglob("*") if p.is_dir())]
    sessions = [(folder, files) for folder in folders if (files := _step_files(folder))]
    if not sessions:
        raise FileNotFoundError(f"no ScreenAgent step file (<timestamp>[_translate].json) under {input_path}")
    return sessions


def _load(path: Path, record: str) -> dict[str, Any]:
    try:
        rec = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise StepValidationError(record, "record", f"not UTF-8: byte offset {e.start}") from None
    except json.JSONDecodeError as e:
        raise StepValidationError(record, "record", f"invalid JSON: {e}") from None
    except RecursionError:
        raise StepValidationError(record, "record", "JSON nested too deeply") from None
    if not isinstance(rec, dict):
        raise StepValidationError(record, "record", f"expected a JSON object, got {type(rec).__name__}")
    return rec


def _actions(rec: dict[str, Any], record: str) -> list[dict[str, Any]]:
    """``actions`` as a list of dicts: a JSON list, or the test split's Python repr string (literal parser)."""
    from core.parsers import parse_literal

    acts = rec.get("actions")
    if isinstance(acts, str):
        try:
            acts = parse_literal(acts.strip())
        except ValueError as e:
            raise StepValidationError(record, "actions", f"not a Python/JSON literal list: {e}") from None
    acts = [] if acts is None else acts
    if not isinstance(acts, list) or not all(isinstance(a, dict) for a in acts):
        raise StepValidationError(record, "actions", f"expected a list of action objects, got {acts!r:.200}")
    return acts


def read_screenagent(input_path: Path, *, images_dir: Path | None = None, skip_missing: bool = False,
                     summary: ConversionSummary) -> Iterator[Step]:
    """Steps of ScreenAgent sessions (a session folder or a folder of sessions, train or test layout),
    ORIGINAL pixels."""
    for session, files in _sessions(Path(input_path)):
        history: list[HistoryItem] = []
        for path in files:
            record = f"{session.name}/{path.stem}"
            summary.read += 1
            if "_neg_" in path.stem:
                summary.skip("negative sample", record)
                continue
            try:
                yield from _file_steps(_load(path, record), record, session, images_dir, history, skip_missing,
                                       summary)
            except StepValidationError as e:
                handle(e, skip_missing=skip_missing, summary=summary)


def _file_steps(rec: dict[str, Any], record: str, session: Path, images_dir: Path | None,
                history: list[HistoryItem], skip_missing: bool, summary: ConversionSummary) -> Iterator[Step]:
    acts = _actions(rec, record)
    screen = [(k, a) for k, a in enumerate(acts) if a.get("action_type") not in _SKIPPED]
    if not screen:  # a planning / self-evaluation turn: nothing happens on the screen
        kinds = sorted({_SKIPPED[a["action_type"]] for a in acts if a.get("action_type") in _SKIPPED})
        summary.skip(" + ".join(kinds) or "no actions", record)
        return
    declared = (rec["video_width"], rec["video_height"]) if "video_width" in rec and "video_height" in rec else None
    image, size = load_image(record, image_candidates(str(rec.get("saved_image_name") or ""),
                                                      images_dir=images_dir, record_dir=session),
                             declared_size=declared)
    for k, act in screen:
        step_id = f"{record}#{k}"
        try:
            action = screen_action(act, step_id)
            yield Step.build(
                step_id, id=step_id, image=image, image_size=size,
                instruction=str(rec.get("task_prompt_en") or rec.get("task_prompt") or ""),
                history=tuple(history), task_type="high", action=action, bbox=clickable_area(act, step_id),
                source="screenagent", group="desktop",
                extra={"session_id": rec.get("session_id", session.name), "current_task": rec.get("current_task"),
                       "task_prompt_zh": rec.get("task_prompt_zh"), "action_index": k, "raw_action": act},
            )
            history.append(HistoryItem(action=action))
        except StepValidationError as e:
            handle(e, skip_missing=skip_missing, summary=summary)


__all__ = ["clickable_area", "read_screenagent", "screen_action"]
