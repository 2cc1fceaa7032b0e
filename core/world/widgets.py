"""The widget record every screen of the simulated phone is made of."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Box = tuple[int, int, int, int]

#: Widget roles (what is drawn and how a tap acts). ``toggle`` rows flip a setting, ``textfield`` takes focus,
#: ``key`` is an on-screen keyboard key, ``navbutton`` one of Android's Back / Home / Recent buttons; the
#: curriculum's ``tile`` (a coloured shape, ``detail`` = "<colour> <shape>"), ``apptile`` (a large labelled app
#: tile, ``detail`` = the app key) and ``cell`` (a numbered cell of the scrolling grid).
ROLES: tuple[str, ...] = (
    "statusbar", "navbutton", "title", "icon", "iconbutton", "button", "fab", "listitem", "toggle", "tab",
    "textfield", "keyboard", "key", "text", "bubble", "display", "dialog", "map", "card", "tile", "apptile", "cell",
)


@dataclass(frozen=True, slots=True)
class Widget:
    """One widget. ``box`` is its full extent (x1, y1, x2, y2) in screen pixels, ``clip`` the visible part when
    a scrolling list cuts it (None = fully visible). ``on_tap`` is the command a tap runs (empty = inert)."""

    id: str
    role: str
    text: str
    box: Box
    clip: Box | None = None
    enabled: bool = True
    checked: bool | None = None
    focused: bool = False
    selected: bool = False
    detail: str = ""
    on_tap: tuple[str, ...] = ()

    @property
    def visible_box(self) -> Box:
        return self.clip or self.box

    @property
    def center(self) -> tuple[float, float]:
        x1, y1, x2, y2 = self.visible_box
        return (x1 + x2) / 2, (y1 + y2) / 2

    def contains(self, x: float, y: float) -> bool:
        x1, y1, x2, y2 = self.visible_box
        return x1 <= x < x2 and y1 <= y < y2

    @property
    def description(self) -> str:
        """How a person would name this widget in a grounding query ("Send button", "Wi-Fi switch")."""
        suffix = {"icon": " app icon", "iconbutton": " button", "fab": " button", "button": " button",
                  "navbutton": " button", "toggle": " switch", "tab": " tab", "textfield": " text field",
                  "key": " key", "tile": " tile", "apptile": " app"}.get(self.role, "")
        name = self.detail if self.role == "textfield" else self.text  # a text field is named by its hint
        return f"'{name}' key" if self.role == "key" else f"{name}{suffix}"

    @property
    def ui_type(self) -> str:
        """ScreenSpot's element type: ``icon`` for pictograms, ``text`` for labelled widgets."""
        return "icon" if self.role in ("iconbutton", "fab", "navbutton", "icon", "tile") else "text"

    def to_info(self) -> dict[str, Any]:
        """The widget as the env's ``info["widgets"]`` entry (``box`` = visible box, screen pixels)."""
        return {"id": self.id, "role": self.role, "text": self.text, "box": list(self.visible_box),
                "enabled": self.enabled, "checked": self.checked, "focused": self.focused,
                "selected": self.selected, "clickable": bool(self.on_tap)}


__all__ = ["ROLES", "Box", "Widget"]
