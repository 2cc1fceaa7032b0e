"""What the model sees: the prompt of a ``core.prompts`` template and the screenshot at the TRAINING resize.

Resize choice (explicit, recorded in every prediction row as ``resize``): the screenshot is resized here with
:func:`core.geometry.smart_resize` between ``min_pixels`` and ``max_pixels`` (default GUI-R1's training bounds,
3,136 .. 1,258,291 pixels, factor 28 for Qwen2.5-VL / 32 for Qwen3-VL) and handed to the backend already at
that size, so the model answers in the same ``resized`` frame it was trained in. (GUI-R1's own test scripts let
the processor resize with its default 12.8 MP cap instead: pass ``max_pixels=QWEN25VL_MAX_PIXELS`` for that.)
Backends are told the same bounds, and ``smart_resize`` of an already-resized image is the identity.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from core.geometry import (
    GUIR1_TRAIN_MAX_PIXELS,
    GUIR1_TRAIN_MIN_PIXELS,
    QWEN25VL_FACTOR,
    ImageGeometry,
)
from core.prompts import IMAGE_PLACEHOLDER
from core.schema import Step


@dataclass(frozen=True)
class ResizePolicy:
    """Pixel bounds and patch factor of the model's image resize (``smart_resize``); ``recipe``: the training
    recipe file the bounds were read from, if any (:func:`from_recipe`)."""

    min_pixels: int = GUIR1_TRAIN_MIN_PIXELS
    max_pixels: int = GUIR1_TRAIN_MAX_PIXELS
    factor: int = QWEN25VL_FACTOR
    recipe: str | None = None
    #: A first resize to this pixel budget before ``smart_resize`` (a preset's, InfiGUI-G1); None: one step.
    prescale_max_pixels: int | None = None
    #: A first resize as qwen-vl-utils' ``fetch_image`` does before ``smart_resize`` (a preset's, GUI-R1's
    #: ScreenSpot script: :func:`core.geometry.fetch_image_resize`).
    fetch_image_first: bool = False

    def __post_init__(self) -> None:
        if self.min_pixels <= 0 or self.max_pixels < self.min_pixels:
            raise ValueError(f"need 0 < min_pixels <= max_pixels, got {self.min_pixels}, {self.max_pixels}")
        if self.factor <= 0:
            raise ValueError(f"factor must be positive, got {self.factor}")

    def geometry(self, width: int, height: int) -> ImageGeometry:
        """Sizes of a ``width`` x ``height`` (ORIGINAL pixels) screenshot in every frame."""
        return ImageGeometry.for_model(width, height, factor=self.factor, min_pixels=self.min_pixels,
                                       max_pixels=self.max_pixels, prescale_max_pixels=self.prescale_max_pixels,
                                       fetch_image_first=self.fetch_image_first)

    def record(self, geometry: ImageGeometry | None) -> dict[str, Any]:
        """The ``resize`` field of a prediction row (``resized_size`` is [W, H] pixels, None when unknown;
        ``recipe`` only when the bounds came from one)."""
        out: dict[str, Any] = {
            "min_pixels": self.min_pixels,
            "max_pixels": self.max_pixels,
            "factor": self.factor,
            "resized_size": None if geometry is None else [geometry.resized_width, geometry.resized_height],
        }
        if self.recipe is not None:
            out["recipe"] = self.recipe
        if self.prescale_max_pixels is not None:
            out["prescale_max_pixels"] = self.prescale_max_pixels
        if self.fetch_image_first:
            out["fetch_image_first"] = True
        return out

    @classmethod
    def from_options(cls, *, recipe: str | Path | None = None, min_pixels: int | None = None,
                     max_pixels: int | None = None, factor: int = QWEN25VL_FACTOR,
                     preset_bounds: tuple[int, int] | None = None,
                     prescale_max_pixels: int | None = None, fetch_image_first: bool = False) -> ResizePolicy:
        """The policy of ``gui-agent infer`` / ``rollout`` flags: bounds from the training ``recipe`` file
        (:func:`core.recipes.recipe_pixel_bounds`, the same bounds ``gui-agent data convert --recipe`` exports
        at), else a model preset's ``preset_bounds`` (min, max) and its first step (``prescale_max_pixels``,
        ``fetch_image_first``), else GUI-R1's training bounds; explicit ``min_pixels`` / ``max_pixels`` win (an
        explicit ``max_pixels`` or a recipe drops the preset's first step). ``ValueError`` (``core.recipes.RecipeError``) for an unreadable
        recipe or bad bounds."""
        low, high = preset_bounds or (GUIR1_TRAIN_MIN_PIXELS, GUIR1_TRAIN_MAX_PIXELS)
        if recipe is not None:
            from core.recipes import recipe_pixel_bounds

            low, high = recipe_pixel_bounds(recipe)
        return cls(min_pixels=low if min_pixels is None else min_pixels,
                   max_pixels=high if max_pixels is None else max_pixels, factor=factor,
                   recipe=None if recipe is None else str(recipe),
                   prescale_max_pixels=None if recipe is not None or max_pixels is not None else prescale_max_pixels,
                   fetch_image_first=fetch_image_first and recipe is None and max_pixels is None)


DEFAULT_POLICY = ResizePolicy()


def model_image_factor(model: str | Path, default: int = QWEN25VL_FACTOR) -> int:
    """``patch_size * merge_size`` from a local model folder's ``preprocessor_config.json`` (28 for Qwen2.5-VL,
    32 for Qwen3-VL); ``default`` when the folder or the fields are absent (remote model, HTTP URL)."""
    path = Path(model) / "preprocessor_config.json"
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default
    patch, merge = cfg.get("patch_size"), cfg.get("merge_size")
    if isinstance(patch, int) and isinstance(merge, int) and patch > 0 and merge > 0:
        return patch * merge
    return default


def inference_template_name(step: Step) -> str:
    """The training template of ``step`` chosen WITHOUT looking at its gold action: ``grounding`` rows get
    ``guir1-grounding``, every other row ``guir1-high`` (full action list + history).

    GUI-R1's training picks the click-only ``guir1-low`` prompt for low-level click rows
    (:func:`core.prompts.default_template_for` reads the gold action for that); at test time that would tell
    the model the answer is a click, so inference never uses it by default (pass ``--prompt guir1-low``).
    """
    from core import prompts

    return prompts.GUIR1_GROUNDING.name if step.task_type == "grounding" else prompts.GUIR1_HIGH.name


def resolve_template(name: str | None, step: Step):
    """The ``core.prompts`` template for ``step``: ``name`` when given, else :func:`inference_template_name`.
    ``ValueError`` lists the known names for an unknown one."""
    from core import prompts

    return prompts.get_template(name or inference_template_name(step))


@dataclass
class InferenceRequest:
    """One step ready for a backend.

    ``messages``: chat messages whose text holds one ``<image>`` placeholder per screenshot; ``images``: those
    screenshots in placeholder order, RGB, already at the model's resized size (``geometry`` is the frame of the
    last one, the current screen, which answers refer to); ``error``: why the step cannot be sent
    (missing/corrupt image, bad template), in which case ``messages``/``images`` are None and the runner records
    the error in the row; ``tools``: function schemas every backend hands to the chat template (``tools=``);
    ``crop``: zoom's second stage (:mod:`core.inference.zoom`), the part of the screenshot shown, ORIGINAL pixels
    ``(x1, y1, x2, y2)`` (x2, y2 exclusive): ``geometry`` is then the crop's (its ``original`` frame is the crop's
    pixels, which :func:`core.geometry.from_crop` maps back); None: the whole screenshot.
    """

    step: Step
    template: str | None
    policy: ResizePolicy
    geometry: ImageGeometry | None = None
    messages: list[dict[str, Any]] | None = None
    images: list[Image.Image] | None = None
    error: str | None = None
    template_obj: Any = field(default=None, repr=False)
    #: OpenAI function schemas the chat template renders (the agent recipe's ``mobile_use``); None: no tools
    tools: list[dict[str, Any]] | None = None
    crop: tuple[int, int, int, int] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def image(self) -> Image.Image | None:
        """The current screenshot (the last of ``images``), None when the request failed."""
        return self.images[-1] if self.images else None


def load_screenshot(step: Step) -> Image.Image:
    """The step's screenshot decoded as RGB; raises ``ValueError`` naming the step when it is missing, corrupt
    or not ``step.image_size`` (the gold coordinates would not match the pixels)."""
    try:
        data = step.image_bytes()
    except (OSError, ValueError) as e:
        raise ValueError(f"step {step.id}: field 'image': cannot read the image: {e}") from None
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            image = im.convert("RGB")
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:
        raise ValueError(f"step {step.id}: field 'image': corrupt image: {type(e).__name__}: {e}") from None
    if image.size != tuple(step.image_size):
        raise ValueError(f"step {step.id}: field 'image': image is {image.width}x{image.height} but "
                         f"image_size says {step.image_size[0]}x{step.image_size[1]}")
    return image


def build_request(step: Step, *, template: str | None, policy: ResizePolicy,
                  crop: tuple[int, int, int, int] | None = None) -> InferenceRequest:
    """Prompt + resized screenshot for ``step``; never raises for a bad row (the problem goes in ``.error``).
    ``crop`` (ORIGINAL pixels x1, y1, x2, y2; zoom's second stage): only that part of the screenshot is shown,
    resized by the same ``policy`` bounds, and the prompt is rendered for its size."""
    req = InferenceRequest(step=step, template=template, policy=policy, crop=crop)
    try:
        tmpl = resolve_template(template, step)
    except ValueError as e:
        req.error = f"template: {e}"
        return req
    req.template, req.template_obj = tmpl.name, tmpl
    try:
        screenshot = load_screenshot(step)
        if crop is not None:
            screenshot = screenshot.crop(crop)
        geometry = policy.geometry(*screenshot.size)
    except ValueError as e:
        req.error = str(e)
        return req
    req.geometry = geometry
    try:
        messages = [dict(m) for m in tmpl.render(step, geometry)]
    except ValueError as e:  # core.prompts.TemplateError: a step the template cannot express
        req.error = f"template {tmpl.name!r}: {e}"
        return req
    n_images = count_placeholders(messages)
    if n_images != 1:
        req.error = f"template {tmpl.name!r} rendered {n_images} {IMAGE_PLACEHOLDER} placeholders, expected 1"
        return req
    req.messages = messages
    size = (geometry.resized_width, geometry.resized_height)
    req.images = [screenshot if screenshot.size == size else screenshot.resize(size, Image.Resampling.BICUBIC)]
    return req


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or () if isinstance(p, dict))


def _split_parts(text: str, image_parts: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
    """``text`` as typed content parts, the next of ``image_parts`` where each placeholder was (empty texts
    dropped)."""
    parts: list[dict[str, Any]] = []
    for i, chunk in enumerate(text.split(IMAGE_PLACEHOLDER)):
        if i:
            parts.append(next(image_parts))
        if chunk:
            parts.append({"type": "text", "text": chunk})
    return parts


def _typed_messages(messages: list[dict[str, Any]], image_parts: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with typed content parts where their text holds placeholders (the next of ``image_parts`` at
    each); messages without an image keep plain string content."""
    out = []
    for m in messages:
        text = _text_of(m)
        if IMAGE_PLACEHOLDER in text:
            out.append({"role": m["role"], "content": _split_parts(text, image_parts)})
        else:
            out.append({"role": m["role"], "content": text})
    return out


def hf_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages for a Hugging Face processor chat template: the placeholder becomes ``{"type": "image"}`` (the
    image itself is passed to the processor separately); messages without an image keep plain string content."""
    return _typed_messages(messages, itertools.repeat({"type": "image"}))


def image_data_url(image: Image.Image) -> str:
    """PNG ``data:`` URL of ``image`` (lossless, so the server sees exactly the resized pixels)."""
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def count_placeholders(messages: list[dict[str, Any]]) -> int:
    """How many ``<image>`` placeholders the text of ``messages`` holds."""
    return sum(_text_of(m).count(IMAGE_PLACEHOLDER) for m in messages)


def openai_messages(messages: list[dict[str, Any]], images: list[Image.Image]) -> list[dict[str, Any]]:
    """Messages for an OpenAI-compatible ``/chat/completions`` call: the i-th placeholder becomes the i-th image
    as a base64 ``image_url`` part. ``ValueError`` when placeholders and images differ in number."""
    if count_placeholders(messages) != len(images):
        raise ValueError(f"{count_placeholders(messages)} {IMAGE_PLACEHOLDER} placeholders but {len(images)} images")
    return _typed_messages(messages, iter([{"type": "image_url", "image_url": {"url": image_data_url(im)}}
                                           for im in images]))


__all__ = [
    "DEFAULT_POLICY", "IMAGE_PLACEHOLDER", "InferenceRequest", "ResizePolicy", "build_request", "count_placeholders",
    "hf_messages", "image_data_url",
    "inference_template_name", "load_screenshot", "model_image_factor", "openai_messages", "resolve_template",
]
