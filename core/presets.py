"""Model presets: evaluate a public GUI model as its authors ran it (lm-evaluation-harness style registry).

A :class:`Preset` names, for one model family, the prompt templates (:mod:`core.prompts`,
:mod:`core.model_prompts`), the answer parser (:mod:`core.parsers` format), the coordinate frame of the answers,
the generation settings and the pixel bounds of the image resize, each with its source in ``sources``.
``gui-agent infer --preset NAME`` uses them as defaults (explicit flags win) and ``gui-agent eval --preset NAME``
re-parses every row's raw ``pred`` with the preset's parser and frame.

Pixel bounds are those the authors' scripts give the image processor; ``factor`` is the patch x merge size of the
model's vision tower (28 for Qwen2-VL / Qwen2.5-VL based models, 32 for Qwen3-VL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.console import quoted
from core.geometry import (
    QWEN3VL_FACTOR,
    QWEN25VL_FACTOR,
    QWEN25VL_MAX_PIXELS,
    QWEN25VL_MIN_PIXELS,
    Frame,
    ImageGeometry,
)
from core.model_prompts import UITARS_MAX_PIXELS, UITARS_MIN_PIXELS
from core.numbers import NumberError, checked_number

#: Longest image side (pixels) ``eval --preset`` accepts in a row's ``image_size`` / ``resize.resized_size``: far
#: beyond any screenshot, and small enough that every resize computation stays in the float range.
MAX_IMAGE_SIDE = 1_000_000

GUIR1_SCRIPTS = "icey-zhang/GUI-R1 @ 0ec02be guir1/inference/inference_vllm_*.py"
#: GUI-R1's ScreenSpot script sets ``self.processor.max_pixels=2109744`` (inference_vllm_screenspot.py).
GUIR1_SCREENSPOT_MAX_PIXELS = 2_109_744
UITARS_REPO = "bytedance/UI-TARS"


class AmbiguousBenchmark(ValueError):
    """The rows of a file do not decide which of a preset's prompts applies; ``--benchmark`` does."""


@dataclass(frozen=True)
class Generation:
    """Decoding settings: ``temperature`` 0 = greedy; ``top_p`` only matters when sampling."""

    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    repetition_penalty: float = 1.0


@dataclass(frozen=True)
class Preset:
    """One model family's evaluation settings.

    ``templates`` maps a task kind (``grounding`` / ``navigation``) or a benchmark name of
    :data:`core.eval.registry.BENCHMARKS` to a template name; ``benchmark_max_pixels`` overrides ``max_pixels``
    for some benchmarks; ``sources`` gives, for every setting, where it was read.
    """

    name: str
    title: str
    parser: str
    frame: Frame
    templates: dict[str, str]
    generation: Generation
    min_pixels: int = QWEN25VL_MIN_PIXELS
    max_pixels: int = QWEN25VL_MAX_PIXELS
    factor: int = QWEN25VL_FACTOR
    benchmark_max_pixels: dict[str, int] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def template_for(self, benchmark: str | None) -> str:
        """The template for a benchmark: its own entry, else by the benchmark's kind (grounding or navigation);
        an unknown benchmark gets the navigation template when there is one. ``ValueError`` when the preset has
        no template for that kind of task."""
        from core.eval.registry import BENCHMARKS

        if benchmark in self.templates:
            return self.templates[benchmark]
        kind = "grounding" if benchmark in BENCHMARKS and BENCHMARKS[benchmark].kind == "grounding" else "navigation"
        if benchmark not in BENCHMARKS and "navigation" not in self.templates:
            kind = "grounding"
        if kind not in self.templates:
            raise ValueError(f"preset {self.name!r} has no {kind} prompt (it is a grounding model); "
                             f"benchmark {benchmark!r} needs one")
        return self.templates[kind]

    def template_for_file(self, benchmark: str | None, kind: str | None) -> str:
        """The template for a file whose rows are of ``kind`` (``grounding`` / ``navigation``, None: both) and
        name ``benchmark`` (None: they do not say; :func:`core.inference.bench.input_benchmark`). Never a guess:
        ``AmbiguousBenchmark`` when the rows do not decide between this preset's prompts (mixed rows, or navigation
        rows of no named benchmark while the preset has one prompt per navigation benchmark); ``ValueError`` when
        the preset has no prompt for the kind (a grounding model on navigation rows)."""
        if benchmark is not None:
            return self.template_for(benchmark)
        if kind is None:
            raise AmbiguousBenchmark("its rows are grounding and navigation steps, and the preset's prompt differs "
                                     "between them; split the file, or pass --benchmark NAME")
        if kind == "navigation":
            from core.eval.registry import BENCHMARKS

            per_benchmark = sorted({t for b, t in self.templates.items()
                                    if b in BENCHMARKS and BENCHMARKS[b].kind != "grounding"}
                                   | {self.templates.get("navigation")} - {None})
            if len(per_benchmark) > 1:
                navigation = [b for b in BENCHMARKS if BENCHMARKS[b].kind != "grounding"]
                raise AmbiguousBenchmark(f"navigation rows that name no benchmark, and preset {self.name!r} has a "
                                         f"prompt per benchmark ({', '.join(per_benchmark)}); pass --benchmark "
                                         f"NAME ({', '.join(navigation)})")
        if kind not in self.templates:
            raise ValueError(f"preset {self.name!r} has no {kind} prompt (it is a grounding model); these are "
                             f"{kind} rows")
        return self.templates[kind]

    def pixel_bounds(self, benchmark: str | None) -> tuple[int, int]:
        """(min_pixels, max_pixels) of the resize for ``benchmark``."""
        return self.min_pixels, self.benchmark_max_pixels.get(benchmark or "", self.max_pixels)

    def geometry(self, width: int, height: int, benchmark: str | None = None) -> ImageGeometry:
        """The image sizes of a ``width`` x ``height`` screenshot under this preset's resize."""
        low, high = self.pixel_bounds(benchmark)
        return ImageGeometry.for_model(width, height, factor=self.factor, min_pixels=low, max_pixels=high)


_GUIR1_TEMPLATES = {
    "grounding": "guir1-inference-screenspot", "navigation": "guir1-inference-androidcontrol",
    "androidcontrol_low": "guir1-inference-androidcontrol", "androidcontrol_high": "guir1-inference-androidcontrol",
    "guiodyssey": "guir1-inference-guiodyssey", "guiact_web": "guir1-inference-guiact-web",
    "omniact_web": "guir1-inference-omniact-web", "omniact_desktop": "guir1-inference-omniact-desktop",
}
_UITARS_PIXELS = f"{UITARS_REPO} @ 582f3a7 codes/ui_tars/action_parser.py MIN_PIXELS 100*28*28, MAX_PIXELS 16384*28*28"
_PROCESSOR_DEFAULT = "Qwen2-VL / Qwen2.5-VL image processor defaults (min 3,136, max 12,845,056 pixels)"
#: UI-TARS' own resize (1.0 and 1.5): codes/ui_tars/action_parser.py MIN_PIXELS, MAX_PIXELS.
_UITARS_BOUNDS = {"min_pixels": UITARS_MIN_PIXELS, "max_pixels": UITARS_MAX_PIXELS}


def _uitars_templates(family: str) -> dict[str, str]:
    """UI-TARS' prompts by task (``family`` uitars or uitars15): grounding, the mobile prompt for navigation, the
    computer prompt for the web and desktop benchmarks."""
    computer = f"{family}-computer"
    return {"grounding": f"{family}-grounding", "navigation": f"{family}-mobile", "omniact_web": computer,
            "omniact_desktop": computer, "guiact_web": computer}

_UNPUBLISHED = "not published for GUI grounding: greedy, 1024 new tokens (this project's default)"


def _preset(name: str, title: str, parser: str, frame: Frame, templates: dict[str, str], generation: Generation | int,
            *, prompt: str, decoding: str, answer: str, pixels: str = _PROCESSOR_DEFAULT, **settings: Any) -> Preset:
    """A :class:`Preset` with its ``sources``: where its ``prompt``, ``decoding`` (generation settings), ``pixels``
    and ``answer`` format were read. An int ``generation`` is greedy decoding of that many new tokens."""
    if isinstance(generation, int):
        generation = Generation(max_new_tokens=generation)
    return Preset(name, title, parser, frame, templates, generation, **settings,
                  sources={"prompt": prompt, "generation": decoding, "pixels": pixels, "answer": answer})


PRESETS: dict[str, Preset] = {p.name: p for p in (
    _preset("guir1", "GUI-R1 (3B / 7B, Qwen2.5-VL)", "guir1", Frame.RESIZED, _GUIR1_TEMPLATES,
            Generation(max_new_tokens=1024, temperature=0.0, top_p=0.001, repetition_penalty=1.05),
            benchmark_max_pixels=dict.fromkeys(("screenspot", "screenspot_v2", "screenspot_pro"),
                                               GUIR1_SCREENSPOT_MAX_PIXELS),
            prompt=f"{GUIR1_SCRIPTS} (one per benchmark; core.prompts guir1-inference-*)",
            decoding=f"{GUIR1_SCRIPTS}: SamplingParams(temperature=0.0, top_p=0.001, repetition_penalty=1.05, "
                     "max_tokens=1024)",
            pixels=f"{_PROCESSOR_DEFAULT}; ScreenSpot: inference_vllm_screenspot.py sets processor.max_pixels=2109744",
            answer="<answer>[{'action': .., 'point': [x, y], 'input_text': ..}]</answer>, pixels of the resized "
                   "image (the scripts multiply by original/resized)"),
    _preset("uitars", "UI-TARS 1.0 (2B / 7B / 72B, Qwen2-VL)", "uitars", Frame.GRID1000, _uitars_templates("uitars"),
            128, **_UITARS_BOUNDS, pixels=_UITARS_PIXELS,
            prompt=f"{UITARS_REPO} @ f0995c0 README.md 'Prompt Templates' (mobile, computer); grounding: "
                   f"{UITARS_REPO} @ 582f3a7 README_v1.md single-step grounding script (screenshot first)",
            decoding=f"{UITARS_REPO} @ f0995c0 README.md: max_tokens=128 (temperature not given: greedy here; the "
                     "README also sets frequency_penalty=1, which has no equivalent here)",
            answer="click(start_box='<|box_start|>(x,y)<|box_end|>'), 0-1000 relative (action_parser.py: Qwen2-VL "
                   "models divide by factor 1000)"),
    _preset("uitars15", "UI-TARS-1.5 (7B, Qwen2.5-VL)", "uitars", Frame.RESIZED, _uitars_templates("uitars15"), 400,
            **_UITARS_BOUNDS, pixels=_UITARS_PIXELS,
            prompt=f"{UITARS_REPO} @ 582f3a7 codes/ui_tars/prompt.py (COMPUTER_USE_DOUBAO, MOBILE_USE_DOUBAO, "
                   "GROUNDING_DOUBAO)",
            decoding=f"{UITARS_REPO} @ 582f3a7 README_deploy.md: temperature=0.0, max_tokens=400",
            answer="click(start_box='(x,y)') or click(point='<point>x y</point>'), pixels of the smart-resized image "
                   "(action_parser.py model_type='qwen25vl')"),
    _preset("os_atlas", "OS-Atlas (Base-7B / Pro-7B, Qwen2-VL)", "os_atlas", Frame.GRID1000,
            {"grounding": "os-atlas-grounding", "navigation": "os-atlas-android"}, 128,
            prompt="OS-Copilot/OS-Atlas @ 49ba04b README.md (grounding, OS-Atlas-Base-7B); eval/data/ac_test.jsonl "
                   "(AndroidControl navigation)",
            decoding="OS-Copilot/OS-Atlas @ 49ba04b README.md: model.generate(max_new_tokens=128), greedy",
            answer="<|box_start|>(x1,y1),(x2,y2)<|box_end|> (grounding, box centre) or CLICK <point>[[x,y]]</point>; "
                   "0-1000 relative (README: 'normalized to relative coordinates within a 0-1000 range')"),
    _preset("qwen25vl", "Qwen2.5-VL (3B / 7B / 72B)", "qwen_grounding", Frame.RESIZED,
            {"grounding": "qwen25vl-grounding"}, 1024, decoding=_UNPUBLISHED,
            prompt="QwenLM/Qwen2.5-VL cookbooks/spatial_understanding.ipynb prompt pattern ('Locate ..., output its "
                   "bbox coordinates using JSON format.')",
            answer='[{"bbox_2d": [x1, y1, x2, y2], "label": ..}] in absolute pixels of the resized input (Qwen2.5-VL '
                   "technical report, arXiv:2502.13923)"),
    _preset("qwen3vl", "Qwen3-VL", "qwen_grounding", Frame.GRID1000,
            {"grounding": "qwen3vl-grounding", "navigation": "qwen3vl-mobile-use"}, 1024, factor=QWEN3VL_FACTOR,
            decoding=_UNPUBLISHED, pixels="Qwen3-VL image processor defaults as used by this project (factor 32)",
            prompt="Qwen cookbook grounding pattern (grounding); this project's mobile_use prompt (navigation, "
                   "core.prompts qwen3vl-mobile-use)",
            answer='{"bbox_2d": [...]} / <tool_call> on the 0-1000 relative grid (Qwen3-VL model card)'),
    _preset("uground", "UGround-V1 (2B / 7B / 72B, Qwen2-VL)", "point", Frame.GRID1000,
            {"grounding": "uground-grounding"}, 16, prompt="OSU-NLP-Group/UGround @ 6173b77 grounding/uground_qwen2vl.py",
            decoding="same file: vLLM SamplingParams(temperature=0), vLLM's default max_tokens=16",
            answer="(x, y) on 0-1000 (the script maps x_ratio / 1000 * width)"),
    _preset("seeclick", "SeeClick (Qwen-VL)", "seeclick", Frame.NORMALIZED, {"grounding": "seeclick-grounding"}, 1024,
            min_pixels=448 * 448, max_pixels=448 * 448, prompt="njucckevin/SeeClick @ 661ff1b pretrain/screenspot_test.py",
            decoding="the script uses Qwen-VL-Chat's generation_config (not reproduced): greedy here",
            pixels="Qwen-VL encodes a fixed 448x448 image (SeeClick paper, arXiv:2401.10935); the resize here is only "
                   "recorded, Qwen-VL is not one of this project's backends",
            answer="(x,y) as fractions of the screenshot; <box>(x1,y1),(x2,y2)</box> on 0-1000 -> centre "
                   "(pretrain/screenspot_test.py)"),
    _preset("aguvis", "Aguvis (7B / 72B, Qwen2-VL)", "pyautogui", Frame.NORMALIZED,
            {"grounding": "aguvis-grounding", "navigation": "aguvis-mobile"}, 1024,
            prompt="xlang-ai/aguvis @ c711282 src/aguvis/constants.py (grounding_system_message; agent_system_message "
                   "with the mobile plugin functions for navigation; user_instruction) as src/aguvis/serve/cli.py "
                   "sends them",
            decoding="xlang-ai/aguvis @ c711282 src/aguvis/serve/cli.py: temperature=0, max_new_tokens=1024",
            answer="pyautogui.click(x=0.49, y=0.40), mobile.swipe(from_coord=[..], to_coord=[..]), mobile.back() ...: "
                   "fractions of the screenshot"),
)}


def get_preset(name: str) -> Preset:
    """The preset called ``name``; ``ValueError`` listing the known names otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {quoted(name)}; known: {', '.join(PRESETS)}") from None


def reparse_row(row: dict[str, Any], preset: Preset, benchmark: str | None) -> dict[str, Any]:
    """``row`` (a prediction row) with ``pred_action`` / ``pred_coord`` (ORIGINAL pixels) / ``pred_input_text`` /
    ``parse_ok`` / ``parse_error`` recomputed from its raw ``pred`` with the preset's parser and frame, whatever
    they said before. The resized size is the row's ``resize.resized_size`` when recorded, else the preset's
    resize of ``image_size``. A row without usable ``pred`` or ``image_size`` gets ``parse_error`` set."""
    from core.actions import NO_INPUT_TEXT
    from core.parsers import parse_action

    out = dict(row, pred_action=None, pred_coord=None, pred_input_text=NO_INPUT_TEXT, parse_ok=False,
               pred_frame=Frame.ORIGINAL.value)
    text, size = row.get("pred"), row.get("image_size")
    if not isinstance(text, str):
        out["parse_error"] = "no raw model text ('pred') to re-parse"
        return out
    if not (isinstance(size, (list, tuple)) and len(size) == 2):
        out["parse_error"] = "image_size missing or not [W, H]"
        return out
    try:
        width, height = (int(checked_number(v, "image_size", above=0, maximum=MAX_IMAGE_SIDE)) for v in size)
    except NumberError as e:
        out["parse_error"] = str(e)
        return out
    resize = row.get("resize") if isinstance(row.get("resize"), dict) else {}
    resized = resize.get("resized_size")
    if (isinstance(resized, (list, tuple)) and len(resized) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_IMAGE_SIDE for v in resized)):
        geometry = ImageGeometry(width, height, int(resized[0]), int(resized[1]))
    else:
        try:
            geometry = preset.geometry(width, height, benchmark)
        except ValueError as e:
            out["parse_error"] = f"image_size: {e}"
            return out
    result = parse_action(text, fmt=preset.parser)
    if not result.ok or result.action is None:
        out["parse_error"] = result.error or "no action"
        return out
    try:
        action = result.action.to_action(geometry, preset.frame)
    except ValueError as e:
        out["parse_error"] = str(e)
        out["pred_action"] = result.action.action
        return out
    out.update(parse_ok=True, parse_error=None, pred_action=action.type,
               pred_coord=None if action.point is None else [float(action.point[0]), float(action.point[1])],
               pred_input_text=action.guir1_input_text())
    return out


__all__ = ["GUIR1_SCREENSPOT_MAX_PIXELS", "AmbiguousBenchmark", "Generation", "MAX_IMAGE_SIDE", "PRESETS", "Preset", "get_preset", "reparse_row"]
