"""The simulated phone's state machine: screens as widget lists, and what each action does to the state.

Coordinates are screen pixels (origin top-left). Android behaviour kept: Back first hides the keyboard, then closes
a dialog, then leaves the screen (from an app's first screen to Home); Home returns to the launcher; Recent opens
the recent-apps list; a tap outside a dialog dismisses it; typing goes to the focused text field only.

This module is long (over 500 lines) on purpose: :class:`Phone` is one state machine, and every app's screen
builder sits beside the action handlers that change the state it draws, so one file shows all the transitions.
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace
from fractions import Fraction
from typing import Any

from core.actions import Action, swipe_to_scroll
from core.world.content import APPS, SETTINGS, Content
from core.world.device import Screen
from core.world.render import Renderer, font
from core.world.widgets import Box, Widget

Route = tuple[str, ...]

#: Screen name -> the app it belongs to (home and recents belong to none).
ROUTE_APP = {"settings": "settings", "settings_page": "settings", "messages": "messages", "thread": "messages",
             "contacts": "contacts", "contact": "contacts", "call": "contacts", "notes": "notes", "note": "notes",
             "note_edit": "notes", "maps": "maps", "clock": "clock", "calculator": "calculator"}
KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
CALC_KEYS = ("789/", "456*", "123-", "C0=+")
CLOCK_TABS = ("Alarm", "Timer", "Stopwatch")
CONTACT_TABS = ("Favorites", "All")
TIME_RE = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
MAX_FIELD = 200
#: The ``pan`` screen (a grid that scrolls in all four directions): cell size and scroll step (dp), and how many
#: steps it scrolls each way from its start.
PAN_CELL_DP, PAN_STEP_DP, PAN_STEPS = 112, 96, 2
#: mobile_use ``system_button`` buttons -> the GUI-R1 action they are.
BUTTON_ACTIONS = {"back": "press_back", "home": "press_home", "menu": "press_recent", "enter": "press_enter"}
#: Android's system actions -> the phone command they run (the nav bar buttons run the same commands).
SYSTEM_COMMANDS = {"press_back": "back", "press_home": "home", "press_recent": "recents", "press_enter": "enter",
                   "enter": "enter"}


def normalize_time(text: str) -> str | None:
    """``"7:30"`` -> ``"07:30"``; None when ``text`` is not a 24-hour time."""
    m = TIME_RE.match(text.strip())
    return f"{int(m.group(1)):02d}:{m.group(2)}" if m else None


def evaluate(expr: str) -> str:
    """Value of a calculator expression of non-negative integers and + - * / (usual precedence), exactly.

    Never evaluates Python; returns ``"Error"`` for anything malformed or a division by zero.
    """
    tokens = re.findall(r"\d+|[-+*/]", expr)
    if not tokens or "".join(tokens) != expr or not tokens[0].isdigit() or not tokens[-1].isdigit():
        return "Error"
    terms: list[Fraction] = []
    sign, term, op = 1, Fraction(int(tokens[0])), ""
    for tok in tokens[1:]:
        if not tok.isdigit():
            if op:
                return "Error"
            op = tok
            continue
        n = Fraction(int(tok))
        if op in "+-":
            terms.append(sign * term)
            sign, term = (1 if op == "+" else -1), n
        elif op == "*":
            term *= n
        else:
            if n == 0:
                return "Error"
            term /= n
        op = ""
    total = sum(terms, Fraction(0)) + sign * term
    if total.denominator == 1:
        return str(total.numerator)
    return f"{float(total):.6f}".rstrip("0").rstrip(".")


class Phone:
    """State of one simulated phone. ``widgets()`` is the current screen; ``apply(action)`` acts on it and
    returns None, or the reason the phone ignored the action (then nothing changed)."""

    def __init__(self, screen: Screen, content: Content, renderer: Renderer):
        self.screen, self.content, self.renderer = screen, content, renderer
        px, st = screen.px, content.style
        self.status_h, self.nav_h, self.bar_h = px(24), px(48), px(64)
        self.row_h, self.pad, self.kb_h = px(st.row_dp), px(st.pad_dp), px(4 * 50 + 12)
        self.stack: list[Route] = [("home",)]
        self.settings = dict(content.settings_initial)
        self.threads = copy.deepcopy(content.threads)
        self.notes = list(content.notes)
        self.alarms = list(content.alarms)
        self.fields: dict[str, str] = {}
        self.focus: str | None = None
        self.scroll: dict[str, int] = {}
        self.dialog: Route | None = None
        self.tabs = {"contacts": st.contacts_tab, "clock": st.clock_tab}
        self.running: dict[str, bool] = {}
        self.maps_query: str | None = None
        self.calc = ""
        self.calc_done = False
        self.recents: list[str] = []
        self.pinned = False  # Android's screen pinning: Home and Recent do nothing, Back never leaves stack[0]
        self.board: tuple[Widget, ...] = ()  # the tiles of the ``board`` screen (placed by a curriculum task)
        self.tapped: list[str] = []  # ids of the board tiles tapped, in order
        self.pan = (0, 0)  # offset (x, y) px of the ``pan`` screen's grid; + = scrolled right / down
        self._widgets: list[Widget] | None = None
        self._scrollable: tuple[str, int, int] | None = None  # (list id, viewport height, max offset)

    # ------------------------------------------------------------------ queries
    @property
    def route(self) -> Route:
        return self.stack[-1]

    @property
    def app(self) -> str | None:
        r = self.route
        return r[1] if r[0] == "app" else ROUTE_APP.get(r[0])

    @property
    def content_bottom(self) -> int:
        bottom = self.screen.height - self.nav_h
        return bottom - self.kb_h if self.focus is not None else bottom

    def widgets(self) -> list[Widget]:
        """The current screen, in paint order (a later widget lies on top)."""
        if self._widgets is None:
            self._scrollable = None
            content = getattr(self, f"_screen_{self.route[0]}")(*self.route[1:])
            dialog = self._dialog() if self.dialog else []
            system = [*self._keyboard(), *self._nav_bar()]
            self._widgets = [self._status_bar(), *content, *dialog, *system]
            self._modal_ids = {w.id for w in dialog + system}
        return self._widgets

    def state_key(self) -> tuple:
        """Every piece of the phone's mutable state as one canonical, hashable tuple (dicts as sorted items): equal
        exactly when two phones are in the same state, whatever order the state was reached in. The screen's
        pixels follow from it; it never reads them."""
        fields = ("stack", "settings", "threads", "notes", "alarms", "fields", "focus", "scroll", "dialog", "tabs",
                  "running", "maps_query", "calc", "calc_done", "recents", "pinned", "board", "tapped", "pan")
        return tuple((name, _canonical(getattr(self, name))) for name in fields)

    def find(self, widget_id: str) -> Widget | None:
        return next((w for w in self.widgets() if w.id == widget_id), None)

    def scroll_state(self) -> tuple[str, int, int] | None:
        """(list id, offset px, max offset px) of the current screen's scrolling list, or None."""
        self.widgets()
        if self._scrollable is None:
            return None
        list_id, _, max_off = self._scrollable
        return list_id, self.scroll.get(list_id, 0), max_off

    def start(self, stack: list[Route], *, pinned: bool = False, board: tuple[Widget, ...] = (),
              focus: str | None = None) -> None:
        """Put the phone on screen ``stack[-1]`` (history ``stack``), optionally pinned, with ``board`` tiles and
        the text field ``focus`` focused: a task's start state."""
        self.stack, self.pinned, self.board, self.focus = list(stack), pinned, tuple(board), focus
        self.tapped, self.pan, self.dialog = [], (0, 0), None
        self._widgets = None

    # ------------------------------------------------------------------ actions
    def apply(self, action: Action) -> str | None:
        reason = self._apply(action)
        if reason is None:
            self._widgets = None
        return reason

    def _apply(self, a: Action) -> str | None:  # noqa: C901 (one branch per action kind)
        t = a.type
        if t == "click":
            return self._tap(a.point)  # type: ignore[arg-type]
        if t == "long_press":
            return "long press has no effect on this phone; tap instead"
        if t in ("type", "select"):
            return self._type(a.text or "")
        if t == "scroll":
            return self._scroll(a.direction or "down")
        if t in ("swipe", "drag"):
            (x1, y1), (x2, y2) = a.point, a.end_point  # type: ignore[misc]
            if not all(map(_finite, (x1, y1, x2, y2))):
                return "swipe coordinates are not finite numbers"
            if abs(x2 - x1) + abs(y2 - y1) < self.screen.px(12):
                return "swipe too short to scroll"
            return self._scroll(swipe_to_scroll((x1, y1), (x2, y2)))
        if t == "system_button":
            t = BUTTON_ACTIONS.get((a.button or "").lower(), "")
            if not t:
                return f"unknown system button {a.button!r}"
        if t in SYSTEM_COMMANDS:
            return self._run((SYSTEM_COMMANDS[t],))
        if t == "open_app":
            key = self._app_named(a.text or "")
            if key is None:
                return f"no app named {a.text!r} on this phone"
            return self._run(("open", key))
        if t == "wait":
            return None
        if t in ("complete", "impossible", "terminate", "answer"):
            return None  # ends the episode (the env decides); the phone does not change
        return f"{t!r} has no effect on a phone"

    def _tap(self, point: tuple[float, float]) -> str | None:
        x, y = point
        if not (_finite(x) and _finite(y)):
            return "tap coordinates are not finite numbers"
        if not (0 <= x < self.screen.width and 0 <= y < self.screen.height):
            return f"tap at ({x:.0f}, {y:.0f}) is outside the {self.screen.width}x{self.screen.height} screen"
        ws = self.widgets()
        hit = next((w for w in reversed(ws) if w.contains(x, y) and w.role != "statusbar"), None)
        if self.dialog is not None and (hit is None or hit.id not in self._modal_ids):
            self.dialog, self.focus = None, None  # Android: a tap outside a dialog cancels it
            return None
        if hit is None:
            return f"no widget at ({x:.0f}, {y:.0f})"
        if not hit.enabled:
            return f"{hit.role} {hit.text!r} is disabled"
        if not hit.on_tap:
            return f"{hit.role} {hit.text!r} does nothing when tapped"
        return self._run(hit.on_tap)

    def _type(self, text: str) -> str | None:
        if self.focus is None:
            return "no text field has focus (tap one first)"
        if not text:
            return "nothing to type"
        self.fields[self.focus] = (self.fields.get(self.focus, "") + text)[:MAX_FIELD]
        return None

    def _scroll(self, direction: str) -> str | None:
        if self.route == ("pan",):
            return self._pan(direction)
        self.widgets()
        if self._scrollable is None:
            return "nothing on this screen scrolls"
        if direction in ("left", "right"):
            return "nothing on this screen scrolls sideways"
        list_id, view_h, max_off = self._scrollable
        off = self.scroll.get(list_id, 0)
        step = max(self.row_h, min(int(0.4 * self.screen.height), view_h - self.row_h))
        new = min(max_off, off + step) if direction == "down" else max(0, off - step)
        if new == off:
            return f"the list is already at its {'end' if direction == 'down' else 'top'}"
        self.scroll[list_id] = new
        return None

    def _pan(self, direction: str) -> str | None:
        """Scroll the ``pan`` grid one step (``PAN_STEPS`` steps at most each way from the start)."""
        dx, dy = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}[direction]
        step = self.screen.px(PAN_STEP_DP)
        x, y = self.pan[0] + dx * step, self.pan[1] + dy * step
        if max(abs(x), abs(y)) > PAN_STEPS * step:
            return f"the grid is already at its {direction} end"
        self.pan = (x, y)
        return None

    def _back(self) -> str | None:
        if self.focus is not None:
            self.focus = None
        elif self.dialog is not None:
            self.dialog = None
        elif len(self.stack) > 1:
            self.stack.pop()
        else:
            return "the screen is pinned: Back does nothing here" if self.pinned else "Back on the home screen does nothing"
        return None

    def _recents(self) -> str | None:
        if self.pinned:
            return "the screen is pinned: Recent does nothing"
        if self.route == ("recents",):
            return "already showing the recent apps"
        self.stack, self.focus, self.dialog = [("home",), ("recents",)], None, None
        return None

    def _home(self) -> str | None:
        if self.pinned:
            return "the screen is pinned: Home does nothing"
        if self.stack == [("home",)] and self.focus is None and self.dialog is None:
            return "already on the home screen"
        self.stack, self.focus, self.dialog = [("home",)], None, None
        return None

    def _enter(self) -> str | None:
        if self.focus == "maps_query":
            return self._run(("search",))
        if self.focus == "alarm_time":
            return self._run(("add_alarm",))
        return "Enter does nothing here" if self.focus is None else f"Enter does nothing in {self.focus}"

    def _app_named(self, name: str) -> str | None:
        n = name.strip().lower()
        for key, labels in APPS.items():
            if n == key or n in (label.lower() for label in labels) or n == self.content.app_labels[key].lower():
                return key
        return None

    def _run(self, cmd: tuple[str, ...]) -> str | None:  # noqa: C901 (one branch per command)
        op, args = cmd[0], cmd[1:]
        if op == "open":
            key = args[0]
            root = self.stack[0] if self.pinned else ("home",)
            self.stack = [root, (key,) if key in ROUTE_APP else ("app", key)]
            self.focus, self.dialog = None, None
            self.recents = [key] + [r for r in self.recents if r != key]
            self.scroll = {}
            self.tabs = {"contacts": self.content.style.contacts_tab, "clock": self.content.style.clock_tab}
        elif op == "back":
            return self._back()
        elif op == "home":
            return self._home()
        elif op == "recents":
            return self._recents()
        elif op == "enter":
            return self._enter()
        elif op == "push":
            self.stack.append(tuple(args))
            self.focus = None
            if args[0] == "note_edit":
                self.fields["note_title"] = self.fields["note_body"] = ""
        elif op == "tile":
            self.tapped.append(args[0])
        elif op == "toggle":
            self.settings[args[0]] = not self.settings[args[0]]
        elif op == "alarm_toggle":
            self.alarms = [(tm, (not on) if tm == args[0] else on) for tm, on in self.alarms]
        elif op == "focus":
            self.focus = args[0]
        elif op == "tab":
            self.tabs[args[0]] = args[1]
        elif op == "key":
            ch = args[0]
            if ch == "Enter":
                return self._enter()
            if ch == "DEL":
                self.fields[self.focus] = self.fields.get(self.focus, "")[:-1]  # type: ignore[index]
            else:
                return self._type(" " if ch == "space" else ch)
        elif op == "send":
            text = self.fields.get("message_input", "")
            self.threads.setdefault(args[0], []).append(("me", text))
            self.fields["message_input"] = ""
        elif op == "save_note":
            self.notes.insert(0, (self.fields["note_title"], self.fields.get("note_body", "")))
            self.stack.pop()
            self.focus = None
        elif op == "ask_delete":
            self.dialog = ("delete_note", args[0])
        elif op == "delete_note":
            self.notes = [n for n in self.notes if n[0] != args[0]]
            self.dialog = None
            self.stack.pop()
        elif op == "cancel":
            self.dialog, self.focus = None, None
        elif op == "ask_alarm":
            self.dialog = ("add_alarm",)
            self.fields["alarm_time"] = ""
        elif op == "add_alarm":
            tm = normalize_time(self.fields.get("alarm_time", ""))
            if tm is None:
                return f"{self.fields.get('alarm_time', '')!r} is not a time (HH:MM)"
            self.alarms = sorted({**dict(self.alarms), tm: True}.items())
            self.dialog, self.focus = None, None
        elif op == "search":
            query = self.fields.get("maps_query", "").strip()
            if not query:
                return "the search field is empty"
            self.maps_query, self.focus = query, None
        elif op == "calc":
            self._calc(args[0])
        elif op == "start_stop":
            self.running[args[0]] = not self.running.get(args[0], False)
        elif op == "clear_recents":
            self.recents = []
        return None

    def _calc(self, key: str) -> None:
        if key == "C":
            self.calc, self.calc_done = "", False
        elif key == "=":
            if self.calc:
                self.calc, self.calc_done = evaluate(self.calc), True
        elif key.isdigit():
            self.calc = key if self.calc_done or self.calc in ("0", "Error") else (self.calc + key)[:24]
            self.calc_done = False
        else:
            base = "" if self.calc == "Error" else self.calc
            if base and not base[-1].isdigit():
                base = base[:-1]
            if base:
                self.calc, self.calc_done = (base + key)[:24], False

    # ------------------------------------------------------------------ layout
    def _status_bar(self) -> Widget:
        s = self.settings
        icons = "Airplane " if s["airplane"] else ("WiFi " if s["wifi"] else "") + ("BT " if s["bluetooth"] else "")
        return Widget("status_bar", "statusbar", self.content.clock, (0, 0, self.screen.width, self.status_h),
                      detail=f"{icons}{self.content.battery}%")

    def _nav_bar(self) -> list[Widget]:
        w, h = self.screen.width, self.screen.height
        bw = w // 5
        names = (("Back", ("back",)), ("Home", ("home",)), ("Recent", ("recents",)))
        out = []
        for i, (name, cmd) in enumerate(names):
            x = w // 2 + (i - 1) * bw * 3 // 2 - bw // 2
            out.append(Widget(f"nav_{name.lower()}", "navbutton", name, (x, h - self.nav_h, x + bw, h), on_tap=cmd))
        return out

    def _keyboard(self) -> list[Widget]:
        if self.focus is None:
            return []
        w, px = self.screen.width, self.screen.px
        top = self.screen.height - self.nav_h - self.kb_h + px(6)
        kh, kw = px(50), w // 10
        keys = []
        for r, row in enumerate(KEY_ROWS):
            x0 = (w - kw * len(row)) // 2 - (kw // 2 if r == 2 else 0)
            for i, ch in enumerate(row):
                keys.append((ch, x0 + i * kw, top + r * kh, kw))
        keys.append(("DEL", x0 + len(KEY_ROWS[2]) * kw, top + 2 * kh, kw * 3 // 2))
        y = top + 3 * kh
        keys += [(",", kw, y, kw), ("space", 2 * kw, y, 5 * kw), (".", 7 * kw, y, kw), ("Enter", 8 * kw, y, kw * 3 // 2)]
        panel = Widget("keyboard", "keyboard", "", (0, top - px(6), w, self.screen.height - self.nav_h))
        return [panel] + [Widget(f"kb_{ch}", "key", ch, (x, yy, x + ww, yy + kh), on_tap=("key", ch))
                          for ch, x, yy, ww in keys]

    def _appbar(self, title: str, back: bool, action: Widget | None = None) -> list[Widget]:
        y1, y2 = self.status_h, self.status_h + self.bar_h
        size = self.screen.px(48)
        cy = (y1 + y2) // 2
        x = self.screen.px(4)
        out = []
        if back:
            out.append(Widget("navigate_up", "iconbutton", "Navigate up", (x, cy - size // 2, x + size, cy + size // 2),
                              on_tap=("back",)))
            x += size
        right = action.box[0] if action else self.screen.width
        out.append(Widget("app_title", "title", title, (x, y1, right, y2)))
        if action:
            out.append(action)
        return out

    def _list(self, list_id: str, rows: list[Widget], top: int, bottom: int | None = None) -> list[Widget]:
        """Rows (boxes relative to the list's top, y from 0) placed in a scrolling viewport [top, bottom)."""
        bottom = self.content_bottom if bottom is None else bottom
        total = rows[-1].box[3] if rows else 0
        max_off = max(0, total - (bottom - top))
        off = min(self.scroll.get(list_id, 0), max_off)
        self.scroll[list_id] = off
        if max_off:
            self._scrollable = (list_id, bottom - top, max_off)
        out = []
        for r in rows:
            x1, ry1, x2, ry2 = r.box
            y1, y2 = top + ry1 - off, top + ry2 - off
            if y2 <= top or y1 >= bottom:
                continue
            clip = None if (y1 >= top and y2 <= bottom) else (x1, max(y1, top), x2, min(y2, bottom))
            out.append(replace(r, box=(x1, y1, x2, y2), clip=clip))
        return out

    def _rows(self, items: list[tuple[str, str, str, tuple[str, ...]]],
              toggles: dict[str, bool] | None = None) -> list[Widget]:
        """Full-width rows stacked from y = 0; rows whose id is in ``toggles`` are switches with that state."""
        w, toggles = self.screen.width, toggles or {}
        return [Widget(wid, "toggle" if wid in toggles else "listitem", text, (0, i * self.row_h, w, (i + 1) * self.row_h),
                       detail=detail, on_tap=cmd, checked=toggles.get(wid))
                for i, (wid, text, detail, cmd) in enumerate(items)]

    def _field(self, field_id: str, hint: str, box: Box) -> Widget:
        return Widget(field_id, "textfield", self.fields.get(field_id, ""), box, detail=hint,
                      focused=self.focus == field_id, on_tap=("focus", field_id))

    @property
    def _below_bar(self) -> int:
        return self.status_h + self.bar_h

    def _screen_home(self) -> list[Widget]:
        c, w, px = self.content, self.screen.width, self.screen.px
        cols = 6 if self.screen.kind == "tablet" else c.style.icon_cols
        cell_w, cell_h = w // cols, px(104)
        top = self.status_h + px(32)
        return [Widget(f"icon_{key}", "icon", c.app_labels[key],
                       ((i % cols) * cell_w, top + (i // cols) * cell_h, (i % cols + 1) * cell_w,
                        top + (i // cols + 1) * cell_h), detail=key, on_tap=("open", key))
                for i, key in enumerate(c.app_order)]

    def _screen_board(self) -> list[Widget]:
        """The curriculum board: its tiles, a tapped one marked ``selected``."""
        return [replace(w, selected=w.id in self.tapped) for w in self.board]

    def _screen_pan(self) -> list[Widget]:
        """A numbered grid of cells, larger than the screen, scrolled by ``pan`` in all four directions."""
        w, top, bottom = self.screen.width, self.status_h, self.screen.height - self.nav_h
        size = self.screen.px(PAN_CELL_DP)
        reach = PAN_STEPS * self.screen.px(PAN_STEP_DP)
        cols = -(-(w + 2 * reach) // size) + 1
        rows = -(-(bottom - top + 2 * reach) // size) + 1
        out = []
        for r in range(rows):
            for c in range(cols):
                x1, y1 = c * size - reach - self.pan[0], top + r * size - reach - self.pan[1]
                x2, y2 = x1 + size, y1 + size
                vis = (max(x1, 0), max(y1, top), min(x2, w), min(y2, bottom))
                if vis[0] >= vis[2] or vis[1] >= vis[3]:
                    continue
                out.append(Widget(f"cell_{r}_{c}", "cell", str(r * cols + c + 1), (x1, y1, x2, y2),
                                  clip=None if vis == (x1, y1, x2, y2) else vis, detail=str((r + c) % 2)))
        return out

    def _screen_textbox(self) -> list[Widget]:
        """One large text field (the curriculum's typing screen)."""
        px, w = self.screen.px, self.screen.width
        y = self.status_h + px(24)
        return [self._field("text_box", "Type here", (self.pad, y, w - self.pad, y + px(64)))]

    def _screen_recents(self) -> list[Widget]:
        out = self._appbar("Recent apps", back=False)
        if not self.recents:
            return out + [Widget("recents_empty", "text", "No recent items",
                                 (self.pad, self._below_bar, self.screen.width - self.pad, self._below_bar + self.row_h))]
        cards = [(f"recent_{k}", self.content.app_labels[k], "", ("open", k)) for k in self.recents[:6]]
        rows = self._list("recents", self._rows(cards), self._below_bar)
        y = self._below_bar + len(rows) * self.row_h + self.pad
        cx = self.screen.width // 2
        return out + rows + [Widget("clear_all", "button", "Clear all",
                                    (cx - self.screen.px(80), y, cx + self.screen.px(80), y + self.screen.px(48)),
                                    on_tap=("clear_recents",))]

    def _screen_app(self, key: str) -> list[Widget]:
        return self._appbar(self.content.app_labels[key], back=False) + [
            Widget("empty_text", "text", "Nothing here yet",
                   (self.pad, self._below_bar, self.screen.width - self.pad, self._below_bar + self.row_h))]

    def _screen_settings(self) -> list[Widget]:
        c = self.content
        items = [(f"setting_{key}", c.settings_labels[key], "",
                  ("toggle", key) if SETTINGS[key][1] else ("push", "settings_page", key)) for key in c.settings_order]
        toggles = {f"setting_{key}": on for key, on in self.settings.items()}
        return self._appbar(c.app_labels["settings"], back=False) + self._list(
            "settings", self._rows(items, toggles), self._below_bar)

    def _screen_settings_page(self, key: str) -> list[Widget]:
        return self._appbar(self.content.settings_labels[key], back=True) + [
            Widget("page_text", "text", "No options to change on this page",
                   (self.pad, self._below_bar, self.screen.width - self.pad, self._below_bar + self.row_h))]

    def _screen_messages(self) -> list[Widget]:
        items = [(f"thread_{i}", name, self.threads[name][-1][1] if self.threads.get(name) else "",
                  ("push", "thread", name)) for i, name in enumerate(self.content.thread_order)]
        return self._appbar(self.content.app_labels["messages"], back=False) + self._list(
            "threads", self._rows(items), self._below_bar)

    def _screen_thread(self, name: str) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        bottom = self.content_bottom
        send_size = px(48)
        field_box = (self.pad, bottom - px(60), w - self.pad - send_size - px(8), bottom - px(8))
        send_x = w - self.pad - send_size
        has_text = bool(self.fields.get("message_input"))
        out = self._appbar(name, back=True) + [
            self._field("message_input", "Type a message", field_box),
            Widget("send", "iconbutton", "Send", (send_x, bottom - px(58), send_x + send_size, bottom - px(10)),
                   enabled=has_text, on_tap=("send", name))]
        y = field_box[1] - px(12)
        bh = px(40)
        body = font(self.renderer.text_px("body"))
        for i, (sender, text) in reversed(list(enumerate(self.threads.get(name, [])))):
            if y - bh < self._below_bar + px(8):
                break
            bw = min(int(body.getlength(text) + 1.5 * self.pad) + 2, w - 2 * self.pad)
            x1 = w - self.pad - bw if sender == "me" else self.pad
            out.append(Widget(f"msg_{i}", "bubble", text, (x1, y - bh, x1 + bw, y), detail=sender))
            y -= bh + px(8)
        return out

    def _contact_index(self, name: str) -> int:
        return next(i for i, (n, _) in enumerate(self.content.contacts) if n == name)

    def _screen_contacts(self) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        tab = self.tabs["contacts"]
        y1 = self._below_bar
        tabs = [Widget(f"tab_{t.lower()}", "tab", t, (i * w // 2, y1, (i + 1) * w // 2, y1 + px(48)),
                       selected=t == tab, on_tap=("tab", "contacts", t)) for i, t in enumerate(CONTACT_TABS)]
        names = self.content.favorites if tab == "Favorites" else [n for n, _ in self.content.contacts]
        items = [(f"contact_{self._contact_index(n)}", n, "", ("push", "contact", n)) for n in names]
        return (self._appbar(self.content.app_labels["contacts"], back=False) + tabs
                + self._list(f"contacts_{tab}", self._rows(items), y1 + px(48)))

    def _screen_contact(self, name: str) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        phone = self.content.contacts[self._contact_index(name)][1]
        y = self._below_bar + px(16)
        bw = (w - 3 * self.pad) // 2
        return self._appbar(name, back=True) + [
            Widget("phone_number", "text", phone, (self.pad, y, w - self.pad, y + px(40))),
            Widget("call", "button", "Call", (self.pad, y + px(56), self.pad + bw, y + px(104)),
                   on_tap=("push", "call", name)),
            Widget("message", "button", "Message", (2 * self.pad + bw, y + px(56), 2 * self.pad + 2 * bw, y + px(104)),
                   on_tap=("push", "thread", name))]

    def _screen_call(self, name: str) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        cx, y = w // 2, self.screen.height // 2
        return self._appbar(f"Calling {name}", back=False) + [
            Widget("end_call", "button", "End call", (cx - px(80), y, cx + px(80), y + px(56)), on_tap=("back",))]

    def _fab(self, wid: str, label: str, cmd: tuple[str, ...]) -> Widget:
        px, w = self.screen.px, self.screen.width
        s = px(56)
        b = self.content_bottom - px(16)
        return Widget(wid, "fab", label, (w - px(16) - s, b - s, w - px(16), b), on_tap=cmd)

    def _screen_notes(self) -> list[Widget]:
        items = [(f"note_{i}", title, body, ("push", "note", title)) for i, (title, body) in enumerate(self.notes)]
        return (self._appbar(self.content.app_labels["notes"], back=False)
                + self._list("notes", self._rows(items), self._below_bar)
                + [self._fab("new_note", "New note", ("push", "note_edit"))])

    def _screen_note(self, title: str) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        body = next((b for t, b in self.notes if t == title), "")
        s = px(48)
        delete = Widget("delete_note", "iconbutton", "Delete",
                        (w - px(8) - s, self.status_h + (self.bar_h - s) // 2, w - px(8),
                         self.status_h + (self.bar_h + s) // 2), on_tap=("ask_delete", title))
        y = self._below_bar + px(8)
        return self._appbar(title, back=True, action=delete) + [
            Widget("note_text", "text", body, (self.pad, y, w - self.pad, y + px(40)))]

    def _screen_note_edit(self) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        y = self._below_bar + px(8)
        return self._appbar("New note", back=True) + [
            self._field("note_title", "Title", (self.pad, y, w - self.pad, y + px(56))),
            self._field("note_body", "Note", (self.pad, y + px(68), w - self.pad, y + px(124))),
            Widget("save_note", "button", "Save", (w - self.pad - px(112), y + px(140), w - self.pad, y + px(188)),
                   enabled=bool(self.fields.get("note_title")), on_tap=("save_note",))]

    def _screen_maps(self) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        y = self.status_h + px(8)
        s = px(48)
        out = [Widget("map", "map", "Map", (0, self.status_h, w, self.screen.height - self.nav_h),  # under the keyboard
                      detail=f"map {self.content.seed % 2}"),
               self._field("maps_query", "Search here", (self.pad, y, w - self.pad - s - px(8), y + px(56))),
               Widget("search", "iconbutton", "Search", (w - self.pad - s, y + px(4), w - self.pad, y + px(52)),
                      enabled=bool(self.fields.get("maps_query")), on_tap=("search",))]
        if self.maps_query:
            items = [(f"result_{i}", f"{self.maps_query.title()} {name}", f"{0.3 + 0.4 * i:.1f} km", ())
                     for i, name in enumerate(("Central", "Corner", "Express", "Garden", "Station"))]
            top = max(self.content_bottom - 3 * self.row_h, y + px(72))
            out += self._list("results", self._rows(items), top)
        return out

    def _screen_clock(self) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        tab = self.tabs["clock"]
        y1 = self._below_bar
        out = self._appbar(self.content.app_labels["clock"], back=False) + [
            Widget(f"tab_{t.lower()}", "tab", t, (i * w // 3, y1, (i + 1) * w // 3, y1 + px(48)), selected=t == tab,
                   on_tap=("tab", "clock", t)) for i, t in enumerate(CLOCK_TABS)]
        if tab == "Alarm":
            items = [(f"alarm_{tm.replace(':', '')}", tm, "Every day", ("alarm_toggle", tm)) for tm, _ in self.alarms]
            checked = {f"alarm_{tm.replace(':', '')}": on for tm, on in self.alarms}
            return (out + self._list("alarms", self._rows(items, checked), y1 + px(48))
                    + [self._fab("add_alarm", "Add alarm", ("ask_alarm",))])
        running = self.running.get(tab, False)
        shown = "00:05:00" if tab == "Timer" else "00:00.00"
        return out + [
            Widget("clock_display", "display", shown, (0, y1 + px(96), w, y1 + px(176))),
            Widget("start_stop", "button", "Stop" if running else "Start",
                   (w // 2 - px(72), y1 + px(200), w // 2 + px(72), y1 + px(252)), on_tap=("start_stop", tab))]

    def _screen_calculator(self) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        y = self._below_bar
        out = self._appbar(self.content.app_labels["calculator"], back=False) + [
            Widget("calc_display", "display", self.calc or "0", (0, y, w, y + px(120)))]
        kw = w // 4
        kh = min(px(96), (self.content_bottom - y - px(136)) // 4)
        top = self.content_bottom - 4 * kh - px(8)
        names = {"/": "divide", "*": "multiply", "-": "minus", "+": "plus", "=": "equals", "C": "clear"}
        for r, row in enumerate(CALC_KEYS):
            for i, ch in enumerate(row):
                out.append(Widget(f"calc_{names.get(ch, ch)}", "key", ch,
                                  (i * kw, top + r * kh, (i + 1) * kw, top + (r + 1) * kh), on_tap=("calc", ch)))
        return out

    def _dialog(self) -> list[Widget]:
        px, w = self.screen.px, self.screen.width
        dw = min(w - 2 * px(32), px(420))
        x1 = (w - dw) // 2
        y1 = self.status_h + px(120)
        kind = self.dialog[0]  # type: ignore[index]
        bw = px(104)
        if kind == "delete_note":
            title = self.dialog[1]  # type: ignore[index]
            y2 = y1 + px(180)
            return [Widget("dialog", "dialog", "Delete this note?", (x1, y1, x1 + dw, y2), detail=title),
                    Widget("dialog_cancel", "button", "Cancel", (x1 + dw - 2 * bw - px(32), y2 - px(64),
                                                                  x1 + dw - bw - px(32), y2 - px(20)), on_tap=("cancel",)),
                    Widget("dialog_delete", "button", "Delete", (x1 + dw - bw - px(20), y2 - px(64),
                                                                  x1 + dw - px(20), y2 - px(20)),
                           on_tap=("delete_note", title))]
        y2 = y1 + px(232)
        valid = normalize_time(self.fields.get("alarm_time", "")) is not None
        return [Widget("dialog", "dialog", "Set alarm", (x1, y1, x1 + dw, y2)),
                self._field("alarm_time", "HH:MM", (x1 + px(24), y1 + px(76), x1 + dw - px(24), y1 + px(132))),
                Widget("dialog_cancel", "button", "Cancel", (x1 + dw - 2 * bw - px(32), y2 - px(64),
                                                              x1 + dw - bw - px(32), y2 - px(20)), on_tap=("cancel",)),
                Widget("dialog_ok", "button", "OK", (x1 + dw - bw - px(20), y2 - px(64), x1 + dw - px(20), y2 - px(20)),
                       enabled=valid, on_tap=("add_alarm",))]


def _canonical(value: Any) -> Any:
    """``value`` as nested tuples (dicts as items sorted by key), for :meth:`Phone.state_key`."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(v) for v in value)
    return value


def _finite(v: float) -> bool:
    return v == v and abs(v) != float("inf")


__all__ = ["BUTTON_ACTIONS", "CALC_KEYS", "KEY_ROWS", "Phone", "ROUTE_APP", "evaluate", "normalize_time"]
