"""Pillow + numpy renderer of the simulated phone.

Every widget is drawn once with Pillow into a sprite (an HxWx3 uint8 array, its full box) and cached by what it
shows; a frame is the cached background of its screen/theme with the sprites pasted at their boxes (clipped where a
list cuts them). Finished frames are cached by their composition, so revisiting a screen costs one array copy.
Both caches are LRU with a byte budget. Text uses Pillow's bundled scalable font (``ImageFont.load_default(size)``,
Pillow >= 10.1), so screens are identical on every machine with the same Pillow.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageFont

from core.world.device import Screen, Theme
from core.world.widgets import Widget

#: Roles drawn with the theme's accent colour (their sprites are cached per accent; the others are shared).
ACCENT_ROLES = frozenset({"button", "card", "fab", "iconbutton", "toggle", "tab", "textfield", "bubble"})
#: The curriculum board's tile colours (name -> RGB, the same in both themes) and shapes.
TILE_COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40), "green": (30, 160, 60), "blue": (40, 90, 230), "yellow": (245, 200, 20),
    "purple": (150, 60, 200), "orange": (245, 125, 20),
}
TILE_SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "diamond")
#: Text sizes in sp (scaled by density and the font scale).
TEXT_SP = {"body": 16, "small": 13, "title": 22, "key": 18, "display": 40, "label": 12}


def _nbytes(value: Any) -> int:
    return (value[0] if isinstance(value, tuple) else value).nbytes


class ByteLRU:
    """A thread-safe LRU cache of numpy arrays (or tuples led by one) bounded by the arrays' total bytes."""

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.used = 0
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any) -> None:
        """Store ``value`` (an array, or a tuple whose first item is the array)."""
        size = _nbytes(value)
        with self._lock:
            if key in self._items or size > self.budget:
                return
            self._items[key] = value
            self.used += size
            while self.used > self.budget:
                _, old = self._items.popitem(last=False)
                self.used -= _nbytes(old)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.used = 0


SPRITES = ByteLRU(192 << 20)  # the sprites of about 40 layout seeds' screens at 1080x2400
FRAMES = ByteLRU(128 << 20)  # 16 frames of 1080x2400: a whole episode stays cached


@lru_cache(maxsize=64)
def font(px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=max(px, 6))  # type: ignore[return-value]


def _fit(text: str, f: ImageFont.FreeTypeFont, max_w: float) -> str:
    """``text`` cut with '...' to fit ``max_w`` pixels."""
    if f.getlength(text) <= max_w:
        return text
    while text and f.getlength(text + "...") > max_w:
        text = text[:-1]
    return text + "..."


class Renderer:
    """Draws widgets for one screen, theme and font scale."""

    def __init__(self, screen: Screen, theme: Theme, font_scale: float):
        self.screen, self.theme, self.font_scale = screen, theme, font_scale
        self._key = (screen.name, theme, font_scale)

    def text_px(self, kind: str) -> int:
        return int(round(TEXT_SP[kind] * self.screen.density * self.font_scale))

    # ------------------------------------------------------------------ frames
    def background(self, status_h: int, nav_h: int) -> np.ndarray:
        return _background(self.screen, self.theme.background, self.theme.bar, status_h, nav_h)

    def frame(self, widgets: Sequence[Widget], status_h: int, nav_h: int) -> np.ndarray:
        """The screenshot: a read-only HxWx3 uint8 array that shares memory with no screenshot returned before
        (gymnasium requires new observation data on every call): a newly composed frame is returned and kept in
        the frame cache, a cached one is returned as a copy."""
        signature = (self._key, status_h, nav_h, tuple(widgets))
        cached = FRAMES.get(signature)
        if cached is None:
            out = self.compose(widgets, status_h, nav_h)
            FRAMES.put(signature, out)
            return out
        out = cached.copy()
        out.flags.writeable = False
        return out

    def compose(self, widgets: Sequence[Widget], status_h: int, nav_h: int) -> np.ndarray:
        """A new screenshot from the cached background and sprites (no frame cache)."""
        bg = self.background(status_h, nav_h)
        height, width = bg.shape[:2]
        pastes = []
        covered = np.zeros(height + 1, bool)  # rows a full-width paste paints over anyway (+ an end sentinel)
        covered[height] = True
        for w in widgets:
            sprite, dx, dy = self.sprite(w)
            vx1, vy1, vx2, vy2 = w.visible_box
            sx, sy = w.box[0] + dx, w.box[1] + dy
            x1, y1 = max(sx, vx1, 0), max(sy, vy1, 0)
            x2, y2 = min(sx + sprite.shape[1], vx2, width), min(sy + sprite.shape[0], vy2, height)
            if x2 > x1 and y2 > y1:
                pastes.append((sprite[y1 - sy:y2 - sy, x1 - sx:x2 - sx], x1, y1, x2, y2))
                if x1 == 0 and x2 == width:
                    covered[y1:y2] = True
        out = np.empty_like(bg)
        edges = np.flatnonzero(np.diff(np.concatenate(([True], covered))))  # starts/ends of uncovered runs
        for start, end in zip(edges[::2], edges[1::2], strict=False):
            out[start:end] = bg[start:end]
        for part, x1, y1, x2, y2 in pastes:
            out[y1:y2, x1:x2] = part
        out.flags.writeable = False
        return out

    def sprite(self, w: Widget) -> tuple[np.ndarray, int, int]:
        """(pixels, dx, dy): the widget drawn on its full box; when the screen under it already shows its fill
        colour, trimmed to what differs from that colour (offset (dx, dy) from the box's top-left)."""
        x1, y1, x2, y2 = w.box
        fill = self._fill(w)
        colours = self.theme if w.role in ACCENT_ROLES else self.theme.name  # sprites without accent are shared
        key = (self.screen.density, self.font_scale, colours, w.role, w.text, w.detail, x2 - x1, y2 - y1, w.enabled,
               w.checked, w.focused, w.selected, fill)
        hit = SPRITES.get(key)
        if hit is not None:
            return hit
        im = self._draw(w, x2 - x1, y2 - y1, fill)
        dx = dy = 0
        if fill == self.theme.background or w.role in ("statusbar", "navbutton"):  # the screen shows fill there
            ink = ImageChops.difference(im, Image.new("RGB", im.size, fill)).getbbox()
            dx, dy = ink[:2] if ink else (0, 0)
            im = im.crop(ink or (0, 0, 0, 0))
        arr = np.asarray(im)
        entry = (arr, dx, dy)
        SPRITES.put(key, entry)
        return entry

    def _fill(self, w: Widget) -> tuple[int, int, int]:
        """The colour under a widget: the bars' colour, a surface (dialogs, text fields, dialog buttons, map
        search results), or the screen background."""
        t = self.theme
        if w.role in ("statusbar", "navbutton", "key", "keyboard"):
            return t.bar
        if w.role in ("dialog", "textfield") or w.id.startswith(("dialog_", "result_")):  # on a panel or the map
            return t.surface
        return t.background

    # ------------------------------------------------------------------ drawing
    def _draw(self, w: Widget, width: int, height: int, fill: tuple[int, int, int]) -> Image.Image:  # noqa: C901
        t, d = self.theme, self.screen.density
        im = Image.new("RGB", (width, height), fill)
        dr = ImageDraw.Draw(im)
        body, small = font(self.text_px("body")), font(self.text_px("small"))
        pad = int(16 * d)
        fg = t.text if w.enabled else t.disabled
        cy = height / 2
        role = w.role
        if role == "statusbar":
            dr.text((pad, cy), w.text, font=small, fill=t.text, anchor="lm")
            dr.text((width - pad, cy), w.detail, font=small, fill=t.text, anchor="rm")
        elif role == "navbutton":
            r = min(width, height) * 0.22
            cx = width / 2
            if w.text == "Back":
                dr.polygon([(cx - r, cy), (cx + r * 0.8, cy - r), (cx + r * 0.8, cy + r)], outline=t.text,
                           width=max(2, int(2 * d)))
            elif w.text == "Home":
                dr.ellipse((cx - r, cy - r, cx + r, cy + r), outline=t.text, width=max(2, int(2 * d)))
            else:
                dr.rectangle((cx - r * 0.85, cy - r * 0.85, cx + r * 0.85, cy + r * 0.85), outline=t.text,
                             width=max(2, int(2 * d)))
        elif role == "icon":
            s = min(width * 0.62, height * 0.58)
            x0, y0 = (width - s) / 2, height * 0.06
            color = _icon_color(w.detail or w.text)
            dr.rounded_rectangle((x0, y0, x0 + s, y0 + s), radius=s * 0.28, fill=color)
            dr.text((width / 2, y0 + s / 2), (w.text[:1] or "?").upper(), font=font(int(s * 0.45)),
                    fill=(255, 255, 255), anchor="mm")
            label = font(self.text_px("label"))
            dr.text((width / 2, y0 + s + (height - y0 - s) / 2), _fit(w.text, label, width - 4), font=label,
                    fill=t.text, anchor="mm")
        elif role == "title":
            title = font(self.text_px("title"))
            dr.text((pad, cy), _fit(w.text, title, width - 2 * pad), font=title, fill=t.text, anchor="lm")
        elif role in ("button", "card"):
            color = t.accent if w.enabled else t.track_off
            dr.rounded_rectangle((0, 0, width - 1, height - 1), radius=min(height / 2, 20 * d), fill=color)
            dr.text((width / 2, cy), _fit(w.text, body, width - pad), font=body, fill=t.on_accent, anchor="mm")
        elif role in ("iconbutton", "fab"):
            r = min(width, height) / 2 - 1
            dr.ellipse((width / 2 - r, cy - r, width / 2 + r, cy + r),
                       fill=t.accent if role == "fab" else (t.surface if w.enabled else t.background),
                       outline=t.outline)
            glyph = {"Navigate up": "<", "New note": "+", "Add alarm": "+", "Delete": "X", "Send": ">",
                     "Search": "Go"}.get(w.text, w.text[:2])
            dr.text((width / 2, cy), glyph, font=font(int(r * 0.9)),
                    fill=t.on_accent if role == "fab" else (t.accent if w.enabled else t.disabled), anchor="mm")
        elif role in ("listitem", "toggle"):
            right = width - pad
            if role == "toggle":
                tw, th = 36 * d, 20 * d
                tx, ty = width - pad - tw, cy - th / 2
                dr.rounded_rectangle((tx, ty, tx + tw, ty + th), radius=th / 2,
                                     fill=t.accent if w.checked else t.track_off)
                kx = tx + tw - th / 2 if w.checked else tx + th / 2
                dr.ellipse((kx - th * 0.4, cy - th * 0.4, kx + th * 0.4, cy + th * 0.4), fill=(255, 255, 255))
                right = tx - pad / 2
            if w.detail:
                dr.text((pad, cy - 2), _fit(w.text, body, right - pad), font=body, fill=fg, anchor="ld")
                dr.text((pad, cy + 4 * d), _fit(w.detail, small, right - pad), font=small,
                        fill=t.text_secondary, anchor="lt")
            else:
                dr.text((pad, cy), _fit(w.text, body, right - pad), font=body, fill=fg, anchor="lm")
        elif role == "tab":
            dr.text((width / 2, cy), _fit(w.text, body, width - 8), font=body,
                    fill=t.accent if w.selected else t.text_secondary, anchor="mm")
            if w.selected:
                dr.rectangle((width * 0.15, height - 3 * d, width * 0.85, height - 1), fill=t.accent)
        elif role == "textfield":
            dr.rounded_rectangle((0, 0, width - 1, height - 1), radius=8 * d,
                                 outline=t.accent if w.focused else t.outline,
                                 width=max(1, int((2 if w.focused else 1) * d)))
            shown = w.text or w.detail  # detail holds the hint
            dr.text((pad, cy), _fit(shown, body, width - 2 * pad), font=body,
                    fill=t.text if w.text else t.text_secondary, anchor="lm")
            if w.focused:
                x = pad + body.getlength(_fit(w.text, body, width - 2 * pad)) + 2
                dr.line((x, cy - body.size * 0.6, x, cy + body.size * 0.6), fill=t.accent, width=max(1, int(d)))
        elif role == "key":
            dr.rounded_rectangle((2, 2, width - 3, height - 3), radius=5 * d, fill=t.surface)
            dr.text((width / 2, cy), w.text, font=font(self.text_px("key")), fill=t.text, anchor="mm")
        elif role == "bubble":
            mine = w.detail == "me"
            dr.rounded_rectangle((0, 0, width - 1, height - 1), radius=14 * d,
                                 fill=t.accent if mine else t.bubble_them)
            dr.text((pad * 0.75, cy), w.text, font=body, fill=t.on_accent if mine else t.text, anchor="lm")
        elif role == "display":
            dr.text((width - pad, cy), _fit(w.text, font(self.text_px("display")), width - 2 * pad),
                    font=font(self.text_px("display")), fill=t.text, anchor="rm")
        elif role == "dialog":
            dr.rounded_rectangle((0, 0, width - 1, height - 1), radius=24 * d, fill=t.surface, outline=t.outline,
                                 width=max(1, int(2 * d)))
            dr.text((pad * 1.5, pad * 1.5), w.text, font=font(self.text_px("title")), fill=t.text, anchor="lt")
        elif role == "tile":
            _draw_tile(dr, width, height, w.detail, w.selected, t)
        elif role == "apptile":
            dr.rounded_rectangle((0, 0, width - 1, height - 1), radius=min(width, height) * 0.12,
                                 fill=_icon_color(w.detail or w.text))
            size = int(height * 0.3)  # as large as fits the tile's width
            while size > 10 and font(size).getlength(w.text) > width * 0.9:
                size -= 2
            dr.text((width / 2, cy), _fit(w.text, font(size), width - 4), font=font(size), fill=(255, 255, 255),
                    anchor="mm")
        elif role == "cell":
            dr.rectangle((1, 1, width - 2, height - 2), fill=t.surface if w.detail == "0" else t.bubble_them)
            dr.text((width / 2, cy), w.text, font=font(int(height * 0.3)), fill=t.text_secondary, anchor="mm")
        elif role == "map":
            _draw_map(dr, width, height, w.detail, t)
        elif role == "keyboard":
            pass  # the panel behind the keys: its fill only
        else:  # text
            dr.text((0, cy), _fit(w.text, body, width), font=body, fill=t.text_secondary, anchor="lm")
        return im


@lru_cache(maxsize=4)
def _background(screen: Screen, fill: tuple[int, int, int], bar: tuple[int, int, int], status_h: int, nav_h: int
                ) -> np.ndarray:
    """An empty screen: status and navigation bars over the theme background (read-only, kept for reuse)."""
    im = Image.new("RGB", (screen.width, screen.height), fill)
    ImageDraw.Draw(im).rectangle((0, 0, screen.width, status_h - 1), fill=bar)
    ImageDraw.Draw(im).rectangle((0, screen.height - nav_h, screen.width, screen.height), fill=bar)
    arr = np.array(im)
    arr.flags.writeable = False
    return arr


def _icon_color(name: str) -> tuple[int, int, int]:
    import zlib

    palette = ((219, 68, 55), (15, 157, 88), (66, 133, 244), (244, 160, 0), (171, 71, 188), (0, 172, 193),
               (255, 112, 67), (92, 107, 192))
    return palette[zlib.crc32(name.encode()) % len(palette)]


def _draw_tile(dr: ImageDraw.ImageDraw, width: int, height: int, detail: str, tapped: bool, t: Theme) -> None:
    """A board tile: a card with a ``detail`` = "<colour> <shape>" shape on it, ringed once tapped."""
    colour, shape = detail.split()
    dr.rounded_rectangle((0, 0, width - 1, height - 1), radius=min(width, height) * 0.1, fill=t.surface,
                         outline=t.text if tapped else t.outline, width=max(2, min(width, height) // 12) if tapped else 1)
    r = min(width, height) * 0.36
    cx, cy = width / 2, height / 2
    rgb = TILE_COLOURS[colour]
    if shape == "circle":
        dr.ellipse((cx - r, cy - r, cx + r, cy + r), fill=rgb)
    elif shape == "square":
        dr.rectangle((cx - r * 0.85, cy - r * 0.85, cx + r * 0.85, cy + r * 0.85), fill=rgb)
    elif shape == "triangle":
        dr.polygon([(cx, cy - r), (cx + r, cy + r * 0.8), (cx - r, cy + r * 0.8)], fill=rgb)
    else:  # diamond
        dr.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=rgb)


def _draw_map(dr: ImageDraw.ImageDraw, width: int, height: int, seed_text: str, t: Theme) -> None:
    """A street-map texture: parks and a road grid placed by ``seed_text``."""
    import random

    rng = random.Random(seed_text)
    park = (200, 230, 201) if t.name == "light" else (40, 70, 45)
    road = (255, 255, 255) if t.name == "light" else (70, 72, 80)
    dr.rectangle((0, 0, width, height), fill=(236, 232, 224) if t.name == "light" else (36, 38, 44))
    for _ in range(4):
        x, y = rng.uniform(0, width), rng.uniform(0, height)
        dr.ellipse((x - width / 8, y - width / 10, x + width / 8, y + width / 10), fill=park)
    lw = max(3, width // 90)
    for _ in range(6):
        x = rng.uniform(0, width)
        dr.line((x, 0, x + rng.uniform(-width / 4, width / 4), height), fill=road, width=lw)
        y = rng.uniform(0, height)
        dr.line((0, y, width, y + rng.uniform(-height / 8, height / 8)), fill=road, width=lw)


@lru_cache(maxsize=32)
def renderer(screen: Screen, theme: Theme, font_scale: float) -> Renderer:
    return Renderer(screen, theme, font_scale)


__all__ = ["FRAMES", "SPRITES", "TILE_COLOURS", "TILE_SHAPES", "ByteLRU", "Renderer", "font", "renderer"]
