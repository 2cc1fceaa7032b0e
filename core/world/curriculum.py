"""The curriculum: task families of the simulated phone that a tiny model trained from scratch can learn.

All are shown on the small square screen ``square_448`` (448 x 448 px, density 1; at a 50,176-pixel budget it
becomes 8 x 8 tokens of 28 px) with large targets and short instructions, and end after as many actions as their
gold plan has (one, or two for ``tap_two_tiles``), so an episode's success is the accuracy of that many answers.

Text-determined families (the instruction and simple screen content fix the action):

- ``go_back``: "Go back" on a settings sub-page: press Back (or tap the Back / Navigate-up button).
- ``scroll_direction``: "Scroll down|up|left|right" on a numbered grid that scrolls all four ways.
- ``type_in_box``: "Type 'blue sky' in the box" with the box focused; success is GUI-R1's text rule (token F1 >= 0.5
  between the box's text and the phrase, :func:`core.text_match.text_match`).
- ``open_app_tile``: "Open the Clock app" on a 2 x 2 board of big labelled app tiles: tap inside the tile.

Visual families: a rows x cols board of tiles, each a distinct (colour, shape) pair drawn from the layout seed
(colours, shapes and positions), the instruction naming one ("Tap the green triangle"). Levels by board size and
tile size (``BOARD_LEVELS``); a uniformly random tap hits the target with probability tile area / screen area.
``tap_two_tiles``: "Tap the green tile, then the blue one" on a 2 x 2 board of distinct colours; success only when
both are tapped in that order (the last two taps).

Multi-step families (``MULTI_STEP``, for agent RL: each step fixed by the instruction, so an episode can fail
midway; as many actions allowed as the plan has):

- ``open_app_then_back``: "Open the Clock app, then go back" on the app-tile board: tap the tile, press Back.
- ``scroll_two_ways``: "Scroll down, then right" on the grid (one vertical and one horizontal direction): two scrolls.
- ``open_two_apps``: "Open the Clock app, go back, then open the Notes app": tap, Back, tap.

They and the one-step families they are made of (``go_back``, ``scroll_direction``, ``open_app_tile``) form the
agent curriculum (``AGENT_FAMILIES``, splits ``agent_train`` / ``agent_val`` / ``agent_test``).

Boards, the grid and the text box are pinned screens (Android's screen pinning: Home and Recent do nothing, Back
never leaves them), so a task cannot be lost by leaving its screen.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from typing import Any

from core.actions import Action
from core.text_match import text_match
from core.world.content import APPS, SETTINGS, Content
from core.world.phone import Phone
from core.world.plans import Family, GoldStep, fill, press, tap, to_screen
from core.world.render import TILE_COLOURS, TILE_SHAPES
from core.world.widgets import Widget

CURRICULUM_SCREEN = "square_448"
#: Board families -> (rows, cols, tile side as a share of its cell). Random-tap hit rate on square_448 (tile area /
#: screen area; the board spans the screen between the status and navigation bars): 2x2 19.0%, 3x3 8.4%,
#: 2x2_small 5.2%, 4x4 4.7%.
BOARD_LEVELS: dict[str, tuple[int, int, float]] = {
    "tap_tile_2x2": (2, 2, 0.95),
    "tap_tile_3x3": (3, 3, 0.95),
    "tap_tile_2x2_small": (2, 2, 0.5),
    "tap_tile_4x4": (4, 4, 0.95),
}
TEXT_FAMILIES: tuple[str, ...] = ("go_back", "scroll_direction", "type_in_box", "open_app_tile")
VISUAL_FAMILIES: tuple[str, ...] = (*BOARD_LEVELS, "tap_two_tiles")
DIRECTIONS: tuple[str, ...] = ("down", "up", "left", "right")
#: Two-word phrases to type (none shares a word with the random baseline's words).
PHRASES: tuple[str, ...] = (
    "blue sky", "green tea", "red apple", "cold water", "fast car", "big city", "warm bread", "quiet room",
    "new phone", "late train", "small dog", "bright moon", "dark forest", "fresh fish", "old house", "soft pillow",
)
#: Settings entries that open a sub-page (the start screens of ``go_back``).
PAGES: tuple[str, ...] = tuple(k for k, (_, is_toggle) in SETTINGS.items() if not is_toggle)
APP_TILE_FILL = 0.9


def board_boxes(phone: Phone, rows: int, cols: int, fill: float) -> list[tuple[int, int, int, int]]:
    """Tile boxes (screen px, row-major) of a rows x cols board spanning the screen between the status and
    navigation bars, each tile ``fill`` x its cell's width and height, centred in the cell."""
    w, top, bottom = phone.screen.width, phone.status_h, phone.screen.height - phone.nav_h
    cw, ch = w / cols, (bottom - top) / rows
    out = []
    for r in range(rows):
        for c in range(cols):
            cx, cy = (c + 0.5) * cw, top + (r + 0.5) * ch
            hw, hh = fill * cw / 2, fill * ch / 2
            out.append((round(cx - hw), round(cy - hh), round(cx + hw), round(cy + hh)))
    return out


# ---------------------------------------------------------------------------------------------- text families
def _back_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    return {"page": rng.choice(PAGES)}, "Go back"


def _back_setup(phone: Phone, p: dict[str, Any]) -> None:
    phone.start([("home",), ("settings",), ("settings_page", p["page"])])


def _back_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if phone.route[0] == "settings_page" or phone.dialog is not None:
        return press("press_back", "Go back")
    return to_screen(phone, ("settings",))


def _pick_make(key: str, options: tuple[str, ...], say: str, rng: random.Random, c: Content
               ) -> tuple[dict[str, Any], str]:
    """A task of a family that asks for one of ``options`` (its parameter ``key``; the instruction ``say`` with
    it filled in)."""
    value = rng.choice(options)
    return {key: value}, say.format(value)


def _pick_variants(key: str, options: tuple[str, ...], say: str, p: dict[str, Any], c: Content
                   ) -> list[tuple[dict[str, Any], str]]:
    """The other tasks of the same start screen: every other option."""
    return [({key: v}, say.format(v)) for v in options if v != p[key]]


def _pick_one(key: str, options: tuple[str, ...], say: str) -> tuple[Callable, Callable]:
    """``make`` and ``variants`` of a family whose task is one of ``options`` (module functions: picklable)."""
    return partial(_pick_make, key, options, say), partial(_pick_variants, key, options, say)


_scroll_make, _scroll_variants = _pick_one("direction", DIRECTIONS, "Scroll {}")


def _scroll_goal(phone: Phone, p: dict[str, Any]) -> bool:
    x, y = phone.pan
    return {"down": y > 0, "up": y < 0, "right": x > 0, "left": x < 0}[p["direction"]]


def _scroll_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if _scroll_goal(phone, p):
        return None
    return GoldStep(Action(type="scroll", direction=p["direction"]), f"Scroll {p['direction']}")


_type_make, _type_variants = _pick_one("text", PHRASES, "Type '{}' in the box")


def _type_goal(phone: Phone, p: dict[str, Any]) -> bool:
    return text_match(phone.fields.get("text_box", ""), p["text"])


def _type_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if _type_goal(phone, p):
        return None
    return fill(phone, "text_box", p["text"], "text")


def _app_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    apps = rng.sample(sorted(APPS), 4)
    key = rng.choice(apps)
    return {"apps": apps, "app": key}, f"Open the {c.app_labels[key]} app"


def _app_variants(p: dict[str, Any], c: Content) -> list[tuple[dict[str, Any], str]]:
    return [({**p, "app": key}, f"Open the {c.app_labels[key]} app") for key in p["apps"] if key != p["app"]]


def _app_setup(phone: Phone, p: dict[str, Any]) -> None:
    labels = phone.content.app_labels
    tiles = [Widget(f"apptile_{key}", "apptile", labels[key], box, detail=key, on_tap=("open", key))
             for key, box in zip(p["apps"], board_boxes(phone, 2, 2, APP_TILE_FILL), strict=True)]
    phone.start([("board",)], pinned=True, board=tuple(tiles))


def _app_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if phone.app == p["app"]:
        return None
    if phone.route != ("board",):
        return press("press_back", "Go back")
    tile = next(w for w in phone.board if w.detail == p["app"])
    return tap(tile, f"Tap the {tile.text} app")


# ---------------------------------------------------------------------------------------------- visual families
def _board_make(level: str):
    rows, cols, fill_share = BOARD_LEVELS[level]

    def make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
        pairs = rng.sample([f"{col} {shape}" for col in TILE_COLOURS for shape in TILE_SHAPES], rows * cols)
        target = rng.randrange(rows * cols)
        return ({"rows": rows, "cols": cols, "fill": fill_share, "tiles": pairs, "targets": [target]},
                _board_instruction(pairs, [target]))
    return make


def _board_instruction(tiles: list[str], targets: list[int]) -> str:
    """"Tap the green triangle" (one target), "Tap the green tile, then the blue one" (two: by colour)."""
    if len(targets) == 1:
        return f"Tap the {tiles[targets[0]]}"
    first, second = (tiles[t].split()[0] for t in targets)
    return f"Tap the {first} tile, then the {second} one"


def _board_variants(p: dict[str, Any], c: Content) -> list[tuple[dict[str, Any], str]]:
    """Every other target (one-tap boards) or ordered pair of distinct tiles (two-tap boards) of the same board."""
    n = len(p["tiles"])
    if len(p["targets"]) == 1:
        others = [[t] for t in range(n)]
    else:
        others = [[a, b] for a in range(n) for b in range(n) if a != b]
    return [({**p, "targets": t}, _board_instruction(p["tiles"], t)) for t in others if t != p["targets"]]


def _two_tiles_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    colours = rng.sample(list(TILE_COLOURS), 4)
    tiles = [f"{col} {rng.choice(TILE_SHAPES)}" for col in colours]
    targets = rng.sample(range(4), 2)
    return ({"rows": 2, "cols": 2, "fill": BOARD_LEVELS["tap_tile_2x2"][2], "tiles": tiles, "targets": targets},
            _board_instruction(tiles, targets))


def _board_setup(phone: Phone, p: dict[str, Any]) -> None:
    tiles = [Widget(f"tile_{i}", "tile", desc, box, detail=desc, on_tap=("tile", f"tile_{i}"))
             for i, (desc, box) in enumerate(zip(p["tiles"], board_boxes(phone, p["rows"], p["cols"], p["fill"]),
                                                 strict=True))]
    phone.start([("board",)], pinned=True, board=tuple(tiles))


def _board_done(phone: Phone, p: dict[str, Any]) -> int:
    """How many of the targets the last taps hit in order (the longest prefix of the targets ending the taps)."""
    targets = [f"tile_{i}" for i in p["targets"]]
    return max(j for j in range(len(targets) + 1) if j == 0 or phone.tapped[-j:] == targets[:j])


def _board_goal(phone: Phone, p: dict[str, Any]) -> bool:
    return _board_done(phone, p) == len(p["targets"])


def _board_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    done = _board_done(phone, p)
    if done == len(p["targets"]):
        return None
    if phone.route != ("board",):
        return press("press_back", "Go back")
    tile = phone.board[p["targets"][done]]
    name = tile.text if len(p["targets"]) == 1 else f"{tile.text.split()[0]} tile"
    return tap(tile, f"Tap the {name}")


def _curriculum(name: str, make: Callable, goal: Callable, plan: Callable, setup: Callable, max_actions: int = 1,
                variants: Callable | None = None) -> Family:
    """A curriculum family: on ``CURRICULUM_SCREEN``, ``max_actions`` actions allowed."""
    return Family(name, "curriculum", make, goal, plan, setup=setup, screen=CURRICULUM_SCREEN, max_actions=max_actions,
                  variants=variants)


CURRICULUM: tuple[Family, ...] = (
    _curriculum("go_back", _back_make, lambda ph, p: ph.route == ("settings",) and ph.dialog is None, _back_plan,
                _back_setup),
    _curriculum("scroll_direction", _scroll_make, _scroll_goal, _scroll_plan,
                lambda ph, p: ph.start([("pan",)], pinned=True), variants=_scroll_variants),
    _curriculum("type_in_box", _type_make, _type_goal, _type_plan,
                lambda ph, p: ph.start([("textbox",)], pinned=True, focus="text_box"), variants=_type_variants),
    _curriculum("open_app_tile", _app_make, lambda ph, p: ph.app == p["app"], _app_plan, _app_setup,
                variants=_app_variants),
    *(_curriculum(level, _board_make(level), _board_goal, _board_plan, _board_setup, variants=_board_variants)
      for level in BOARD_LEVELS),
    _curriculum("tap_two_tiles", _two_tiles_make, _board_goal, _board_plan, _board_setup, max_actions=2,
                variants=_board_variants),
)
#: Every curriculum family, text-determined ones first (the order tasks of a seed are listed in).
CURRICULUM_FAMILIES: tuple[str, ...] = tuple(f.name for f in CURRICULUM)


# ---------------------------------------------------------------------------------------------- multi-step families
def _app_back_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    apps = rng.sample(sorted(APPS), 4)
    key = rng.choice(apps)
    return {"apps": apps, "app": key}, f"Open the {c.app_labels[key]} app, then go back"


def _app_back_variants(p: dict[str, Any], c: Content) -> list[tuple[dict[str, Any], str]]:
    return [({**p, "app": key}, f"Open the {c.app_labels[key]} app, then go back") for key in p["apps"]
            if key != p["app"]]


def _app_back_goal(phone: Phone, p: dict[str, Any]) -> bool:
    return phone.route == ("board",) and phone.recents[:1] == [p["app"]]


def _app_back_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if _app_back_goal(phone, p):
        return None
    if phone.route != ("board",):  # in the app (opened: now back), or in a wrong one (back, then try again)
        return press("press_back", "Go back")
    tile = next(w for w in phone.board if w.detail == p["app"])
    return tap(tile, f"Tap the {tile.text} app")


def _two_ways_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    first = rng.choice(DIRECTIONS)
    second = rng.choice([d for d in DIRECTIONS if _axis(d) != _axis(first)])
    return {"directions": [first, second]}, f"Scroll {first}, then {second}"


def _two_ways_variants(p: dict[str, Any], c: Content) -> list[tuple[dict[str, Any], str]]:
    return [({"directions": [a, b]}, f"Scroll {a}, then {b}") for a in DIRECTIONS for b in DIRECTIONS
            if _axis(a) != _axis(b) and [a, b] != p["directions"]]


def _axis(direction: str) -> str:
    return "vertical" if direction in ("down", "up") else "horizontal"


def _two_ways_goal(phone: Phone, p: dict[str, Any]) -> bool:
    return all(_scroll_goal(phone, {"direction": d}) for d in p["directions"])


def _two_ways_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    for d in p["directions"]:
        if not _scroll_goal(phone, {"direction": d}):
            return GoldStep(Action(type="scroll", direction=d), f"Scroll {d}")
    return None


def _two_apps_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    apps = rng.sample(sorted(APPS), 4)
    first, second = rng.sample(apps, 2)
    return ({"apps": apps, "first": first, "second": second},
            f"Open the {c.app_labels[first]} app, go back, then open the {c.app_labels[second]} app")


def _two_apps_variants(p: dict[str, Any], c: Content) -> list[tuple[dict[str, Any], str]]:
    return [({**p, "first": a, "second": b},
             f"Open the {c.app_labels[a]} app, go back, then open the {c.app_labels[b]} app")
            for a in p["apps"] for b in p["apps"] if a != b and (a, b) != (p["first"], p["second"])]


def _two_apps_goal(phone: Phone, p: dict[str, Any]) -> bool:
    return phone.app == p["second"] and phone.recents[:2] == [p["second"], p["first"]]


def _two_apps_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if _two_apps_goal(phone, p):
        return None
    if phone.route != ("board",):
        return press("press_back", "Go back")
    key = p["second"] if phone.recents[:1] == [p["first"]] else p["first"]
    tile = next(w for w in phone.board if w.detail == key)
    return tap(tile, f"Tap the {tile.text} app")


#: Multi-step families for agent RL (each step fixed by the instruction, so an episode can fail midway): composed of
#: the text-determined families above, on the same screens; an episode allows exactly as many actions as the plan.
MULTI_STEP: tuple[Family, ...] = (
    _curriculum("open_app_then_back", _app_back_make, _app_back_goal, _app_back_plan, _app_setup, max_actions=2,
                variants=_app_back_variants),
    _curriculum("scroll_two_ways", _two_ways_make, _two_ways_goal, _two_ways_plan,
                lambda ph, p: ph.start([("pan",)], pinned=True), max_actions=2, variants=_two_ways_variants),
    _curriculum("open_two_apps", _two_apps_make, _two_apps_goal, _two_apps_plan, _app_setup, max_actions=3,
                variants=_two_apps_variants),
)
MULTI_STEP_FAMILIES: tuple[str, ...] = tuple(f.name for f in MULTI_STEP)
#: The agent curriculum (``agent_*`` splits): the one-step text families the multi-step ones are made of, then those.
AGENT_FAMILIES: tuple[str, ...] = ("go_back", "scroll_direction", "open_app_tile", *MULTI_STEP_FAMILIES)

__all__ = ["AGENT_FAMILIES", "BOARD_LEVELS", "CURRICULUM", "CURRICULUM_FAMILIES", "CURRICULUM_SCREEN", "DIRECTIONS",
           "MULTI_STEP", "MULTI_STEP_FAMILIES", "PHRASES", "TEXT_FAMILIES", "VISUAL_FAMILIES", "board_boxes"]
