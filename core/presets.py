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
from core.model_prompts import (
    GTA1_PIXELS,
    GUIOWL15_PIXELS,
    INFIGUI_G1_PIXELS,
    MAI_UI_PIXELS,
    QWEN3VL_PROCESSOR_PIXELS,
    UITARS_MAX_PIXELS,
    UITARS_MIN_PIXELS,
    UIVENUS15_PIXELS,
    UIVENUS_PIXELS,
)
from core.numbers import NumberError, checked_number

#: Longest image side (pixels) ``eval --preset`` accepts in a row's ``image_size`` / ``resize.resized_size``: far
#: beyond any screenshot, and small enough that every resize computation stays in the float range.
MAX_IMAGE_SIDE = 1_000_000

GUIR1_SCRIPTS = "icey-zhang/GUI-R1 @ 0ec02be guir1/inference/inference_vllm_*.py"
#: GUI-R1's ScreenSpot script sets ``self.processor.max_pixels=2097152`` (icey-zhang/GUI-R1 @ 0ec02be
#: guir1/inference/inference_vllm_screenspot.py:63; 2,109,744, used before, is a training default of a later
#: commit's agent-sft configs, 1eafa24 agent-sft/qwen-vl-finetune*/.../argument.py, not this script's).
GUIR1_SCREENSPOT_MAX_PIXELS = 2_097_152
#: The benchmarks GUI-R1's ScreenSpot script runs (and the ``guir1`` preset resizes in its two steps).
GUIR1_SCREENSPOT = ("screenspot", "screenspot_v2", "screenspot_pro")
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
    #: A first resize to this pixel budget before ``smart_resize`` (InfiGUI-G1's two steps); None: one step.
    prescale_max_pixels: int | None = None
    #: Benchmarks whose screenshot is first resized as qwen-vl-utils' ``fetch_image`` does (its defaults), then
    #: smart-resized with this preset's bounds (GUI-R1's ScreenSpot script's two steps).
    fetch_image_first: tuple[str, ...] = ()

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

    def answer_frame(self, benchmark: str | None, template: str | None = None) -> Frame:
        """The frame of the answers to the prompt a row was asked with (``template``, its recorded one; None: this
        preset's for ``benchmark``) when that prompt is one of this preset's, else :attr:`frame`. Only ``qwen3vl``'s
        navigation prompt has another frame than its preset (``grid999``, the cookbook's 999 x 999 screen)."""
        from core.prompts import get_template

        if template is None:
            try:
                template = self.template_for(benchmark)
            except ValueError:
                return self.frame
        return get_template(template).frame if template in self.templates.values() else self.frame

    def pixel_bounds(self, benchmark: str | None) -> tuple[int, int]:
        """(min_pixels, max_pixels) of the resize for ``benchmark``."""
        return self.min_pixels, self.benchmark_max_pixels.get(benchmark or "", self.max_pixels)

    def fetches_image_first(self, benchmark: str | None) -> bool:
        """Whether ``benchmark``'s screenshots are first resized as qwen-vl-utils' ``fetch_image`` does."""
        return benchmark in self.fetch_image_first

    def geometry(self, width: int, height: int, benchmark: str | None = None) -> ImageGeometry:
        """The image sizes of a ``width`` x ``height`` screenshot under this preset's resize."""
        low, high = self.pixel_bounds(benchmark)
        return ImageGeometry.for_model(width, height, factor=self.factor, min_pixels=low, max_pixels=high,
                                       prescale_max_pixels=self.prescale_max_pixels,
                                       fetch_image_first=self.fetches_image_first(benchmark))


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

GUIG2_REPO = "ZJU-REAL/GUI-G2 @ 5c5c365"
UIVENUS1 = "inclusionAI/UI-Venus @ fc7670d"
UIVENUS15 = "inclusionAI/UI-Venus @ c3a1442"
GTA1_REPO = "Yan98/GTA1 @ 81f0c4c"
INFIGUI_REPO = "InfiXAI/InfiGUI-G1 @ 22208e4"
GUIOWL15_SCRIPT = "X-PLUG/MobileAgent @ 11cea57 Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py"
MAIUI_REPO = "Tongyi-MAI/MAI-UI @ 4dd07b9"
GELAB_REPO = "stepfun-ai/gelab-zero @ 19465cf"
CLAWGUI = "ZJU-REAL/ClawGUI @ d990d3e clawgui-eval/"


def _preset(name: str, title: str, parser: str, frame: Frame, templates: dict[str, str], generation: Generation | int,
            *, prompt: str, decoding: str, answer: str, pixels: str = _PROCESSOR_DEFAULT,
            refusal: str | None = None, messages: str | None = None, **settings: Any) -> Preset:
    """A :class:`Preset` with its ``sources``: where its ``prompt``, ``decoding`` (generation settings), ``pixels``
    and ``answer`` format were read, and (2025-26 presets) its ``refusal`` form and ``messages`` (system message,
    image / text order). An int ``generation`` is greedy decoding of that many new tokens; a
    ``(min_pixels, max_pixels)`` ``bounds`` setting sets both."""
    if isinstance(generation, int):
        generation = Generation(max_new_tokens=generation)
    if "bounds" in settings:
        settings["min_pixels"], settings["max_pixels"] = settings.pop("bounds")
    extra = {k: v for k, v in (("refusal", refusal), ("messages", messages)) if v is not None}
    return Preset(name, title, parser, frame, templates, generation, **settings,
                  sources={"prompt": prompt, "generation": decoding, "pixels": pixels, "answer": answer, **extra})


PRESETS: dict[str, Preset] = {p.name: p for p in (
    _preset("guir1", "GUI-R1 (3B / 7B, Qwen2.5-VL)", "guir1", Frame.RESIZED, _GUIR1_TEMPLATES,
            Generation(max_new_tokens=1024, temperature=0.0, top_p=0.001, repetition_penalty=1.05),
            benchmark_max_pixels=dict.fromkeys(GUIR1_SCREENSPOT, GUIR1_SCREENSPOT_MAX_PIXELS),
            fetch_image_first=GUIR1_SCREENSPOT,
            prompt=f"{GUIR1_SCRIPTS} (one per benchmark; core.prompts guir1-inference-*)",
            decoding=f"{GUIR1_SCRIPTS}: SamplingParams(temperature=0.0, top_p=0.001, repetition_penalty=1.05, "
                     "max_tokens=1024)",
            pixels=f"{_PROCESSOR_DEFAULT}; ScreenSpot: qwen-vl-utils' fetch_image (its defaults: factor 28, 3,136.."
                   "12,845,056) in process_vision_info (inference_vllm_screenspot.py:106), then the processor, whose "
                   "max_pixels :63 sets to 2097152",
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
            {"grounding": "qwen3vl-grounding", "navigation": "qwen3vl-mobile-agent"}, 1024, factor=QWEN3VL_FACTOR,
            decoding=_UNPUBLISHED, pixels="Qwen3-VL image processor defaults as used by this project (factor 32)",
            prompt="Qwen cookbook grounding pattern (grounding); this project's mobile_use prompt on the 999x999 "
                   "screen QwenLM/Qwen3-VL @ 9658872 cookbooks/mobile_agent.ipynb cell 7 states (navigation, "
                   "core.prompts qwen3vl-mobile-agent)",
            answer='{"bbox_2d": [...]} on the 0-1000 relative grid (Qwen3-VL model card); <tool_call> on the 999x999 '
                   "screen, mapped round(p / 999 * W) (the same notebook, cell 4 rescale_coordinates; --reading "
                   "tolerant: p / 999 * W unrounded)"),
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
    # ---- 2025-26 grounding models (docs/presets.md "2025-26 grounding models"); CLAWGUI pins each for comparison
    _preset("guig2", "GUI-G2-7B (Qwen2.5-VL)", "box", Frame.RESIZED, {"grounding": "guig2-grounding"}, 128,
            prompt=f"{GUIG2_REPO} README.md inference example (prompt_origin)",
            messages="no system message; the screenshot, then the query (same README)",
            decoding=f"{GUIG2_REPO} README.md: do_sample=False, temperature 0.0, generate(max_new_tokens=128)",
            pixels=f"{GUIG2_REPO} README.md passes none: {_PROCESSOR_DEFAULT} ({CLAWGUI}"
                   "scripts/infer/transformers/guig2_run_transformers.sh uses min 78,400)",
            answer="[x1,y1,x2,y2], pixels of the resized image, scored at the box centre (README divides by "
                   "image_grid_thw * 14)",
            refusal="none: the prompt has no refusal form"),
    _preset("uivenus", "UI-Venus-Ground-7B (1.0, Qwen2.5-VL)", "box", Frame.RESIZED,
            {"grounding": "uivenus-grounding"}, 128, bounds=UIVENUS_PIXELS,
            prompt=f"{UIVENUS1} models/grounding/ui_venus_ground_7b.py (prompt_origin, GUI-G2's text)",
            messages="no system message; the screenshot, then the query (same file)",
            decoding=f"{UIVENUS1} models/grounding/ui_venus_ground_7b.py: do_sample=False, temperature 0.0, "
                     "generate(max_new_tokens=128)",
            pixels=f"{UIVENUS1} models/grounding/ui_venus_ground_7b.py: min_pixels 2,000,000, max_pixels 4,800,000",
            answer="[x1,y1,x2,y2], pixels of the resized image, scored at the box centre (same file)",
            refusal="none: the prompt has no refusal form"),
    _preset("uivenus15", "UI-Venus-1.5 (2B / 8B, Qwen3-VL)", "venus", Frame.GRID1000,
            {"grounding": "uivenus15-grounding"}, 256, bounds=UIVENUS15_PIXELS, factor=QWEN3VL_FACTOR,
            prompt=f"{UIVENUS15} models/grounding/eval_screenspot_pro.py (the refusal prompt, its default; one final "
                   "'.' of the instruction dropped)",
            messages="no system message; the screenshot, then the query (same file)",
            decoding=f"{UIVENUS15} models/grounding/eval_screenspot_pro.py: do_sample=False, temperature 0, "
                     "max_new_tokens 256",
            pixels=f"{CLAWGUI}scripts/infer/transformers/uivenus15_run_transformers.sh (3,136..12,845,056; factor "
                   "32: inference/uivenus15_inferencer.py is its Qwen3-VL one); UI-Venus' script leaves the "
                   "processor's own bounds (not read here)",
            answer="[x,y] on 0-1000 (the script divides by 1000); a box is read at its centre",
            refusal="[-1,-1] (the prompt: 'if the task is infeasible ... the output should be [-1,-1]')"),
    _preset("gta1", "GTA1-7B-2507 (Qwen2.5-VL)", "point", Frame.RESIZED, {"grounding": "gta1-grounding"}, 32,
            bounds=GTA1_PIXELS,
            prompt=f"{GTA1_REPO} README.md 'Inference' (SYSTEM_PROMPT with the resized height and width)",
            messages="system message, then the screenshot and the instruction (same README)",
            decoding=f"{GTA1_REPO} README.md: generate(max_new_tokens=32, do_sample=False)",
            pixels=f"{GTA1_REPO} README.md: AutoProcessor(min_pixels=3136, max_pixels=4096 * 2160)",
            answer="(x,y), pixels of the resized image (the README multiplies by original/resized)",
            refusal="none: the prompt has no refusal form"),
    _preset("infigui_g1", "InfiGUI-G1 (3B / 7B, Qwen2.5-VL)", "infigui", Frame.RESIZED,
            {"grounding": "infigui-g1-grounding"}, 1024, bounds=(INFIGUI_G1_PIXELS[0], QWEN25VL_MAX_PIXELS),
            prescale_max_pixels=INFIGUI_G1_PIXELS[1],
            prompt=f"{INFIGUI_REPO} eval/prompts.py InfiguiG1Prompt (think_mode 1, eval/eval.py's default)",
            messages="system message (thinking), then one user turn: the screenshot, its resized size and the query "
                     "(same file)",
            decoding=f"{INFIGUI_REPO} eval/eval.py: --temperature 0.0, --max-tokens 1024 (defaults)",
            pixels=f"{INFIGUI_REPO} eval/eval.py:41-44: resize_image to --max-image-tokens 5600 x 28 x 28 = "
                   "4,390,400 pixels (eval/data.py:298-312, sides rounded), then smart_resize(max_pixels=12845056, "
                   "min 3,136, factor 28) of that size",
            answer='<think>..</think>[{"point_2d": [x, y]}, ...], pixels of the resized image; the first point is '
                   "scored (eval/prompts.py calculate_metrics)",
            refusal="[] (eval/prompts.py: no prediction is right where the sample has no target)"),
    _preset("guiowl15", "GUI-Owl-1.5 (2B / 4B / 8B Instruct, Qwen3-VL)", "tool_call", Frame.GRID1000,
            {"grounding": "guiowl15-grounding", "osworld_g": "guiowl15-grounding-refusal"},
            2048, bounds=GUIOWL15_PIXELS, factor=QWEN3VL_FACTOR,
            prompt=f"{GUIOWL15_SCRIPT} (only_two_action_system_prompt; OSWorld-G adds infesible_prefix)",
            messages="system message, then the screenshot and the instruction (same file)",
            decoding=f"{GUIOWL15_SCRIPT}: top_k 1, top_p 0.01, temperature 0.01 (greedy in effect: greedy here), "
                     "max_new_tokens 2048",
            pixels=f"{GUIOWL15_SCRIPT}: MIN_PIXELS 196*32*32, MAX_PIXELS 9800*32*32",
            answer='<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [x, '
                   "y]}}</tool_call> on 0-1000 (the script scores against a 1000 x 1000 frame)",
            refusal="terminate with status failure (OSWorld-G prompt only, infesible_prefix)"),
    _preset("mai_ui", "MAI-UI (2B / 8B, Qwen3-VL)", "mai_ui", Frame.GRID1000, {"grounding": "mai-ui-grounding"}, 256,
            bounds=MAI_UI_PIXELS, factor=QWEN3VL_FACTOR,
            prompt=f"{MAIUI_REPO} evaluation/grounding/eval_server.py SYSTEM_PROMPT",
            messages="system message, then one user turn: the instruction + newline, then the screenshot (same "
                     "file; text first)",
            decoding=f"{MAIUI_REPO} evaluation/grounding/eval_server.py: temperature 0.0, max_tokens 256",
            pixels=f"{MAIUI_REPO} evaluation/grounding/eval_server.py: smart_resize(factor 32, min 16*16*4, max "
                   "6,553,600) (the README's eval_local.py command: --max_pixels 6553600)",
            answer='<grounding_think>..</grounding_think><answer>{"coordinate": [x,y]}</answer>, 0-1000 (the script '
                   "divides by 1000)",
            refusal="none: the prompt has no refusal form"),
    _preset("step_gui", "Step-GUI / GELab-Zero-4B-preview (Qwen3-VL)", "gelab", Frame.GRID1000,
            {"grounding": "gelab-zero-mobile"}, 512, bounds=QWEN3VL_PROCESSOR_PIXELS, factor=QWEN3VL_FACTOR,
            prompt=f"no grounding prompt is published ({GELAB_REPO} has only its agent's; ClawGUI-Eval keeps its "
                   "own in data files that are not in the repository): the mobile agent prompt of "
                   f"{GELAB_REPO} copilot_tools/parser_0920_summary.py with the instruction as the task",
            messages="no system message; one user turn: the task prompt, the screenshot, the output rules "
                     "(env2messages4ask, same file)",
            decoding=f"{GELAB_REPO} copilot_agent_server/local_server.py: max_tokens 512 (its temperature 0.1 is "
                     f"sampling; {CLAWGUI}scripts/infer/transformers/stepgui_run_transformers.sh: top_k 1, greedy in "
                     "effect: greedy here)",
            pixels=f"{CLAWGUI}scripts/infer/transformers/stepgui_run_transformers.sh: 65,536..16,777,216; factor 32: "
                   "inference/stepgui_inferencer.py (image_patch_size=16, Qwen3-VL); GELab-Zero sends the screenshot "
                   "as is",
            answer="<THINK>..</THINK>explain:..\\taction:CLICK\\tpoint:x,y (tab-separated) on 0-1000 (the prompt and "
                   "copilot_front_end/mobile_action_helper.py divide by 1000; "
                   f"{CLAWGUI}judge/grounding_judge.py divides by 999, 0.1% of the screen apart)",
            refusal="action:ABORT (the prompt: only when the task cannot go on)"),
)}


# ------------------------------------------------------------------------------------------------ official numbers

#: A run reproduces a published number when it is at most this many points below it (or above it): ClawGUI-Eval's
#: criterion (ZJU-REAL/ClawGUI @ d990d3e clawgui-eval/README.md "Reproduction Results").
REPRODUCED_WITHIN = 2.0

#: Where the published numbers below were read (key -> citation).
OFFICIAL_SOURCES: dict[str, str] = {
    "guig2-ss": f"{GUIG2_REPO} assets/ssv1.png (the paper's Table 3, ScreenSpot)",
    "guig2-v2": f"{GUIG2_REPO} README.md 'Results on ScreenSpot-v2'",
    "venus1": f"{UIVENUS1} README.md ScreenSpot-v2 and ScreenSpot-Pro tables",
    "venus15": f"{UIVENUS15} README.md 'Grounding Benchmarks' table",
    "gta1": f"{GTA1_REPO} README.md introduction (GTA1-7B-2507)",
    "infigui": f"{INFIGUI_REPO} assets/results_screenspot-pro.png, results_screenspot-v2.png, "
               "results_mmbench-gui.png, results_ui-vision.png (the README's tables, images)",
    "maiui": f"{MAIUI_REPO} evaluation/grounding/README.md, row 'MAI-UI-8B (Tech Report)'",
    "maiui-tables": f"{MAIUI_REPO} assets/img/sspro.jpg, uivision.jpg, mmbench.jpg, osworld-g.jpg (the README's "
                    "images of its report's Tables 2-5, read here)",
    "gelab": f"{GELAB_REPO} images/Result.jpeg (the README's 'Open Benchmark' charts, read here)",
    "clawgui": f"{CLAWGUI}README.md 'Reproduction Results', Official column (the models' reports, not read here)",
}


@dataclass(frozen=True)
class OfficialResult:
    """One published accuracy (%) of ``model`` (run with ``preset``) on ``benchmark``, as ``source`` (a key of
    :data:`OFFICIAL_SOURCES`) prints it; ``note`` names other published values."""

    preset: str
    model: str
    benchmark: str
    value: float
    source: str
    note: str = ""


def _published(preset: str, model: str, source: str, note: str = "", **values: float) -> list[OfficialResult]:
    return [OfficialResult(preset, model, bench, v, source, note) for bench, v in values.items()]


#: The published grounding accuracies of the 2025-26 presets' models (docs/presets.md "Reproduction"; the docs
#: table is :func:`official_markdown`). Benchmark names as ``gui-agent eval --benchmark`` takes them.
OFFICIAL_RESULTS: tuple[OfficialResult, ...] = tuple(r for rows in (
    _published("guig2", "GUI-G2-7B", "guig2-ss", screenspot=92.0),
    _published("guig2", "GUI-G2-7B", "guig2-v2", screenspot_v2=93.3),
    _published("guig2", "GUI-G2-7B", "clawgui", "47.5 also in InfiGUI-G1's ScreenSpot-Pro table",
               screenspot_pro=47.5),
    _published("uivenus", "UI-Venus-Ground-7B", "venus1", screenspot_v2=94.1, screenspot_pro=50.8),
    _published("uivenus", "UI-Venus-Ground-7B", "venus15", "58.8 in MAI-UI's Table 5 and ClawGUI-Eval's Official "
               "column", osworld_g=54.6),
    _published("uivenus", "UI-Venus-Ground-7B", "venus15", ui_vision=26.5),
    _published("uivenus15", "UI-Venus-1.5-2B", "venus15", screenspot_pro=57.7, osworld_g=59.4, ui_vision=44.8),
    _published("uivenus15", "UI-Venus-1.5-2B", "clawgui", screenspot_v2=92.8, mmbench_gui=80.3),
    _published("uivenus15", "UI-Venus-1.5-8B", "venus15", screenspot_pro=68.4, osworld_g=69.7, ui_vision=46.5),
    _published("uivenus15", "UI-Venus-1.5-8B", "clawgui", screenspot_v2=95.9, mmbench_gui=88.1),
    _published("gta1", "GTA1-7B-2507", "gta1", screenspot_pro=50.1, screenspot_v2=92.4, osworld_g=55.1),
    _published("infigui_g1", "InfiGUI-G1-3B", "infigui", screenspot_pro=45.2, screenspot_v2=91.1, mmbench_gui=73.4,
               ui_vision=22.0),
    _published("infigui_g1", "InfiGUI-G1-7B", "infigui", screenspot_pro=51.9, screenspot_v2=93.5, mmbench_gui=80.8,
               ui_vision=26.1),
    _published("guiowl15", "GUI-Owl-1.5-2B-Instruct", "clawgui", screenspot_pro=57.8, screenspot_v2=89.7,
               mmbench_gui=72.17, osworld_g=52.8),
    _published("guiowl15", "GUI-Owl-1.5-4B-Instruct", "clawgui", screenspot_pro=66.8, screenspot_v2=93.2,
               mmbench_gui=83.24, osworld_g=63.7),
    _published("guiowl15", "GUI-Owl-1.5-8B-Instruct", "clawgui", screenspot_pro=71.1, screenspot_v2=93.7,
               mmbench_gui=82.52, osworld_g=65.8),
    _published("mai_ui", "MAI-UI-2B", "maiui-tables", screenspot_pro=57.4, ui_vision=30.3, mmbench_gui=82.6,
               osworld_g=52.0),
    _published("mai_ui", "MAI-UI-2B", "clawgui", screenspot_v2=92.5),
    _published("mai_ui", "MAI-UI-8B", "maiui", ui_vision=40.7, mmbench_gui=88.8, screenspot_pro=65.8,
               screenspot_v2=95.2, osworld_g=60.1),
    _published("step_gui", "GELab-Zero-4B-preview", "gelab", screenspot_v2=93.0, osworld_g=68.04,
               screenspot_pro=60.53, mmbench_gui=85.81),
    _published("step_gui", "Step-GUI-4B", "clawgui", "ClawGUI-Eval runs it as stepfun-ai/GELab-Zero-4B-preview",
               screenspot_pro=60.0, screenspot_v2=93.6, mmbench_gui=84.0, osworld_g=66.9),
) for r in rows)

#: The presets whose OSWorld-G refusal ClawGUI-Eval's judge reads (UI-Venus-1.5's [-1,-1], GUI-Owl-1.5's terminate:
#: clawgui-eval/judge/osworld_g_judge.py "Model refusal signals"), the models its judge script scores with
#: --include_refusal (scripts/judge/osworld-g_run_judge.sh: "relevant for uivenus15/guiowl15 on osworld-g"); every
#: other model's Overall leaves the refusal rows out (metric/osworldg_metric.py, its default).
CLAWGUI_REFUSING = ("uivenus15", "guiowl15")


def published_metric(preset: str, benchmark: str) -> str:
    """The metric a published number of ``preset``'s models on ``benchmark`` is: the registry's
    ``published_metric`` (``overall``; UI-Vision ``final_avg``, MMBench-GUI L2 ``average``), on OSWorld-G
    ``overall_no_refusal`` for a model that does not refuse (:data:`CLAWGUI_REFUSING`)."""
    from core.eval.registry import BENCHMARKS

    bench = BENCHMARKS.get(benchmark)
    if bench is None:
        return "overall"
    if bench.published_metric_no_refusal is not None and preset not in CLAWGUI_REFUSING:
        return bench.published_metric_no_refusal
    return bench.published_metric


def benchmark_title(name: str) -> str:
    """The registry's title of benchmark ``name``, else ``name`` itself."""
    from core.eval.registry import BENCHMARKS

    return BENCHMARKS[name].title if name in BENCHMARKS else name


def shown_official(value: float) -> str:
    """A published number as its source prints it: one decimal, two where the source has two (72.17)."""
    return f"{value:.1f}" if round(value, 1) == value else f"{value:.2f}"


def official_markdown() -> str:
    """The reproduction table of docs/presets.md: one row per published number with the metric it is
    (:func:`published_metric`), an empty "reproduced here" column, and the numbered sources below it."""
    keys = list(dict.fromkeys(r.source for r in OFFICIAL_RESULTS))
    lines = ["| preset | model | benchmark | metric | official % | source | reproduced here |",
             "|---|---|---|---|---|---|---|"]
    for r in OFFICIAL_RESULTS:
        note = f" ({r.note})" if r.note else ""
        lines.append(f"| `{r.preset}` | {r.model} | {benchmark_title(r.benchmark)} | "
                     f"`{published_metric(r.preset, r.benchmark)}` | {shown_official(r.value)} | "
                     f"[{keys.index(r.source) + 1}]{note} | |")
    lines.append("")
    lines += [f"{i}. {OFFICIAL_SOURCES[k]}" for i, k in enumerate(keys, 1)]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class OfficialComparison:
    """A run's accuracy (%) on ``official.benchmark`` beside the published one; ``metric`` is the run's metric
    compared (:func:`published_metric`); ``run`` None when the run has no such accuracy, ``note`` then says why
    (:func:`run_metric`)."""

    official: OfficialResult
    run: float | None
    metric: str = "overall"
    note: str = ""
    #: How the run read the model's answers (``eval --reading``; a run written before readings existed: tolerant).
    reading: str = "authors"

    @property
    def delta(self) -> float | None:
        return None if self.run is None else self.run - self.official.value

    @property
    def reproduced(self) -> bool:
        """At most :data:`REPRODUCED_WITHIN` points below the published number, or above it; never without the
        run's number (a mean over only some settings, a value outside [0, 1] are none), nor for a run that read the
        answers otherwise than the authors' code (``--reading tolerant``: issue 51)."""
        return (self.reading == "authors" and self.run is not None
                and self.run >= self.official.value - REPRODUCED_WITHIN)


def run_metric(benchmark: str, result: dict[str, Any], metric: str) -> tuple[float | None, str]:
    """The ``metric`` of a run's ``benchmark`` result in % beside the published one, or None and why: not in the
    result, a mean over only some of the benchmark's settings (the result's ``absent`` reason, or
    :func:`core.eval.registry.absent_averages` for a report written before it recorded one), or not a share in
    [0, 1] (``5``, ``1e308``, NaN): such a number is never shown as the run's, nor called reproduced."""
    from core.eval.registry import absent_averages

    metrics = result.get("metrics") or {}
    reason = (result.get("absent") or {}).get(metric) or absent_averages(benchmark, metrics).get(metric)
    if reason:
        return None, str(reason)
    got = metrics.get(metric)
    if got is None:
        return None, f"{metric} is not in the run"
    try:
        return 100 * checked_number(got, metric, minimum=0, maximum=1), ""
    except NumberError as e:
        return None, f"{e} (a share)"


def compare_official(run: dict[str, Any]) -> list[OfficialComparison]:
    """The published numbers for each benchmark result of ``run`` (a :func:`core.eval.report.load_run` run), for
    the preset it was scored with (``data.preset``), each beside the run's accuracy in the published metric
    (:func:`published_metric`, read by :func:`run_metric`); a result not read with the authors' reading
    (``data.reading``) is never reproduced, its note says why. ``ValueError`` when no result of the run names a
    preset."""
    rows, presets = [], set()
    for bench, result in run["results"].items():
        preset = (result.get("data") or {}).get("preset")
        if preset is None:
            continue
        presets.add(preset)
        metric = published_metric(preset, bench)
        value, note = run_metric(bench, result, metric)
        reading = str((result.get("data") or {}).get("reading", "tolerant"))
        if reading != "authors":
            note = "; ".join(n for n in (note, f"answers read with the {reading} reading, not the authors' "
                                         "(gui-agent eval --reading authors): not comparable") if n)
        rows += [OfficialComparison(r, value, metric, note, reading) for r in OFFICIAL_RESULTS
                 if r.preset == preset and r.benchmark == bench]
    if not presets:
        raise ValueError(f"run {quoted(run['name'])} was not scored with --preset: the official numbers are per preset "
                         "(gui-agent eval --preset NAME)")
    return rows


def get_preset(name: str) -> Preset:
    """The preset called ``name``; ``ValueError`` listing the known names otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {quoted(name)}; known: {', '.join(PRESETS)}") from None


def reparse_row(row: dict[str, Any], preset: Preset, benchmark: str | None,
                reading: str = "authors") -> dict[str, Any]:
    """``row`` (a prediction row) with ``pred_action`` / ``pred_coord`` (ORIGINAL pixels) / ``pred_input_text`` /
    ``parse_ok`` / ``parse_error`` recomputed from its raw ``pred`` with the preset's parser and frame, whatever
    they said before. ``reading`` ``authors`` (the default) parses and maps as the model's authors' code does
    (:mod:`core.authors`; issue 51), ``tolerant`` with the project's own parser (``preset.parser``). The resized size is the row's ``resize.resized_size`` when recorded, else the preset's
    resize of ``image_size``. A zoom row whose fields hold the second answer (``zoom.used`` ``second``,
    ``infer --zoom``) is re-parsed from that answer, on the crop as the model saw it, and mapped back as
    :mod:`core.inference.zoom` maps it (:func:`core.inference.zoom.second_answer`, then
    :func:`core.geometry.from_crop`). A row without usable ``pred``, ``image_size`` or zoom record gets
    ``parse_error`` set."""
    from core.actions import NO_INPUT_TEXT
    from core.geometry import from_crop
    from core.authors import read_answer
    from core.eval.registry import BENCHMARKS
    from core.inference.zoom import second_answer
    from core.regions import refuses

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
    zoom = row.get("zoom")
    crop = None
    if isinstance(zoom, dict) and zoom.get("used") == "second":
        try:
            text, geometry, crop = second_answer(zoom, MAX_IMAGE_SIDE)
        except ValueError as e:
            out["parse_error"] = str(e)
            return out
    else:
        geometry = _row_geometry(row, preset, benchmark, width, height)
        if isinstance(geometry, str):
            out["parse_error"] = geometry
            return out
    grounding = benchmark in BENCHMARKS and BENCHMARKS[benchmark].kind == "grounding"
    template = row.get("template") if isinstance(row.get("template"), str) else None
    result, authors = read_answer(text, preset.name, preset.parser, reading, grounding, template)
    if not result.ok or result.action is None:
        out["parse_error"] = result.error or "no action"
        return out
    try:
        action = result.action.to_action(geometry, preset.answer_frame(benchmark, template))
    except ValueError as e:
        out["parse_error"] = str(e)
        out["pred_action"] = result.action.action
        return out
    point = action.point
    if (reading == "authors" and benchmark == "osworld_g" and point is None and refuses(action.type, None)
            and not result.action.raw.get("negative_point")):
        # OSWorld-G's evaluator reads coordinates only: an answer without one is [0, 0, 0, 0] there (its
        # parse_aguvis_coordinates), a click at the origin, and a refusal is only a point with both coordinates
        # negative (_eval); so a refusal without a coordinate is that click (issue 51; docs/evaluation.md).
        out.update(parse_ok=True, parse_error=None, pred_action="click", pred_coord=[0.0, 0.0],
                   pred_refusal_read_as="a click at the origin (OSWorld-G's evaluator: no coordinate)")
        return out
    if point is not None and authors is not None and authors.to_original is not None:
        try:
            point = authors.to_original(result.action, geometry) or point
        except (ValueError, OverflowError) as e:
            out["parse_error"] = f"point: {e}"
            return out
    if point is not None and crop is not None:
        point = from_crop(point, crop)
    out.update(parse_ok=True, parse_error=None, pred_action=action.type,
               pred_coord=None if point is None else [float(point[0]), float(point[1])],
               pred_input_text=action.guir1_input_text())
    return out


def _row_geometry(row: dict[str, Any], preset: Preset, benchmark: str | None, width: int,
                  height: int) -> ImageGeometry | str:
    """The geometry a row's ``pred`` was given in: its recorded ``resize.resized_size``, else the preset's resize
    of ``width`` x ``height``; the reason as a string when neither can be had."""
    resize = row.get("resize") if isinstance(row.get("resize"), dict) else {}
    resized = resize.get("resized_size")
    if (isinstance(resized, (list, tuple)) and len(resized) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_IMAGE_SIDE for v in resized)):
        return ImageGeometry(width, height, int(resized[0]), int(resized[1]))
    try:
        return preset.geometry(width, height, benchmark)
    except ValueError as e:
        return f"image_size: {e}"


__all__ = ["CLAWGUI_REFUSING", "GUIR1_SCREENSPOT_MAX_PIXELS", "OFFICIAL_RESULTS", "OFFICIAL_SOURCES", "REPRODUCED_WITHIN",
           "AmbiguousBenchmark", "Generation", "MAX_IMAGE_SIDE", "OfficialComparison", "OfficialResult", "PRESETS", "Preset",
           "benchmark_title", "compare_official", "get_preset", "official_markdown", "published_metric", "reparse_row", "run_metric",
           "shown_official"]
