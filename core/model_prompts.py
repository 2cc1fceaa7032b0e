"""Prompt templates of public GUI models, as their authors published them (used by :mod:`core.presets`;
:mod:`core.prompts` puts them in its registry).

Each template states where its text comes from (repository @ commit, file). The text is kept character for
character, quirks included; ``{instruction}`` / ``{history}`` are the only substitutions, and the screenshot goes
where the authors' message puts it (before or after the text). Answers are written (:meth:`gold_answer`, used by
the baseline backend and tests) in the model's own format and coordinate frame:

========================= ============== ===================================================================
format                    frame          example
========================= ============== ===================================================================
uitars (UI-TARS 1.0)      grid1000       ``Action: click(start_box='<|box_start|>(235,512)<|box_end|>')``
uitars (UI-TARS-1.5)      resized pixels ``Action: click(point='<point>120 33</point>')``
os_atlas                  grid1000       ``actions:\\nCLICK <point>[[950,87]]</point>``
qwen_grounding (2.5-VL)   resized pixels ``[{"bbox_2d": [x1, y1, x2, y2], "label": ..}]`` (centre)
qwen_grounding (3-VL)     grid1000       same JSON on the 0-1000 grid
point (UGround-V1)        grid1000       ``(523, 847)``
seeclick                  normalized     ``(0.49,0.40)``
pyautogui (Aguvis)        normalized     ``pyautogui.click(x=0.49, y=0.4)``
========================= ============== ===================================================================
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from core.actions import Action, scroll_to_swipe
from core.geometry import QWEN3VL_FACTOR, Frame, ImageGeometry
from core.prompt_base import IMAGE_PLACEHOLDER, PromptTemplate, TemplateError, qwen_history
from core.schema import Step

# (trailing spaces of the published prompts are kept: written as \x20 or in _UITARS_INTRO)
_UITARS_INTRO = ("You are a GUI agent. You are given a task and your action history, with screenshots. You need to "
                 "perform the next action to complete the task. \n")
#: UI-TARS 1.0 mobile prompt: bytedance/UI-TARS @ f0995c0 README.md "Prompt Templates" (prompt for mobile).
UITARS_MOBILE = _UITARS_INTRO + r"""
## Output Format
```\nThought: ...
Action: ...\n```

## Action Space
click(start_box='<|box_start|>(x1,y1)<|box_end|>')
long_press(start_box='<|box_start|>(x1,y1)<|box_end|>', time='')
type(content='')
scroll(direction='down or up or right or left')
open_app(app_name='')
navigate_back()
navigate_home()
WAIT()
finished() # Submit the task regardless of whether it succeeds or fails.

## Note
- Use English in `Action_Summary` part.

## User Instruction
"""
#: UI-TARS 1.0 computer prompt: bytedance/UI-TARS @ f0995c0 README.md "Prompt Templates" (prompt for computer).
UITARS_COMPUTER = _UITARS_INTRO + r"""
## Output Format
```\nThought: ...
Action: ...\n```

## Action Space

click(start_box='<|box_start|>(x1,y1)<|box_end|>')
left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')
right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
hotkey(key='')
type(content='') #If you want to submit your input, use \"\
\" at the end of `content`.
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')
wait() #Sleep for 5s and take a screenshot to check for any changes.
finished()
call_user() # Submit the task and call the user when the task is unsolvable, or when you need the user's help.


## Note
- Use Chinese in `Thought` part.
- Summarize your next action (with its target element) in one sentence in `Thought` part.

## User Instruction
"""
#: UI-TARS 1.0 grounding query: bytedance/UI-TARS @ 582f3a7 README_v1.md ("For single step grounding task or
#: inference on grounding dataset such as Seeclick"; the same text in README.md @ 9d3cc9c): the screenshot, then
#: this text + the instruction, in one user turn.
UITARS_GROUNDING = "Output only the coordinate of one point in your response. What element matches the following task: "

#: UI-TARS-1.5 prompts: bytedance/UI-TARS @ 582f3a7 codes/ui_tars/prompt.py (COMPUTER_USE_DOUBAO,
#: MOBILE_USE_DOUBAO, GROUNDING_DOUBAO; ``{language}`` = English).
UITARS15_COMPUTER = """You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space

click(point='<point>x1 y1</point>')
left_double(point='<point>x1 y1</point>')
right_single(point='<point>x1 y1</point>')
drag(start_point='<point>x1 y1</point>', end_point='<point>x2 y2</point>')
hotkey(key='ctrl c') # Split keys with a space and use lowercase. Also, do not use more than 3 keys in one hotkey action.
type(content='xxx') # Use escape characters \\', \\\", and \\n in content part to ensure we can parse the content in normal python string format. If you want to submit your input, use \\n at the end of content.\x20
scroll(point='<point>x1 y1</point>', direction='down or up or right or left') # Show more information on the `direction` side.
wait() #Sleep for 5s and take a screenshot to check for any changes.
finished(content='xxx') # Use escape characters \\', \\", and \\n in content part to ensure we can parse the content in normal python string format.


## Note
- Use English in `Thought` part.
- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.

## User Instruction
{instruction}
"""
UITARS15_MOBILE = """You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.\x20
## Output Format
```
Thought: ...
Action: ...
```
## Action Space

click(point='<point>x1 y1</point>')
long_press(point='<point>x1 y1</point>')
type(content='') #If you want to submit your input, use "\\n" at the end of `content`.
scroll(point='<point>x1 y1</point>', direction='down or up or right or left')
open_app(app_name=\'\')
drag(start_point='<point>x1 y1</point>', end_point='<point>x2 y2</point>')
press_home()
press_back()
finished(content='xxx') # Use escape characters \\', \\", and \\n in content part to ensure we can parse the content in normal python string format.


## Note
- Use English in `Thought` part.
- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.

## User Instruction
{instruction}
"""
UITARS15_GROUNDING = """You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task. \n\n## Output Format\n\nAction: ...\n\n\n## Action Space\nclick(point='<point>x1 y1</point>'')\n\n## User Instruction
{instruction}"""

#: OS-Atlas navigation prompt (AndroidControl): OS-Copilot/OS-Atlas eval/data/ac_test.jsonl, first human turn
#: (a copy is in ../shared/data/osatlas_eval); followed by "Screenshot: <image>\nTask: ..\nHistory: \n..\n".
OS_ATLAS_ANDROID = (
    '\n'
    'You are a foundational action model capable of automating tasks across various digital environments,'
    ' including desktop systems like Windows, macOS, and Linux, as well as mobile platforms such as Andro'
    'id and iOS. You also excel in web browser environments. You will interact with digital devices in a '
    'human-like manner: by reading screenshots, analyzing them, and taking appropriate actions.\n'
    '\n'
    'Your expertise covers two types of digital tasks:\n'
    '    - Grounding: Given a screenshot and a description, you assist users in locating elements mention'
    "ed. Sometimes, you must infer which elements best fit the description when they aren't explicitly st"
    'ated.\n'
    '    - Executable Language Grounding: With a screenshot and task instruction, your goal is to determi'
    'ne the executable actions needed to complete the task.\n'
    '\n'
    '\n'
    'You are now operating in Executable Language Grounding mode. Your goal is to help users accomplish t'
    'asks by suggesting executable actions that best fit their needs. Your skill set includes both basic '
    'and custom actions:\n'
    '\n'
    '1. Basic Actions\n'
    'Basic actions are standardized and available across all platforms. They provide essential functional'
    'ity and are defined with a specific format, ensuring consistency and reliability. \n'
    'Basic Action 1: CLICK \n'
    '    - purpose: Click at the specified position.\n'
    '    - format: CLICK <point>[[x-axis, y-axis]]</point>\n'
    '    - example usage: CLICK <point>[[101, 872]]</point>\n'
    '       \n'
    'Basic Action 2: TYPE\n'
    '    - purpose: Enter specified text at the designated location.\n'
    '    - format: TYPE [input text]\n'
    '    - example usage: TYPE [Shanghai shopping mall]\n'
    '\n'
    'Basic Action 3: SCROLL\n'
    '    - purpose: Scroll in the specified direction.\n'
    '    - format: SCROLL [direction (UP/DOWN/LEFT/RIGHT)]\n'
    '    - example usage: SCROLL [UP]\n'
    '    \n'
    '2.Custom Actions\n'
    "Custom actions are unique to each user's platform and environment. They allow for flexibility and ad"
    'aptability, enabling the model to support new and unseen actions defined by users. These actions ext'
    'end the functionality of the basic set, making the model more versatile and capable of handling spec'
    'ific tasks.\n'
    '\n'
    '\n'
    'Custom Action 1: PRESS_BACK\n'
    '    - purpose: Press a back button to navigate to the previous screen.\n'
    '    - format: PRESS_BACK\n'
    '    - example usage: PRESS_BACK\n'
    '\n'
    'Custom Action 2: PRESS_HOME\n'
    '    - purpose: Press a home button to navigate to the home page.\n'
    '    - format: PRESS_HOME\n'
    '    - example usage: PRESS_HOME\n'
    '\n'
    'Custom Action 3: OPEN_APP\n'
    '    - purpose: Open the specified application.\n'
    '    - format: OPEN_APP [app_name]\n'
    '    - example usage: OPEN_APP [Google Chrome]\n'
    '\n'
    'Custom Action 4: WAIT\n'
    '    - purpose: Wait for the screen to load.\n'
    '    - format: WAIT\n'
    '    - example usage: WAIT\n'
    '\n'
    'Custom Action 5: COMPLETE\n'
    '    - purpose: Indicate the task is finished.\n'
    '    - format: COMPLETE\n'
    '    - example usage: COMPLETE\n'
    '\n'
    '\n'
    'In most cases, task instructions are high-level and abstract. Carefully read the instruction and act'
    'ion history, then perform reasoning to determine the most appropriate next action. Ensure you strict'
    'ly generate two sections: Thoughts and Actions.\n'
    'Thoughts: Clearly outline your reasoning process for current step.\n'
    'Actions: Specify the actual actions you will take based on your reasoning.\n'
    '\n'
    'Your current task instruction, action history, and associated screenshot are as follows:\n'
)
#: OS-Atlas-Base grounding query: OS-Copilot/OS-Atlas @ 49ba04b README.md (OS-Atlas-Base-7B example).
OS_ATLAS_GROUNDING = ('In this UI screenshot, what is the position of the element corresponding to the command '
                      '"{instruction}" (with bbox)?')
#: SeeClick ScreenSpot query: njucckevin/SeeClick @ 661ff1b pretrain/screenspot_test.py (``prompt_origin``).
SEECLICK_GROUNDING = ('In this UI screenshot, what is the position of the element corresponding to the command '
                      '"{instruction}" (with point)?')
#: UGround-V1 query: OSU-NLP-Group/UGround @ 6173b77 grounding/uground_qwen2vl.py (``prepare_prompt``).
UGROUND_GROUNDING = """
Your task is to help the user identify the precise coordinates (x, y) of a specific area/element/object on the screen based on a description.
Description: {instruction}
Answer:"""
#: Qwen2.5-VL / Qwen3-VL grounding query: the pattern of the Qwen cookbook examples
#: ("Locate the top right brown cake, output its bbox coordinates using JSON format.", QwenLM/Qwen2.5-VL
#: cookbooks/spatial_understanding.ipynb).
QWEN_GROUNDING = "Locate {instruction}, output its bbox coordinates using JSON format."
#: Aguvis grounding: xlang-ai/aguvis @ c711282 src/aguvis/constants.py (grounding_system_message,
#: user_instruction with previous actions 'None').
AGUVIS_GROUNDING_SYSTEM = ("You are a GUI agent. You are given a task and a screenshot of the screen. You need to "
                           "perform a series of pyautogui actions to complete the task.")
AGUVIS_USER = """Please generate the next move according to the ui screenshot, instruction and previous actions.

Instruction: {instruction}

Previous actions:
{history}
"""
#: Aguvis mobile agent system message: xlang-ai/aguvis @ c711282 src/aguvis/constants.py ``agent_system_message``
#: (the grounding sentence, then one ``- <json.dumps(function)>`` line per mobile plugin function, in this order).
#: ``src/aguvis/serve/cli.py`` sends it for the agent modes with the same user text as grounding (screenshot first;
#: previous actions as "Step 1: ..." lines, "None" when there are none).
AGUVIS_MOBILE_FUNCTIONS: tuple[dict, ...] = (
    {"name": "mobile.swipe", "description": "Swipe on the screen", "parameters": {
        "type": "object", "properties": {
            "from_coord": {"type": "array", "items": {"type": "number"},
                           "description": "The starting coordinates of the swipe"},
            "to_coord": {"type": "array", "items": {"type": "number"},
                         "description": "The ending coordinates of the swipe"}},
        "required": ["from_coord", "to_coord"]}},
    {"name": "mobile.home", "description": "Press the home button"},
    {"name": "mobile.back", "description": "Press the back button"},
    {"name": "mobile.wait", "description": "wait for the change to happen", "parameters": {
        "type": "object", "properties": {"seconds": {"type": "number", "description": "The seconds to wait"}},
        "required": ["seconds"]}},
    {"name": "mobile.long_press", "description": "Long press on the screen", "parameters": {
        "type": "object", "properties": {
            "x": {"type": "number", "description": "The x coordinate of the long press"},
            "y": {"type": "number", "description": "The y coordinate of the long press"}},
        "required": ["x", "y"]}},
    {"name": "mobile.open_app", "description": "Open an app on the device", "parameters": {
        "type": "object", "properties": {
            "app_name": {"type": "string", "description": "The name of the app to open"}},
        "required": ["app_name"]}},
)
AGUVIS_AGENT_SYSTEM = (AGUVIS_GROUNDING_SYSTEM + "\n\nYou have access to the following functions:\n"
                       + "".join(f"- {json.dumps(f)}\n" for f in AGUVIS_MOBILE_FUNCTIONS))


_FIELD = re.compile(r"\{(instruction|history)\}")


def _fill(text: str, step: Step) -> str:
    """``text`` with ``{instruction}`` / ``{history}`` replaced in one pass (an instruction holding "{history}" stays
    as written)."""
    values = {"instruction": step.instruction, "history": qwen_history(step)}
    return _FIELD.sub(lambda m: values[m.group(1)], text)


@dataclass(frozen=True)
class ModelPromptTemplate(PromptTemplate):
    """A public model's prompt: optional ``system`` text, ``user`` text (``{instruction}`` / ``{history}``
    substituted), the screenshot where ``user`` holds ``<image>``, else before the text (``image_first``) or after
    it."""

    user: str = ""
    system: str | None = None
    image_first: bool = True
    #: UI-TARS-1.5 answers ``<point>x y</point>``, 1.0 ``<|box_start|>(x,y)<|box_end|>``.
    point_style: str = "box"

    def render(self, step: Step, geometry: ImageGeometry) -> list[dict[str, str]]:
        text = _fill(self.user, step)
        if IMAGE_PLACEHOLDER in self.user:  # the prompt places the screenshot itself (OS-Atlas "Screenshot: <image>")
            content = text
        else:
            content = f"{IMAGE_PLACEHOLDER}{text}" if self.image_first else f"{text}{IMAGE_PLACEHOLDER}"
        messages = [{"role": "system", "content": self.system}] if self.system else []
        return [*messages, {"role": "user", "content": content}]

    def _xy(self, p: tuple[float, float], geometry: ImageGeometry) -> tuple[str, str]:
        x, y = geometry.point(p, Frame.ORIGINAL, self.frame)
        if self.frame is Frame.NORMALIZED:
            return f"{x:.4f}".rstrip("0").rstrip("."), f"{y:.4f}".rstrip("0").rstrip(".")
        return str(int(round(x))), str(int(round(y)))

    def gold_answer(self, step: Step, geometry: ImageGeometry) -> str:
        a = self.answer_action(step)
        writer = _WRITERS[self.answer_format]
        answer = writer(self, a, geometry)
        if answer is None:
            raise TemplateError(f"step {step.id}: field 'action.type': template {self.name!r} ({self.answer_format} "
                                f"answers) cannot express {a.type!r}")
        return answer


def _needs_point(t: ModelPromptTemplate, a: Action, geometry: ImageGeometry) -> tuple[str, str] | None:
    return t._xy(a.point, geometry) if a.point is not None else None


def _write_uitars(t: ModelPromptTemplate, a: Action, geometry: ImageGeometry) -> str | None:
    def box(p: tuple[float, float]) -> str:
        x, y = t._xy(p, geometry)
        return f"<point>{x} {y}</point>" if t.point_style == "point" else f"<|box_start|>({x},{y})<|box_end|>"

    key = "point" if t.point_style == "point" else "start_box"
    end_key = "end_point" if t.point_style == "point" else "end_box"
    names = {"click": "click", "doubleclick": "left_double", "rightclick": "right_single", "long_press": "long_press",
             "moveto": "hover"}
    if a.type in names and a.point is not None:
        call = f"{names[a.type]}({key}='{box(a.point)}')"
    elif a.type == "drag" and a.point is not None and a.end_point is not None:
        call = f"drag({'start_point' if t.point_style == 'point' else 'start_box'}='{box(a.point)}', " \
               f"{end_key}='{box(a.end_point)}')"
    elif a.type == "scroll" and a.direction:
        where = f"{key}='{box(a.point)}', " if a.point is not None else ""
        call = f"scroll({where}direction='{a.direction}')"
    elif a.type == "type" and a.text:
        call = f"type(content={a.text!r})"
    elif a.type == "hotkey" and a.text:
        call = f"hotkey(key={' '.join(a.text.split('+'))!r})"
    elif a.type in ("press_enter", "enter"):
        call = "hotkey(key='enter')"
    elif a.type == "open_app" and a.text:
        call = f"open_app(app_name={a.text!r})"
    elif a.type in ("press_home", "press_back", "wait"):
        call = f"{a.type}()"
    elif a.type == "complete":
        call = "finished()"
    elif a.type == "impossible":
        call = "call_user()"
    else:
        return None
    return f"Action: {call}" if "grounding" in t.name else f"Thought: {a.type}\nAction: {call}"


def _write_os_atlas(t: ModelPromptTemplate, a: Action, geometry: ImageGeometry) -> str | None:
    xy = _needs_point(t, a, geometry)
    if a.type in ("click", "long_press") and xy:
        line = f"{a.type.upper()} <point>[[{xy[0]},{xy[1]}]]</point>"
    elif a.type in ("type", "open_app") and a.text:
        line = f"{a.type.upper()} [{a.text}]"
    elif a.type == "scroll" and a.direction:
        line = f"SCROLL [{a.direction.upper()}]"
    elif a.type in ("press_back", "press_home", "press_recent", "press_enter", "wait", "complete", "impossible"):
        line = a.type.upper()
    else:
        return None
    return f"thoughts:\n{a.type}\nactions:\n{line}"


def _write_qwen_grounding(t: ModelPromptTemplate, a: Action, geometry: ImageGeometry) -> str | None:
    xy = _needs_point(t, a, geometry)
    if a.type != "click" or xy is None:
        return None
    return json.dumps([{"point_2d": [int(xy[0]), int(xy[1])], "label": "target"}])


def _write_point(t: ModelPromptTemplate, a: Action, geometry: ImageGeometry) -> str | None:
    xy = _needs_point(t, a, geometry)
    if a.type != "click" or xy is None:
        return None
    return f"({xy[0]}, {xy[1]})" if t.answer_format == "point" else f"({xy[0]},{xy[1]})"


def _write_pyautogui(t: ModelPromptTemplate, a: Action, geometry: ImageGeometry) -> str | None:
    xy = _needs_point(t, a, geometry)
    calls = {"click": "pyautogui.click", "doubleclick": "pyautogui.doubleClick", "rightclick": "pyautogui.rightClick",
             "moveto": "pyautogui.moveTo", "long_press": "mobile.long_press"}
    if a.type in calls and xy:
        return f"{calls[a.type]}(x={xy[0]}, y={xy[1]})"
    if a.type == "type" and a.text:
        return f"pyautogui.write(message={a.text!r})"
    if a.type == "open_app" and a.text:
        return f"mobile.open_app(app_name={a.text!r})"
    if a.type == "press_home":
        return "mobile.home()"
    if a.type == "press_back":
        return "mobile.back()"
    if a.type == "scroll" and a.direction:  # a swipe of the finger; the content moves the other way
        start, end = (t._xy(p, geometry) for p in scroll_to_swipe(a.direction, geometry.width, geometry.height))
        return f"mobile.swipe(from_coord=[{start[0]}, {start[1]}], to_coord=[{end[0]}, {end[1]}])"
    if a.type == "wait":
        return f"mobile.wait(seconds={a.duration or 2:g})"
    if a.type in ("complete", "impossible"):
        return f"terminate(status={'success' if a.type == 'complete' else 'failure'!r})"
    return None


_WRITERS = {"uitars": _write_uitars, "os_atlas": _write_os_atlas, "qwen_grounding": _write_qwen_grounding,
            "point": _write_point, "seeclick": _write_point, "pyautogui": _write_pyautogui}

_GROUNDING = ("click",)
_UITARS_MOBILE_ACTIONS = ("click", "long_press", "type", "scroll", "open_app", "press_back", "press_home", "wait",
                          "complete")
_UITARS_COMPUTER_ACTIONS = ("click", "doubleclick", "rightclick", "drag", "hotkey", "type", "scroll", "wait",
                            "complete", "impossible")
#: Aguvis mobile: pyautogui.click / write plus the mobile.* functions of its agent system message.
_AGUVIS_MOBILE_ACTIONS = ("click", "long_press", "type", "scroll", "open_app", "press_back", "press_home", "wait",
                          "complete")
_OS_ATLAS_ACTIONS = ("click", "type", "scroll", "press_back", "press_home", "open_app", "wait", "complete",
                     "long_press")

# UI-TARS (1.0 and 1.5) and OS-Atlas-Base-7B / UGround-V1 / Aguvis are Qwen2-VL or Qwen2.5-VL models: factor 28.
# UI-TARS' own resize: codes/ui_tars/action_parser.py MIN_PIXELS = 100*28*28, MAX_PIXELS = 16384*28*28.
UITARS_MIN_PIXELS = 100 * 28 * 28
UITARS_MAX_PIXELS = 16384 * 28 * 28


def _t(name: str, fmt: str, frame: Frame, actions: tuple[str, ...], description: str, user: str,
       **kw) -> ModelPromptTemplate:
    return ModelPromptTemplate(name=name, answer_format=fmt, frame=frame, actions=actions, description=description,
                               user=user, **kw)


_UITARS = {"min_pixels": UITARS_MIN_PIXELS, "max_pixels": UITARS_MAX_PIXELS}
MODEL_TEMPLATES: tuple[ModelPromptTemplate, ...] = (
    _t("uitars-mobile", "uitars", Frame.GRID1000, _UITARS_MOBILE_ACTIONS,
       "UI-TARS 1.0 mobile prompt (bytedance/UI-TARS @ f0995c0 README.md).", UITARS_MOBILE + "{instruction}",
       image_first=False, **_UITARS),
    _t("uitars-computer", "uitars", Frame.GRID1000, _UITARS_COMPUTER_ACTIONS,
       "UI-TARS 1.0 computer prompt (bytedance/UI-TARS @ f0995c0 README.md).", UITARS_COMPUTER + "{instruction}",
       image_first=False, **_UITARS),
    _t("uitars-grounding", "uitars", Frame.GRID1000, _GROUNDING,
       "UI-TARS 1.0 grounding query (bytedance/UI-TARS @ 582f3a7 README_v1.md, single-step grounding).",
       UITARS_GROUNDING + "{instruction}", **_UITARS),
    _t("uitars15-mobile", "uitars", Frame.RESIZED, _UITARS_MOBILE_ACTIONS,
       "UI-TARS-1.5 MOBILE_USE_DOUBAO (bytedance/UI-TARS @ 582f3a7 codes/ui_tars/prompt.py).", UITARS15_MOBILE,
       image_first=False, point_style="point", **_UITARS),
    _t("uitars15-computer", "uitars", Frame.RESIZED, _UITARS_COMPUTER_ACTIONS,
       "UI-TARS-1.5 COMPUTER_USE_DOUBAO (bytedance/UI-TARS @ 582f3a7 codes/ui_tars/prompt.py).", UITARS15_COMPUTER,
       image_first=False, point_style="point", **_UITARS),
    _t("uitars15-grounding", "uitars", Frame.RESIZED, _GROUNDING,
       "UI-TARS-1.5 GROUNDING_DOUBAO (bytedance/UI-TARS @ 582f3a7 codes/ui_tars/prompt.py).", UITARS15_GROUNDING,
       image_first=False, point_style="point", **_UITARS),
    _t("os-atlas-android", "os_atlas", Frame.GRID1000, _OS_ATLAS_ACTIONS,
       "OS-Atlas navigation prompt for Android (OS-Copilot/OS-Atlas eval/data/ac_test.jsonl).",
       OS_ATLAS_ANDROID + "Screenshot: " + IMAGE_PLACEHOLDER + "\nTask: {instruction}\nHistory: \n{history}\n"),
    _t("os-atlas-grounding", "os_atlas", Frame.GRID1000, _GROUNDING,
       "OS-Atlas-Base grounding query (OS-Copilot/OS-Atlas @ 49ba04b README.md).", OS_ATLAS_GROUNDING),
    _t("qwen25vl-grounding", "qwen_grounding", Frame.RESIZED, _GROUNDING,
       "Qwen2.5-VL grounding query (Qwen cookbook pattern), bbox_2d in resized pixels.", QWEN_GROUNDING),
    _t("qwen3vl-grounding", "qwen_grounding", Frame.GRID1000, _GROUNDING,
       "Qwen3-VL grounding query (Qwen cookbook pattern), bbox_2d on the 0-1000 grid.", QWEN_GROUNDING,
       factor=QWEN3VL_FACTOR),
    _t("uground-grounding", "point", Frame.GRID1000, _GROUNDING,
       "UGround-V1 query (OSU-NLP-Group/UGround @ 6173b77 grounding/uground_qwen2vl.py).", UGROUND_GROUNDING),
    _t("seeclick-grounding", "seeclick", Frame.NORMALIZED, _GROUNDING,
       "SeeClick ScreenSpot query (njucckevin/SeeClick @ 661ff1b pretrain/screenspot_test.py).", SEECLICK_GROUNDING),
    _t("aguvis-grounding", "pyautogui", Frame.NORMALIZED, _GROUNDING,
       "Aguvis grounding system message + user instruction (xlang-ai/aguvis @ c711282 src/aguvis/constants.py).",
       AGUVIS_USER, system=AGUVIS_GROUNDING_SYSTEM),
    _t("aguvis-mobile", "pyautogui", Frame.NORMALIZED, _AGUVIS_MOBILE_ACTIONS,
       "Aguvis mobile agent system message (plugin functions) + user instruction with previous actions "
       "(xlang-ai/aguvis @ c711282 src/aguvis/constants.py, src/aguvis/serve/cli.py).",
       AGUVIS_USER, system=AGUVIS_AGENT_SYSTEM),
)

__all__ = ["MODEL_TEMPLATES", "ModelPromptTemplate", "UITARS_MAX_PIXELS", "UITARS_MIN_PIXELS"]
