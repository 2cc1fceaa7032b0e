"""Screens, themes and metrics of the simulated phone.

Sizes are in screen pixels unless named ``*_dp``; ``Screen.density`` converts Android dp to pixels (px = dp *
density, Android's ``DisplayMetrics.density``). Resolutions and densities are those of real devices, portrait.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Screen:
    """A device screen: ``width`` x ``height`` pixels (portrait), ``density`` pixels per dp."""

    name: str
    width: int
    height: int
    density: float
    kind: str = "phone"

    def px(self, dp: float) -> int:
        return int(round(dp * self.density))


#: Real devices (portrait). Pixel densities from the vendors' display specs (dpi / 160).
SCREENS: dict[str, Screen] = {
    s.name: s
    for s in (
        Screen("pixel_7", 1080, 2400, 2.625),          # 416 dpi -> xxhdpi bucket 420
        Screen("pixel_4a", 1080, 2340, 2.75),          # 443 dpi
        Screen("galaxy_a14", 1080, 2408, 2.625),       # 400 dpi class
        Screen("moto_g_play", 720, 1600, 1.75),        # 269 dpi (HD+ phones)
        Screen("pixel_7_pro", 1440, 3120, 3.5),        # 512 dpi
        Screen("galaxy_tab_s8", 1600, 2560, 2.0, "tablet"),  # 274 dpi, portrait
        # The curriculum's small square screen (no real device): at the demo's ~50k-pixel budget it becomes
        # 224 x 224 = 8 x 8 tokens of 28 px, so every board tile spans at least one token.
        Screen("square_448", 448, 448, 1.0, "square"),
    )
}
PHONE_SCREENS: tuple[str, ...] = tuple(n for n, s in SCREENS.items() if s.kind == "phone")

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Theme:
    """Colours of one theme (RGB). ``accent`` varies with the layout seed."""

    name: str
    background: RGB
    surface: RGB
    bar: RGB
    text: RGB
    text_secondary: RGB
    accent: RGB
    on_accent: RGB
    outline: RGB
    disabled: RGB
    track_off: RGB
    bubble_them: RGB


ACCENTS: dict[str, tuple[RGB, RGB]] = {  # name -> (light-theme accent, dark-theme accent)
    "blue": ((26, 115, 232), (138, 180, 248)),
    "green": ((24, 128, 56), (129, 201, 149)),
    "purple": ((103, 80, 164), (208, 188, 255)),
    "orange": ((200, 90, 20), (255, 183, 120)),
}
THEMES: tuple[str, ...] = ("light", "dark")
FONT_SCALES: tuple[float, ...] = (0.85, 1.0, 1.15, 1.3)  # Android's Small / Default / Large / Largest


def make_theme(name: str, accent: str) -> Theme:
    light_accent, dark_accent = ACCENTS[accent]
    if name == "light":
        return Theme("light", (247, 247, 250), (255, 255, 255), (232, 232, 236), (28, 27, 31), (95, 99, 104),
                     light_accent, (255, 255, 255), (196, 199, 204), (189, 193, 198), (180, 182, 188),
                     (232, 234, 240))
    if name == "dark":
        return Theme("dark", (18, 18, 20), (33, 34, 38), (0, 0, 0), (232, 234, 237), (154, 160, 166),
                     dark_accent, (22, 22, 26), (72, 74, 80), (95, 99, 104), (90, 92, 98), (48, 50, 56))
    raise ValueError(f"unknown theme {name!r}; known: {THEMES}")


__all__ = ["ACCENTS", "FONT_SCALES", "PHONE_SCREENS", "SCREENS", "THEMES", "Screen", "Theme", "make_theme"]
