"""Named prompt templates (lm-eval-harness style registry): chat messages for a :class:`~core.schema.Step` and
the gold assistant answer in the template's answer format and coordinate frame.

GUI-R1 templates reproduce the public GUI-R1 prompts character for character (papers compare against them):

- ``guir1-high`` / ``guir1-low``: the training prompts of ``verl/utils/dataset.py`` (``RLHFDataset.__getitem__``:
  ``task_type == 'high'`` gets the full action list, every other row the click-only prompt), repository
  ritzz-ai/GUI-R1 (read from its public forks YangRui2015/GUI-R1 and icey-zhang/GUI-R1).
- ``guir1-inference-<benchmark>``: the prompts of ``guir1/inference/inference_vllm_<benchmark>.py`` (android,
  guiodyssey, guiact_web, omniact_web, omniact_desktop, screenspot; read from the forks
  fansunqi/GUIVisualGrounding, YangRui2015/GUI-R1, Haochen-Luo/GUI-R1). Their quirks are kept on purpose:
  the ScreenSpot prompt says "You are RUN1-R1" and fixes the history to 'None', the AndroidControl one says
  "You are GUI-R1", the others "You are a reasoning GUI Agent Assistant.", spacing differs between lists.
  One deliberate difference: the inference scripts pass the image as a separate content item before the text
  AND prefix the text with a literal ``'<image>\\n'``; a message here has exactly one ``<image>`` placeholder,
  placed inline ("In this UI screenshot <image>, ...") exactly where the training prompt puts the image.
- ``guir1-grounding``: the click-only training prompt with the history fixed to 'None' (grounding rows have no
  episode), as GUI-R1's ScreenSpot evaluation does.

GUI-R1 answers use the RESIZED frame (absolute pixels of the image Qwen2.5-VL sees); ``qwen3vl-mobile-use``
answers use Qwen3-VL's 0-1000 grid (our own wording around Qwen's standard tool-calling block).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from core.actions import (
    NO_INPUT_TEXT,
    POINT_ACTIONS,
    to_mobile_use,
)
from core.console import quoted
from core.geometry import (
    GUIR1_TRAIN_MAX_PIXELS,
    GUIR1_TRAIN_MIN_PIXELS,
    QWEN3VL_FACTOR,
    Frame,
    ImageGeometry,
)
from core.model_prompts import MODEL_TEMPLATES
from core.prompt_base import (
    GUIR1_NO_POINT,
    IMAGE_PLACEHOLDER,
    PromptTemplate,
    TemplateError,
    describe_action,
    point_in,
    qwen_history,
    render_guir1_history,
)
from core.schema import Step

# ------------------------------------------------------------------------------------------------ GUI-R1

_GUIR1_INTRO = "You are GUI-R1, a reasoning GUI Agent Assistant."
_PLAIN_INTRO = "You are a reasoning GUI Agent Assistant."
_SCREENSPOT_INTRO = "You are RUN1-R1, a reasoning GUI Agent Assistant."  # sic, in GUI-R1's ScreenSpot script
_PROVIDE = ("Please provide the action to perform (enumerate from {actions}), the point where the cursor is moved "
            "to (integer) if a click is performed, and any input text required to complete the action.\n"
            "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> "
            "tags as follows:\n"
            "<think> ... </think> <answer>[{{'action': enum{enum}, 'point': [x, y], 'input_text': '{default}'}}]"
            "</answer>\n")
_NO_POINT_EX = "[{{'action': enum[{}], 'point': [-100, -100], 'input_text': 'no input text'}}]\n"
_POINT_EX = "[{{'action': enum[{}], 'point': [123, 300], 'input_text': 'no input text'}}]\n"
_TEXT_EX = "[{{'action': enum[{}], 'point': [-100, -100], 'input_text': 'shanghai shopping mall'}}]\n"
_SCROLL_EX = "[{'action': enum['scroll'], 'point': [-100, -100], 'input_text': enum['up', 'left', 'right', 'down']}]"


def _note_and_examples(needs_text: str, no_point: str, point: str, text: str = "", *, extra: str = "",
                       example: str = " \n Example:\n") -> str:
    """GUI-R1's note and example answers: the actions that need input text (``needs_text``, as written inside
    ``enum[...]``), then one example answer for the no-point, the point and (when given) the text actions, ``extra``
    and scroll. ``example`` is the text before the examples exactly as the GUI-R1 script spells it."""
    return ("Note:\n specific input text (no default) is necessary for actions enum[" + needs_text + "]" + example
            + _NO_POINT_EX.format(no_point) + _POINT_EX.format(point) + (_TEXT_EX.format(text) if text else "")
            + extra + _SCROLL_EX)


@dataclass(frozen=True)
class GuiR1Template(PromptTemplate):
    """A GUI-R1 prompt: intro + "In this UI screenshot <image>, ..." + action list + notes/examples (``tail``).

    ``enum`` is the action list as GUI-R1 writes it in the answer skeleton (spacing differs from ``actions``
    in one prompt), ``default`` the ``input_text`` shown in the skeleton, ``fixed_history`` replaces the
    step's history (GUI-R1's ScreenSpot prompt always says 'None').
    """

    intro: str = _GUIR1_INTRO
    enum: str | None = None
    default: str = "no input text [default]"
    tail: str = ""
    fixed_history: str | None = None

    def text(self, step: Step) -> str:
        history = self.fixed_history if self.fixed_history is not None else render_guir1_history(step)
        actions = "[" + ", ".join(repr(a) for a in self.actions) + "]"
        return (f"{self.intro} In this UI screenshot {IMAGE_PLACEHOLDER}, I want you to continue executing the "
                f"command '{step.instruction}', with the action history being '{history}'.\n"
                + _PROVIDE.format(actions=actions, enum=self.enum or actions, default=self.default) + self.tail)

    def render(self, step: Step, geometry: ImageGeometry) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.text(step)}]

    def gold_answer(self, step: Step, geometry: ImageGeometry) -> str:
        a = self.answer_action(step)
        point = GUIR1_NO_POINT
        if a.point is not None and a.type in POINT_ACTIONS:
            point = point_in(a.point, geometry, self.frame)
        if a.type == "scroll":
            text = a.direction or NO_INPUT_TEXT
        else:
            text = a.text if a.text else NO_INPUT_TEXT
        answer = "[{" + f"'action': {a.type!r}, 'point': [{point[0]}, {point[1]}], 'input_text': {text!r}" + "}]"
        thought = str(step.extra.get("thought") or "")
        return f"<think>{thought}</think> <answer>{answer}</answer>"


def _guir1(name: str, actions: list[str], tail: str, description: str, **kw: Any) -> GuiR1Template:
    return GuiR1Template(name=name, answer_format="guir1", frame=Frame.RESIZED, actions=tuple(actions),
                         description=description, tail=tail, **kw)


_TRAIN = {"min_pixels": GUIR1_TRAIN_MIN_PIXELS, "max_pixels": GUIR1_TRAIN_MAX_PIXELS}
_LOW_TAIL = "Example:\n" + _POINT_EX.format("'click'")

GUIR1_HIGH = _guir1(
    "guir1-high",
    ["complete", "close/delete", "press_home", "click", "press_back", "type", "select", "scroll", "enter"],
    _note_and_examples("'type', 'select', 'scroll'", "'complete', 'close/delete', 'press_home', 'press_back', 'enter'",
                       "'click'", "'type', 'select'"),
    "GUI-R1 training prompt for high-level (goal) steps: full action list, history.", **_TRAIN)
GUIR1_LOW = _guir1("guir1-low", ["click"], _LOW_TAIL,
                   "GUI-R1 training prompt for low-level / grounding rows: click only.",
                   enum="[ 'click']", default="no input text", **_TRAIN)
GUIR1_GROUNDING = replace(GUIR1_LOW, name="guir1-grounding", fixed_history="None",
                          description="GUI-R1 click-only training prompt with history 'None' (grounding).")

GUIR1_ANDROIDCONTROL = _guir1(
    "guir1-inference-androidcontrol",
    ["wait", "long_press", "click", "press_back", "type", "open_app", "scroll"],
    _note_and_examples("'type', 'open_app', 'scroll'", "'wait', 'press_back'", "'click', 'long_press'",
                       "'type', 'open_app'"),
    "GUI-R1 AndroidControl evaluation prompt (inference_vllm_android.py).")
GUIR1_GUIODYSSEY = _guir1(
    "guir1-inference-guiodyssey",
    ["press_back", "press_recent", "press_home", "complete", "long_press", "scroll", "click", "impossible", "type"],
    _note_and_examples("'type', 'scroll'", "'complete','press_back', 'press_recent', 'press_home','impossible'",
                       "'click','long_press'", "'type'"),
    "GUI-R1 GUIOdyssey evaluation prompt (inference_vllm_guiodyssey.py).", intro=_PLAIN_INTRO)
GUIR1_GUIACT_WEB = _guir1(
    "guir1-inference-guiact-web", ["scroll", "click", "complete"],
    _note_and_examples("'scroll'", "'complete'", "'click'", example=" \nExample:\n"),
    "GUI-R1 GUI-Act web evaluation prompt (inference_vllm_guiact_web.py).", intro=_PLAIN_INTRO)
GUIR1_OMNIACT_WEB = _guir1(
    "guir1-inference-omniact-web",
    ["press_tab", "moveto", "rightclick", "press_enter", "scroll", "click", "press_down", "hotkey", "press_space",
     "doubleclick"],
    _note_and_examples("'scroll'", "'press_tab', 'press_enter','press_down','hotkey','press_space'",
                       "'moveto', 'rightclick','click','doubleclick'"),
    "GUI-R1 OmniAct web evaluation prompt (inference_vllm_omniact_web.py).", intro=_PLAIN_INTRO)
GUIR1_OMNIACT_DESKTOP = _guir1(
    "guir1-inference-omniact-desktop", ["click", "moveto", "press_pgdn"],
    "Example:\n" + _NO_POINT_EX.format("'press_pgdn'") + _POINT_EX.format("'moveto','click'"),
    "GUI-R1 OmniAct desktop evaluation prompt (inference_vllm_omniact_desktop.py).", intro=_PLAIN_INTRO)
GUIR1_SCREENSPOT = _guir1(
    "guir1-inference-screenspot", ["click"], _LOW_TAIL,
    "GUI-R1 ScreenSpot evaluation prompt (inference_vllm_screenspot.py): click only, history 'None'.",
    intro=_SCREENSPOT_INTRO, enum="[ 'click']", fixed_history="None")
GUI_DESKTOP = _guir1(
    "gui-desktop",
    ["click", "doubleclick", "rightclick", "moveto", "type", "hotkey", "scroll", "press_enter", "wait", "complete"],
    _note_and_examples("'type', 'hotkey', 'scroll'", "'press_enter', 'wait', 'complete'",
                       "'click', 'doubleclick', 'rightclick', 'moveto'", "'type'",
                       extra="[{'action': enum['hotkey'], 'point': [-100, -100], 'input_text': 'ctrl+s'}]\n"),
    "This project's desktop prompt in GUI-R1's answer format (not from GUI-R1): mouse and keyboard actions for "
    "desktop sessions such as ScreenAgent's; GUI-R1's training resize.", intro=_PLAIN_INTRO, **_TRAIN)
GUIR1_INFERENCE = replace(GUIR1_ANDROIDCONTROL, name="guir1-inference",
                          description="GUI-R1 generic evaluation prompt (= the AndroidControl one).")

@dataclass(frozen=True)
class ShortGuiR1Template(GuiR1Template):
    """GUI-R1's answer format after a one-line prompt: the screenshot, then ``Task: <instruction>``, nothing else.
    The screenshot comes first as trl's GRPO trainer puts it (it prepends the image to a text prompt), so SFT,
    GRPO and inference see the same sequence; the instruction sits right before the answer that copies from it."""

    def text(self, step: Step) -> str:
        return f"{IMAGE_PLACEHOLDER}Task: {step.instruction}"


GUIR1_SHORT = ShortGuiR1Template(
    name="guir1-short", answer_format="guir1", frame=Frame.RESIZED, actions=GUIR1_HIGH.actions,
    description="This project's short prompt in GUI-R1's answer format (not from GUI-R1): the screenshot, then the "
    "instruction; for models trained from random weights (the demo's curriculum), where GUI-R1's 380-token prompt "
    "would be most of every example.", **_TRAIN)



# ------------------------------------------------------------------------------------------------ Qwen3-VL

_MOBILE_USE_ACTIONS = ("click", "long_press", "type", "scroll", "swipe", "open_app", "press_back", "press_home",
                       "press_recent", "press_enter", "wait", "complete", "impossible", "hotkey", "answer")


#: The tool the Qwen3-VL mobile agent's answers call.
MOBILE_USE_TOOL = "mobile_use"


def mobile_use_tool(width: int, height: int, grid: int = 1000) -> dict[str, Any]:
    """The ``mobile_use`` function schema (our wording); coordinates on the 0-1000 grid of a WxH screen, or with
    ``grid`` 999 on the Qwen3-VL cookbook's 999 x 999 screen (its statement "The screen's resolution is 999x999.",
    QwenLM/Qwen3-VL @ 9658872 cookbooks/mobile_agent.ipynb cell 7; the screen's own size is not stated there)."""
    if grid not in (999, 1000):
        raise ValueError(f"mobile_use grid {grid!r}: 999 or 1000")
    screen = (f"* The screen is {width}x{height} pixels, but every coordinate is given on a relative 0-1000 grid: "
              "[0, 0] is the top-left corner and [1000, 1000] the bottom-right corner.\n" if grid == 1000 else
              "* The screen's resolution is 999x999.\n")
    where = "on the 0-1000 grid" if grid == 1000 else "on the 999x999 screen"
    return {"type": "function", "function": {
        "name": MOBILE_USE_TOOL,
        "description": (
            "Operate an Android phone through its touchscreen, one action per call, looking at the current "
            "screenshot.\n"
            f"{screen}"
            "* Touch the centre of an element, not its border.\n"
            "* Apps may take a moment to react; use `wait` when the screen is still loading."),
        "parameters": {"type": "object", "required": ["action"], "properties": {
            "action": {"type": "string", "enum": ["click", "long_press", "swipe", "type", "answer", "key",
                                                  "system_button", "open", "wait", "terminate"],
                       "description": (
                           "* `click`: tap the point `coordinate`.\n"
                           "* `long_press`: press and hold `coordinate` for `time` seconds.\n"
                           "* `swipe`: slide a finger from `coordinate` to `coordinate2`.\n"
                           "* `type`: enter `text` into the focused input field.\n"
                           "* `answer`: give the answer `text` to the user.\n"
                           "* `key`: press the key or key combination `text`.\n"
                           "* `system_button`: press the system `button`.\n"
                           "* `open`: open the app named `text`.\n"
                           "* `wait`: wait `time` seconds.\n"
                           "* `terminate`: end the task with `status`.")},
            "coordinate": {"type": "array", "description": f"[x, y] {where} (click, long_press, swipe start)."},
            "coordinate2": {"type": "array", "description": f"[x, y] {where} where a swipe ends."},
            "text": {"type": "string", "description": "Text for type, answer, key and open."},
            "time": {"type": "number", "description": "Seconds for long_press and wait."},
            "button": {"type": "string", "enum": ["Back", "Home", "Menu", "Enter"],
                       "description": "System button for system_button."},
            "status": {"type": "string", "enum": ["success", "failure"], "description": "For terminate."},
        }},
    }}


@dataclass(frozen=True)
class Qwen3VLMobileTemplate(PromptTemplate):
    """Qwen3-VL ``mobile_use`` agent prompt: tool schema in the system message, answer
    ``Thought: ...\\nAction: ...\\n<tool_call>\\n{...}\\n</tool_call>`` with 0-1000 coordinates (frame ``grid1000``)
    or on the 999 x 999 screen of the Qwen3-VL cookbook's agent (frame ``grid999``)."""

    @property
    def answer_tool(self) -> str:
        return MOBILE_USE_TOOL

    def render(self, step: Step, geometry: ImageGeometry) -> list[dict[str, str]]:
        grid = 999 if self.frame is Frame.GRID999 else 1000
        tool = json.dumps(mobile_use_tool(geometry.width, geometry.height, grid), ensure_ascii=False)
        system = (
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            f"{tool}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n<tool_call>\n"
            '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n\n'
            "# Response format\n\nAnswer each step with exactly these three parts, in this order:\n"
            "Thought: one sentence on what to do next and why.\n"
            "Action: one short imperative sentence naming the operation and its target.\n"
            "<tool_call>...</tool_call> with a single mobile_use call.\n"
            "Call terminate when the task is finished or cannot be done.")
        user = (f"Task: {step.instruction}\n"
                f"Actions done so far:\n{qwen_history(step)}\n"
                f"Current screenshot: {IMAGE_PLACEHOLDER}")
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def gold_answer(self, step: Step, geometry: ImageGeometry) -> str:
        a = self.answer_action(step)
        w, h = geometry.width, geometry.height
        args = to_mobile_use(a, w, h)
        if args is None:
            raise TemplateError(f"step {step.id}: field 'action.type': {a.type!r} has no mobile_use equivalent")
        for key in ("coordinate", "coordinate2"):
            if args.get(key):
                args[key] = point_in(tuple(args[key]), geometry, self.frame)  # type: ignore[arg-type]
        call = json.dumps({"name": MOBILE_USE_TOOL, "arguments": args}, ensure_ascii=False)
        desc = str(step.extra.get("action_description") or describe_action(a))
        thought = str(step.extra.get("thought") or desc)
        return f"Thought: {thought}\nAction: {desc}\n<tool_call>\n{call}\n</tool_call>"


QWEN3VL_MOBILE_USE = Qwen3VLMobileTemplate(
    name="qwen3vl-mobile-use", answer_format="tool_call", frame=Frame.GRID1000, actions=_MOBILE_USE_ACTIONS,
    description="Qwen3-VL mobile_use agent prompt (tool schema, screen size, 0-1000 grid).",
    factor=QWEN3VL_FACTOR)
#: The same prompt on the Qwen3-VL cookbook's 999 x 999 screen (QwenLM/Qwen3-VL @ 9658872
#: cookbooks/mobile_agent.ipynb: cell 7's system prompt states it, cell 4's ``rescale_coordinates`` maps it back):
#: the ``qwen3vl`` preset's navigation prompt, whose authors' reading maps as that cookbook does (core.authors).
QWEN3VL_MOBILE_AGENT = Qwen3VLMobileTemplate(
    name="qwen3vl-mobile-agent", answer_format="tool_call", frame=Frame.GRID999, actions=_MOBILE_USE_ACTIONS,
    description="Qwen3-VL mobile_use agent prompt on the cookbook's 999x999 screen (tool schema, 999 grid).",
    factor=QWEN3VL_FACTOR)


# ------------------------------------------------------------------------------------------------ registry

TEMPLATES: dict[str, PromptTemplate] = {t.name: t for t in (
    GUIR1_HIGH, GUIR1_LOW, GUIR1_GROUNDING, GUIR1_INFERENCE, GUIR1_ANDROIDCONTROL, GUIR1_GUIODYSSEY,
    GUIR1_GUIACT_WEB, GUIR1_OMNIACT_WEB, GUIR1_OMNIACT_DESKTOP, GUIR1_SCREENSPOT, GUI_DESKTOP, GUIR1_SHORT,
    QWEN3VL_MOBILE_USE, QWEN3VL_MOBILE_AGENT, *MODEL_TEMPLATES)}


def get_template(name: str) -> PromptTemplate:
    """The template called ``name``; ``ValueError`` listing the known names otherwise."""
    try:
        return TEMPLATES[name]
    except KeyError:
        raise ValueError(f"unknown prompt template {quoted(name)}; known: {', '.join(sorted(TEMPLATES))}") from None


def default_template_for(step: Step) -> str:
    """Template name for a step by ``task_type``, as GUI-R1 does: ``high`` -> guir1-high, ``grounding`` ->
    guir1-grounding, ``low`` -> guir1-low for clicks (GUI-R1's click-only prompt), guir1-high otherwise; desktop
    steps (``group == "desktop"``) that are not grounding get ``gui-desktop``, which has their mouse/keyboard actions."""
    if step.task_type == "grounding":
        return GUIR1_GROUNDING.name
    if step.group == "desktop":
        return GUI_DESKTOP.name
    if step.task_type == "low" and step.action.type == "click":
        return GUIR1_LOW.name
    return GUIR1_HIGH.name


__all__ = [
    "GuiR1Template", "IMAGE_PLACEHOLDER", "PromptTemplate", "Qwen3VLMobileTemplate", "ShortGuiR1Template", "TEMPLATES",
    "TemplateError",
    "default_template_for", "describe_action", "get_template", "mobile_use_tool", "render_guir1_history",
]
