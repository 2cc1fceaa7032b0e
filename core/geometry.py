"""Coordinate frames and Qwen-VL image resizing.

Frames (see :class:`Frame`):

- ``original``   float pixels of the ORIGINAL image, origin top-left (the canonical frame of this project)
- ``resized``    pixels of the image after :func:`smart_resize` (what Qwen2.5-VL sees and answers in)
- ``normalized`` fractions of width/height in [0, 1] (GUI-R1 train.parquet boxes)
- ``grid1000``   the 0-1000 relative grid of Qwen3-VL (x / W * 1000)
- ``grid999``    the 999 x 999 screen of the Qwen3-VL cookbook's mobile agent (x / W * 999; ``qwen3vl-mobile-agent``)

All conversions go through the original frame, so any chain of conversions is consistent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from collections.abc import Sequence

from core.numbers import is_finite_number

#: Qwen2.5-VL: patch 14 x spatial merge 2.  Qwen3-VL: patch 16 x merge 2.
QWEN25VL_FACTOR = 28
QWEN3VL_FACTOR = 32
#: Defaults of the Qwen2.5-VL image processor (preprocessor_config.json): 3136 .. 12,845,056 pixels.
QWEN25VL_MIN_PIXELS = 56 * 56
QWEN25VL_MAX_PIXELS = 28 * 28 * 16384
#: What GUI-R1 trains with (about 1.26 MP); its inference uses the processor default above.
GUIR1_TRAIN_MAX_PIXELS = 1258291
GUIR1_TRAIN_MIN_PIXELS = 3136
MAX_ASPECT_RATIO = 200
#: qwen-vl-utils' ``fetch_image`` defaults (qwen_vl_utils 0.0.14 ``vision_process.py``: factor 14 x 2, 4 .. 16384
#: tokens of 28 x 28 pixels), the first resize of every image its ``process_vision_info`` returns.
QWEN_VL_UTILS_FACTOR = 28
QWEN_VL_UTILS_MIN_PIXELS = 4 * 28 * 28
QWEN_VL_UTILS_MAX_PIXELS = 16384 * 28 * 28


def smart_resize(
    height: int,
    width: int,
    factor: int = QWEN25VL_FACTOR,
    min_pixels: int = QWEN25VL_MIN_PIXELS,
    max_pixels: int = QWEN25VL_MAX_PIXELS,
    *,
    qwen_vl_utils: bool = False,
) -> tuple[int, int]:
    """(height, width) of the resized image, exactly as the Qwen2.5-VL / Qwen3-VL image processors compute it.

    Matches ``transformers``' ``smart_resize`` for every input. With ``qwen_vl_utils``, matches
    ``qwen_vl_utils.smart_resize`` (0.0.14) instead, which differs only for slivers thinner than ``factor / 2``: a
    side rounded to 0 becomes ``factor``, and one floored to 0 under ``max_pixels`` stays 0 (transformers: ``factor``
    in both). Both sides become multiples of ``factor``; the area is brought into [min_pixels, max_pixels] keeping
    the aspect ratio. Uses Python's ``round`` (banker's rounding), as the reference does.
    Raises ``ValueError`` for non-positive sizes or an aspect ratio over 200.
    """
    if height <= 0 or width <= 0:
        raise ValueError(f"image size must be positive, got height={height}, width={width}")
    if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
        raise ValueError(
            f"absolute aspect ratio must be smaller than {MAX_ASPECT_RATIO}, got {max(height, width) / min(height, width)}"
        )
    rounded_floor, floored_floor = (factor, 0) if qwen_vl_utils else (0, factor)
    h_bar = max(rounded_floor, round(height / factor) * factor)
    w_bar = max(rounded_floor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(floored_floor, math.floor(height / beta / factor) * factor)
        w_bar = max(floored_floor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def budget_resize(width: int, height: int, max_pixels: int) -> tuple[int, int]:
    """(width, height) scaled to at most ``max_pixels`` keeping the aspect ratio, each side rounded (Python's
    ``round``); unchanged when already within. InfiGUI-G1's first resize step (InfiXAI/InfiGUI-G1 @ 22208e4
    ``eval/data.py:298-312`` ``resize_image``), before its ``smart_resize`` (``eval/eval.py:41-44``)."""
    if width * height <= max_pixels:
        return width, height
    scale = math.sqrt(max_pixels / (width * height))
    return round(width * scale), round(height * scale)


def fetch_image_resize(width: int, height: int) -> tuple[int, int]:
    """(width, height) of a ``width`` x ``height`` image after qwen-vl-utils' ``fetch_image`` with its defaults
    (qwen_vl_utils 0.0.14 ``vision_process.py`` ``smart_resize``: factor 28, 3,136 .. 12,845,056 pixels;
    :func:`smart_resize` with ``qwen_vl_utils``); a side of 0, which PIL then refuses, is a ``ValueError`` here.
    GUI-R1's ScreenSpot script hands the processor this image and calls its size the "origin" (icey-zhang/GUI-R1 @
    0ec02be ``guir1/inference/inference_vllm_screenspot.py:106``, ``:120-121``)."""
    h_bar, w_bar = smart_resize(height, width, QWEN_VL_UTILS_FACTOR, QWEN_VL_UTILS_MIN_PIXELS,
                                QWEN_VL_UTILS_MAX_PIXELS, qwen_vl_utils=True)
    if h_bar <= 0 or w_bar <= 0:
        raise ValueError(f"qwen-vl-utils resizes a {width}x{height} image to {w_bar}x{h_bar}, which PIL refuses")
    return w_bar, h_bar


class Frame(str, Enum):
    ORIGINAL = "original"
    RESIZED = "resized"
    NORMALIZED = "normalized"
    GRID1000 = "grid1000"
    GRID999 = "grid999"



#: Relative grids: frame -> the coordinate of the right / bottom edge (a point k is k / n x W ORIGINAL px).
GRID_SIZES = {Frame.GRID1000: 1000.0, Frame.GRID999: 999.0}

@dataclass(frozen=True)
class ImageGeometry:
    """Size of one image in every frame. ``width``/``height`` are ORIGINAL pixels."""

    width: int
    height: int
    resized_width: int
    resized_height: int

    @classmethod
    def for_model(
        cls,
        width: int,
        height: int,
        *,
        factor: int = QWEN25VL_FACTOR,
        min_pixels: int = QWEN25VL_MIN_PIXELS,
        max_pixels: int = QWEN25VL_MAX_PIXELS,
        prescale_max_pixels: int | None = None,
        fetch_image_first: bool = False,
    ) -> ImageGeometry:
        """The sizes under ``smart_resize``; with ``prescale_max_pixels``, the image is first scaled to that pixel
        budget (:func:`budget_resize`) and that size is smart-resized (InfiGUI-G1's two steps); with
        ``fetch_image_first``, the image is first resized as qwen-vl-utils' ``fetch_image`` does
        (:func:`fetch_image_resize`) and that size is smart-resized (GUI-R1's ScreenSpot script's two steps)."""
        sw, sh = fetch_image_resize(width, height) if fetch_image_first else (width, height)
        if prescale_max_pixels is not None:
            sw, sh = budget_resize(sw, sh, prescale_max_pixels)
        rh, rw = smart_resize(sh, sw, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels)
        return cls(width=width, height=height, resized_width=rw, resized_height=rh)

    @classmethod
    def unresized(cls, width: int, height: int) -> ImageGeometry:
        return cls(width=width, height=height, resized_width=width, resized_height=height)

    def scale(self, frame: Frame | str) -> tuple[float, float]:
        """(sx, sy) such that ``coord_in_frame = coord_original * (sx, sy)``."""
        frame = Frame(frame)
        if frame is Frame.ORIGINAL:
            return 1.0, 1.0
        if frame is Frame.RESIZED:
            return self.resized_width / self.width, self.resized_height / self.height
        if frame is Frame.NORMALIZED:
            return 1.0 / self.width, 1.0 / self.height
        n = GRID_SIZES[frame]
        return n / self.width, n / self.height

    def point(self, xy: Sequence[float], src: Frame | str, dst: Frame | str) -> tuple[float, float]:
        """Convert a point ``(x, y)`` from frame ``src`` to frame ``dst``. A 0-1000 point k becomes ORIGINAL pixels
        as ``k / 1000 * W``, the models' own code's arithmetic (``k / (1000 / W)`` can differ in the last bit, which
        decides a click exactly on a box edge); a ``grid999`` point p likewise as ``p / 999 * W``."""
        n = GRID_SIZES.get(Frame(src))
        if n is not None:
            xy = float(xy[0]) / n * self.width, float(xy[1]) / n * self.height
            src = Frame.ORIGINAL
        sx0, sy0 = self.scale(src)
        sx1, sy1 = self.scale(dst)
        return float(xy[0]) / sx0 * sx1, float(xy[1]) / sy0 * sy1

    def box(self, box: Sequence[float], src: Frame | str, dst: Frame | str) -> tuple[float, float, float, float]:
        """Convert a box ``(x1, y1, x2, y2)`` from frame ``src`` to frame ``dst``."""
        x1, y1 = self.point(box[:2], src, dst)
        x2, y2 = self.point(box[2:4], src, dst)
        return x1, y1, x2, y2

    def size(self, frame: Frame | str) -> tuple[float, float]:
        """(width, height) of the image in ``frame`` units."""
        return self.point((self.width, self.height), Frame.ORIGINAL, frame)


def point_in_box(point: Sequence[float], box: Sequence[float], *, strict: bool = False) -> bool:
    """Whether ``point`` (x, y) lies in ``box`` (x1, y1, x2, y2), edges included unless ``strict``."""
    x, y = float(point[0]), float(point[1])
    x1, y1, x2, y2 = (float(v) for v in box[:4])
    if strict:
        return x1 < x < x2 and y1 < y < y2
    return x1 <= x <= x2 and y1 <= y <= y2


def normalized_distance(p: Sequence[float], q: Sequence[float], width: float, height: float) -> float:
    """Euclidean distance between two ORIGINAL-pixel points after dividing x by width and y by height.

    ``normalized_distance(p, q, W, H) < 0.14`` is the AndroidControl / GUI-R1 "within 14% of the screen" check.
    """
    return math.hypot((float(p[0]) - float(q[0])) / width, (float(p[1]) - float(q[1])) / height)


def box_center(box: Sequence[float]) -> tuple[float, float]:
    return (float(box[0]) + float(box[2])) / 2.0, (float(box[1]) + float(box[3])) / 2.0


def xywh_to_xyxy(box: Sequence[float]) -> tuple[float, float, float, float]:
    x, y, w, h = (float(v) for v in box[:4])
    return x, y, x + w, y + h


def clip_box(box: Sequence[float], width: float, height: float) -> tuple[float, float, float, float]:
    """Clip a box (x1, y1, x2, y2) to the image."""
    x1, y1, x2, y2 = (float(v) for v in box[:4])
    return (min(max(x1, 0.0), width), min(max(y1, 0.0), height),
            min(max(x2, 0.0), width), min(max(y2, 0.0), height))


def zoom_size(width: int, height: int, share: float) -> tuple[int, int]:
    """(width, height) in pixels of a zoom crop of a ``width`` x ``height`` image: ``round(share * side)`` each,
    at least 1 and at most the side. ``ValueError`` unless 0 < ``share`` <= 1 and both sides are positive."""
    if not 0 < share <= 1:
        raise ValueError(f"zoom share must be in (0, 1], got {share!r}")
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    return min(width, max(1, round(share * width))), min(height, max(1, round(share * height)))


def zoom_box(point: Sequence[float], width: int, height: int, share: float) -> tuple[int, int, int, int]:
    """The crop of a zoom step (crop-then-ground), ORIGINAL pixels ``(x1, y1, x2, y2)``: integers, ``x2``/``y2``
    exclusive as in PIL's ``Image.crop``, so the crop is ``x2 - x1`` x ``y2 - y1`` = :func:`zoom_size` pixels.

    It is centred on ``point`` (x, y, ORIGINAL pixels; a point outside the image counts as the nearest edge) and
    shifted, never shrunk, to lie inside the image: ``x1 = min(max(floor(x - w_c / 2 + 1/2), 0), W - w_c)``,
    the same for y. ``ValueError`` for a non-finite point or a share outside (0, 1]."""
    cw, ch = zoom_size(width, height, share)
    x, y = float(point[0]), float(point[1])
    if not (math.isfinite(x) and math.isfinite(y)):
        raise ValueError(f"zoom centre must be finite, got ({x}, {y})")
    x, y = min(max(x, 0.0), float(width)), min(max(y, 0.0), float(height))
    x1 = min(max(math.floor(x - cw / 2 + 0.5), 0), width - cw)
    y1 = min(max(math.floor(y - ch / 2 + 0.5), 0), height - ch)
    return x1, y1, x1 + cw, y1 + ch


def from_crop(point: Sequence[float], box: Sequence[int]) -> tuple[float, float]:
    """A point in pixels of the crop ``box`` (x1, y1, x2, y2; ORIGINAL pixels of the full image) -> ORIGINAL pixels
    of the full image: ``(x1 + x, y1 + y)``. The inverse of :func:`to_crop`."""
    return float(box[0]) + float(point[0]), float(box[1]) + float(point[1])


def to_crop(point: Sequence[float], box: Sequence[int]) -> tuple[float, float]:
    """An ORIGINAL-pixel point of the full image -> pixels of the crop ``box`` (x1, y1, x2, y2): ``(x - x1, y - y1)``
    (outside the crop when the point is). The inverse of :func:`from_crop`."""
    return float(point[0]) - float(box[0]), float(point[1]) - float(box[1])


__all__ = [
    "Frame", "GRID_SIZES", "GUIR1_TRAIN_MAX_PIXELS", "QWEN_VL_UTILS_FACTOR", "QWEN_VL_UTILS_MAX_PIXELS", "QWEN_VL_UTILS_MIN_PIXELS",
    "budget_resize", "fetch_image_resize", "GUIR1_TRAIN_MIN_PIXELS", "ImageGeometry", "QWEN25VL_FACTOR",
    "QWEN25VL_MAX_PIXELS", "QWEN25VL_MIN_PIXELS", "QWEN3VL_FACTOR", "box_center", "clip_box", "from_crop",
    "normalized_distance", "point_in_box", "smart_resize", "to_crop", "xywh_to_xyxy", "zoom_box", "zoom_size",
]


#: What :func:`shown_coords` prints for a missing point or GUI-R1's ``[-100, -100]`` "no target" sentinel.
NO_POINT = "no point"


def shown_coords(value: object) -> str:
    """A point or box as shown to a person (galleries, tables): each number with at most one decimal
    (``[540, 1203.5]``); None and GUI-R1's ``[-100, -100]`` sentinel read ``no point``; anything that is not a
    list of finite numbers is shown as written (``str``)."""
    from core.actions import GUIR1_NO_TARGET

    if value is None:
        return NO_POINT
    if isinstance(value, (list, tuple)) and value and all(
            is_finite_number(v) for v in value):
        if tuple(float(v) for v in value) == GUIR1_NO_TARGET:
            return NO_POINT
        return "[" + ", ".join(f"{round(float(v), 1) + 0.0:.1f}".removesuffix(".0") for v in value) + "]"
    return str(value)
