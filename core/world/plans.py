"""Task families and their gold plans' building blocks: :class:`Family`, :class:`GoldStep` and the step helpers
every family's plan is written with (tap a widget, press a system button, reach a screen, scroll to a row, fill
a text field). Points are screen pixels.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.actions import Action
from core.world.content import Content
from core.world.phone import Phone
from core.world.widgets import Widget


@dataclass(frozen=True)
class GoldStep:
    """The next gold action (screen pixels), its low-level instruction and the widget it acts on (or None)."""

    action: Action
    instruction: str
    target: Widget | None = None


@dataclass(frozen=True)
class Family:
    """A task family. ``make`` draws (params, instruction) from the task's rng and the seed's phone content;
    ``goal`` checks the goal on a phone; ``plan`` gives the next gold step from any state (None once the goal
    holds). Optional: ``setup`` puts a fresh phone in the task's start state (default: home, or the app
    ``params["start"]``), ``screen`` fixes the device screen (default: drawn from the seed), ``max_actions`` ends
    the episode (terminated, failed) after that many actions without success (default: only the env's
    ``max_steps`` truncates); ``variants`` lists every other (params, instruction) of the task's start screen: the
    same rendered screen with another goal (another direction, phrase, tile), for exports that show one screen with
    several instructions (default: none)."""

    name: str
    app: str
    make: Callable[[random.Random, Content], tuple[dict[str, Any], str]]  # -> (params, instruction)
    goal: Callable[[Phone, dict[str, Any]], bool]
    plan: Callable[[Phone, dict[str, Any]], GoldStep | None]
    setup: Callable[[Phone, dict[str, Any]], None] | None = None
    screen: str | None = None
    max_actions: int | None = None
    variants: Callable[[dict[str, Any], Content], list[tuple[dict[str, Any], str]]] | None = None


# ---------------------------------------------------------------------------------------------- plan helpers
def tap(w: Widget, instruction: str) -> GoldStep:
    return GoldStep(Action(type="click", point=w.center), instruction, w)


def tap_id(phone: Phone, widget_id: str, instruction: str) -> GoldStep:
    """Tap the on-screen widget ``widget_id`` (a plan only names widgets its state guarantees are shown)."""
    w = phone.find(widget_id)
    if w is None:
        raise LookupError(f"gold plan names {widget_id!r}, which is not on screen {phone.route}")
    return tap(w, instruction)


def press(kind: str, instruction: str) -> GoldStep:
    return GoldStep(Action(type=kind), instruction)


def to_screen(phone: Phone, route: tuple[str, ...]) -> GoldStep | None:
    """Step towards an app's first screen ``route`` (None once there with no dialog open)."""
    app = route[0]
    if phone.route == route and phone.dialog is None:
        return None
    if phone.dialog is not None:
        return press("press_back", "Close the dialog")
    if phone.app == app:
        return press("press_back", "Go back")
    if phone.route == ("home",):
        return tap_id(phone, f"icon_{app}", f"Open the {phone.content.app_labels[app]} app")
    return press("press_home", "Go to the home screen")


def reach_row(phone: Phone, widget_id: str, index: int, label: str) -> GoldStep | Widget:
    """The row ``widget_id`` (row ``index`` of the current list) when fully visible, else a scroll step."""
    w = phone.find(widget_id)
    if w is not None and w.clip is None:
        return w
    state = phone.scroll_state()
    if state is None:
        raise LookupError(f"gold plan needs {widget_id!r}, which is not on screen {phone.route} and nothing scrolls")
    down = index * phone.row_h >= state[1]
    return GoldStep(Action(type="scroll", direction="down" if down else "up"),
                    f"Scroll {'down' if down else 'up'} to find {label}")


def fill(phone: Phone, field_id: str, text: str, label: str) -> GoldStep | None:
    """Steps that make text field ``field_id`` hold exactly ``text`` (None when it does)."""
    current = phone.fields.get(field_id, "")
    if current == text:
        return None
    if phone.focus != field_id:
        return tap_id(phone, field_id, f"Tap the {label} field")
    if text.startswith(current):
        return GoldStep(Action(type="type", text=text[len(current):]), f"Type '{text[len(current):]}'")
    return tap_id(phone, "kb_DEL", "Delete the last character")


__all__ = ["Family", "GoldStep", "fill", "press", "reach_row", "tap", "tap_id", "to_screen"]
