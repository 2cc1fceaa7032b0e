"""The unified action space.

Canonical action names are GUI-R1's strings (they appear verbatim in its answers, rewards and metrics),
extended with the Qwen3-VL ``mobile_use`` actions that have no GUI-R1 name (``swipe``, ``answer``,
``terminate``, ``system_button``) and desktop ``drag``.  Every coordinate in an :class:`Action` is a float
pixel of the ORIGINAL image unless a function says otherwise.

Mapping GUI-R1 <-> Qwen3-VL mobile_use (see :func:`to_mobile_use` / :func:`from_mobile_use`):

=================  ==============================================  =========================================
GUI-R1 name        mobile_use call                                 note
=================  ==============================================  =========================================
click              click(coordinate)
long_press         long_press(coordinate, time=2)
type / select      type(text)                                      select maps back to type (lossy)
scroll <dir>       swipe(coordinate, coordinate2)                  finger moves opposite to the content:
                                                                   scroll down = swipe from 70% to 30% height
open_app           open(text)                                      ``open`` is in Qwen's mobile_use cookbook
press_back         system_button(button="Back")
press_home         system_button(button="Home")
press_recent       system_button(button="Menu")
press_enter/enter  system_button(button="Enter")
wait               wait(time)
complete           terminate(status="success")
impossible         terminate(status="failure")
hotkey             key(text)
answer             answer(text)
close/delete, moveto, doubleclick, rightclick, press_tab, press_space, press_down, press_pgdn, drag:
                   no mobile equivalent (desktop/web only): ``to_mobile_use`` returns ``None``
=================  ==============================================  =========================================
"""

from __future__ import annotations

from dataclasses import field, make_dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from core.numbers import checked_number


class ActionType(str, Enum):
    """Every action name the toolkit knows (value = the exact string models and datasets use)."""

    CLICK = "click"
    LONG_PRESS = "long_press"
    TYPE = "type"
    SELECT = "select"
    SCROLL = "scroll"
    OPEN_APP = "open_app"
    PRESS_BACK = "press_back"
    PRESS_HOME = "press_home"
    PRESS_RECENT = "press_recent"
    PRESS_ENTER = "press_enter"
    ENTER = "enter"
    COMPLETE = "complete"
    CLOSE_DELETE = "close/delete"
    WAIT = "wait"
    IMPOSSIBLE = "impossible"
    HOTKEY = "hotkey"
    MOVETO = "moveto"
    DOUBLECLICK = "doubleclick"
    RIGHTCLICK = "rightclick"
    PRESS_TAB = "press_tab"
    PRESS_SPACE = "press_space"
    PRESS_DOWN = "press_down"
    PRESS_PGDN = "press_pgdn"
    # Qwen3-VL mobile_use / desktop extensions without a GUI-R1 name
    SWIPE = "swipe"
    DRAG = "drag"
    ANSWER = "answer"
    TERMINATE = "terminate"
    SYSTEM_BUTTON = "system_button"


ACTION_NAMES: frozenset[str] = frozenset(a.value for a in ActionType)

#: Names that mean the same action (strict metrics compare through :func:`canonical_action_name`).
ACTION_ALIASES: dict[str, str] = {"enter": "press_enter"}

#: Actions whose argument is a point on the screen.
POINT_ACTIONS: frozenset[str] = frozenset(
    {"click", "long_press", "moveto", "doubleclick", "rightclick", "swipe", "drag"}
)
#: Actions whose argument is text (typed text, option, app name, scroll direction in GUI-R1's answer).
TEXT_ACTIONS: frozenset[str] = frozenset({"type", "select", "open_app", "scroll", "hotkey", "answer"})
SCROLL_DIRECTIONS: tuple[str, ...] = ("up", "down", "left", "right")
SYSTEM_BUTTONS: tuple[str, ...] = ("Back", "Home", "Menu", "Enter")

#: Actions whose argument is free text, scored by text match (TEXT_ACTIONS without scroll's direction).
FREE_TEXT_ACTIONS: frozenset[str] = TEXT_ACTIONS - {"scroll"}

#: The placeholder GUI-R1 writes in ``input_text`` when an action takes no text.
NO_INPUT_TEXT = "no input text"
#: The ``gt_bbox`` / ``point`` GUI-R1 writes for an action without a screen position.
GUIR1_NO_TARGET: tuple[float, float] = (-100.0, -100.0)


def canonical_action_name(name: str) -> str:
    """Lower-case, strip and resolve aliases (``enter`` -> ``press_enter``); unknown names pass through."""
    n = name.strip().lower()
    return ACTION_ALIASES.get(n, n)


def is_known_action(name: str) -> bool:
    return canonical_action_name(name) in ACTION_NAMES


class Action(BaseModel):
    """One GUI action. Coordinates are float pixels of the ORIGINAL image.

    ``point`` is the click/press/start point, ``end_point`` the end of a swipe or drag, ``text`` the typed text,
    selected option, app name, hotkey or answer, ``direction`` the scroll direction (up/down/left/right: the
    direction the CONTENT moves into view, GUI-R1/AndroidControl convention), ``button`` a system button,
    ``status`` the terminate status (success/failure), ``duration`` seconds for wait/long_press.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    point: tuple[float, float] | None = None
    end_point: tuple[float, float] | None = None
    text: str | None = None
    direction: str | None = None
    button: str | None = None
    status: str | None = None
    duration: float | None = None

    @field_validator("type")
    @classmethod
    def _known_type(cls, v: str) -> str:
        n = v.strip().lower()
        if n not in ACTION_NAMES:
            raise ValueError(f"unknown action {v!r}; known: {sorted(ACTION_NAMES)}")
        return n

    @field_validator("direction")
    @classmethod
    def _known_direction(cls, v: str | None) -> str | None:
        if v is None:
            return v
        d = v.strip().lower()
        if d not in SCROLL_DIRECTIONS:
            raise ValueError(f"scroll direction must be one of {SCROLL_DIRECTIONS}, got {v!r}")
        return d

    @model_validator(mode="after")
    def _arguments_present(self) -> Action:
        t = self.type
        if t in ("click", "long_press", "moveto", "doubleclick", "rightclick") and self.point is None:
            raise ValueError(f"action {t!r} needs a point")
        if t in ("swipe", "drag") and (self.point is None or self.end_point is None):
            raise ValueError(f"action {t!r} needs point and end_point")
        if t == "scroll" and self.direction is None:
            raise ValueError("action 'scroll' needs a direction")
        if t in ("type", "select", "open_app", "hotkey") and not self.text:
            raise ValueError(f"action {t!r} needs text")
        return self

    @property
    def name(self) -> str:
        return self.type

    def guir1_input_text(self) -> str:
        """The ``input_text`` GUI-R1 writes for this action (scroll direction for scroll)."""
        if self.type == "scroll":
            return self.direction or NO_INPUT_TEXT
        return self.text if self.text else NO_INPUT_TEXT

    def scaled(self, sx: float, sy: float) -> Action:
        """A copy with every coordinate multiplied by (sx, sy) (frame changes are done in ``core.geometry``)."""
        upd: dict[str, Any] = {}
        if self.point is not None:
            upd["point"] = (self.point[0] * sx, self.point[1] * sy)
        if self.end_point is not None:
            upd["end_point"] = (self.end_point[0] * sx, self.end_point[1] * sy)
        return self.model_copy(update=upd)


#: The arguments of an :class:`Action` (every field but ``type``: same names, types and defaults) as a frozen,
#: keyword-only dataclass, for holders that are no validated Action and name their own frame: a parsed answer
#: (numbers in the model's frame) and a gold record. Built from Action's fields, so the two lists never drift.
ActionArgs = make_dataclass(
    "ActionArgs",
    [(name, f.annotation, field(default=f.default)) for name, f in Action.model_fields.items() if name != "type"],
    frozen=True, kw_only=True)
ActionArgs.__module__ = __name__  # where pickle finds it (make_dataclass takes module= only from Python 3.12)


_SYSTEM_BUTTON_OF = {"press_back": "Back", "press_home": "Home", "press_recent": "Menu",
                     "press_enter": "Enter", "enter": "Enter"}
_ACTION_OF_BUTTON = {"back": "press_back", "home": "press_home", "menu": "press_recent", "enter": "press_enter"}


def scroll_to_swipe(direction: str, width: float, height: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Finger start/end (original pixels) of a swipe that scrolls the content ``direction``.

    Scrolling down (revealing content below) moves the finger up: from 70% to 30% of the height, centred.
    """
    cx, cy = width / 2, height / 2
    dy, dx = 0.2 * height, 0.2 * width
    return {
        "down": ((cx, cy + dy), (cx, cy - dy)),
        "up": ((cx, cy - dy), (cx, cy + dy)),
        "right": ((cx + dx, cy), (cx - dx, cy)),
        "left": ((cx - dx, cy), (cx + dx, cy)),
    }[direction]


def swipe_to_scroll(start: tuple[float, float], end: tuple[float, float]) -> str:
    """Scroll direction of a swipe from ``start`` to ``end`` (the content moves opposite to the finger)."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    if abs(dy) >= abs(dx):
        return "down" if dy < 0 else "up"
    return "right" if dx < 0 else "left"


def to_mobile_use(action: Action, width: float, height: float) -> dict[str, Any] | None:
    """The Qwen3-VL ``mobile_use`` arguments for ``action`` (coordinates still ORIGINAL pixels).

    Returns ``None`` for desktop/web-only actions with no mobile equivalent. Convert the coordinates to the
    model's frame (0-1000 for Qwen3-VL) with ``core.geometry`` before serialising.
    """
    t = action.type
    pt = list(action.point) if action.point else None
    if t == "click":
        return {"action": "click", "coordinate": pt}
    if t == "long_press":
        return {"action": "long_press", "coordinate": pt, "time": action.duration or 2}
    if t in ("type", "select"):
        return {"action": "type", "text": action.text}
    if t == "scroll":
        s, e = scroll_to_swipe(action.direction or "down", width, height)
        return {"action": "swipe", "coordinate": list(s), "coordinate2": list(e)}
    if t == "swipe":
        return {"action": "swipe", "coordinate": pt, "coordinate2": list(action.end_point or ())}
    if t == "open_app":
        return {"action": "open", "text": action.text}
    if t in _SYSTEM_BUTTON_OF:
        return {"action": "system_button", "button": _SYSTEM_BUTTON_OF[t]}
    if t == "system_button":
        return {"action": "system_button", "button": action.button}
    if t == "wait":
        return {"action": "wait", "time": action.duration or 2}
    if t == "complete":
        return {"action": "terminate", "status": "success"}
    if t == "impossible":
        return {"action": "terminate", "status": "failure"}
    if t == "terminate":
        return {"action": "terminate", "status": action.status or "success"}
    if t == "hotkey":
        return {"action": "key", "text": action.text}
    if t == "answer":
        return {"action": "answer", "text": action.text or ""}
    return None


def _xy(value: Any, name: str) -> tuple[float, float]:
    """A finite [x, y] point; ValueError naming ``name`` otherwise (a NaN, ``1e999`` or a 400-digit integer too)."""
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        raise ValueError(f"{name} must be [x, y], got {value!r:.100}")
    return checked_number(value[0], f"{name}[0]"), checked_number(value[1], f"{name}[1]")


def _seconds(value: Any) -> float | None:
    """The ``time`` argument (seconds, finite, >= 0) or None when absent or not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return checked_number(value, "time", minimum=0)


def from_mobile_use(arguments: dict[str, Any], *, swipe_as_scroll: bool = True) -> Action:
    """Inverse of :func:`to_mobile_use` (coordinates are taken as they are: convert frames before or after).

    A swipe becomes a GUI-R1 ``scroll`` with the matching direction when ``swipe_as_scroll``.
    Raises ``ValueError`` naming the bad field.
    """
    name = str(arguments.get("action", "")).strip().lower()
    if name == "click":
        return Action(type="click", point=_xy(arguments.get("coordinate"), "coordinate"))
    if name == "long_press":
        return Action(type="long_press", point=_xy(arguments.get("coordinate"), "coordinate"),
                      duration=_seconds(arguments.get("time")))
    if name == "type":
        return Action(type="type", text=str(arguments.get("text", "")))
    if name == "swipe":
        s, e = _xy(arguments.get("coordinate"), "coordinate"), _xy(arguments.get("coordinate2"), "coordinate2")
        if swipe_as_scroll:
            return Action(type="scroll", direction=swipe_to_scroll(s, e))
        return Action(type="swipe", point=s, end_point=e)
    if name == "open":
        return Action(type="open_app", text=str(arguments.get("text", "")))
    if name == "system_button":
        button = str(arguments.get("button", ""))
        if button.strip().lower() not in _ACTION_OF_BUTTON:
            raise ValueError(f"system_button.button must be one of {SYSTEM_BUTTONS}, got {button!r}")
        return Action(type=_ACTION_OF_BUTTON[button.strip().lower()])
    if name == "wait":
        return Action(type="wait", duration=_seconds(arguments.get("time")))
    if name == "terminate":
        status = str(arguments.get("status", "success")).lower()
        return Action(type="complete" if status == "success" else "impossible")
    if name == "key":
        return Action(type="hotkey", text=str(arguments.get("text", "")))
    if name == "answer":
        return Action(type="answer", text=str(arguments.get("text", "")))
    raise ValueError(f"unknown mobile_use action {name!r}")


__all__ = [
    "ACTION_ALIASES", "ACTION_NAMES", "Action", "ActionType", "FREE_TEXT_ACTIONS", "GUIR1_NO_TARGET", "NO_INPUT_TEXT",
    "POINT_ACTIONS",
    "SCROLL_DIRECTIONS", "SYSTEM_BUTTONS", "TEXT_ACTIONS", "canonical_action_name", "from_mobile_use",
    "is_known_action", "scroll_to_swipe", "swipe_to_scroll", "to_mobile_use",
]
