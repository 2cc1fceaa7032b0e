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
box (GUI-G2, UI-Venus 1)  resized pixels ``[850,1149,967,1177]`` (centre)
venus (UI-Venus-1.5)      grid1000       ``[523,847]``; refusal ``[-1,-1]``
point (GTA1)              resized pixels ``(523,847)``
infigui (InfiGUI-G1)      resized pixels ``<think>..</think>[{"point_2d": [x, y]}, ...]`` (first); refusal ``[]``
tool_call (GUI-Owl-1.5)   grid1000       ``<tool_call>`` computer_use left_click; refusal terminate failure
mai_ui (MAI-UI)           grid1000       ``<grounding_think>..</grounding_think><answer>{"coordinate": [x,y]}</answer>``
gelab (Step-GUI)          grid1000       ``<THINK>..</THINK>explain:..\taction:CLICK\tpoint:x,y``; refusal ABORT
========================= ============== ===================================================================
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from core.actions import Action, scroll_to_swipe
from core.geometry import QWEN3VL_FACTOR, QWEN25VL_FACTOR, QWEN25VL_MAX_PIXELS, QWEN25VL_MIN_PIXELS, Frame, ImageGeometry
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


# ------------------------------------------------------------------ 2025-26 grounding models (docs/presets.md)
#: GUI-G2-7B grounding query: ZJU-REAL/GUI-G2 @ 5c5c365 README.md inference example (``prompt_origin``); the
#: screenshot first, no system message. UI-Venus-Ground-7B (1.0) sends the same text:
#: inclusionAI/UI-Venus @ fc7670d models/grounding/ui_venus_ground_7b.py.
GUIG2_GROUNDING = "Outline the position corresponding to the instruction: {instruction}. The output should be only [x1,y1,x2,y2]."
#: UI-Venus-1.5 grounding query with its refusal sentence (the default, ``do_not_use_refusal=False``):
#: inclusionAI/UI-Venus @ c3a1442 models/grounding/eval_screenspot_pro.py; the script first drops one final "."
#: of the instruction.
UIVENUS15_GROUNDING = ("Output the center point of the position corresponding to the following instruction: \n"
                       "{instruction}. \n\nThe output should just be the coordinates of a point, in the format [x,y]. "
                       "Additionally, if the task is infeasible (e.g., the task is not related to the image), the "
                       "output should be [-1,-1].")
#: GTA1 system message (``SYSTEM_PROMPT.strip()``; ``{height}`` / ``{width}`` = the resized image):
#: Yan98/GTA1 @ 81f0c4c README.md "Inference" (GTA1-7B-2507; the README links the Salesforce/GTA1-* models, and no
#: Salesforce/GTA1 repository could be read here).
GTA1_SYSTEM = (
    "You are an expert UI element locator. Given a GUI image and a user's element description, provide the "
    'coordinates of the specified element as a single (x,y) point. The image resolution is height {height} '
    'and width {width}. For elements with area, return the center point.\n'
    '\n'
    'Output the coordinate pair exactly:\n'
    '(x,y)'
)
#: InfiGUI-G1 system message (``think_mode`` 1, eval.py's default) and user text (``<image>`` first; the resized
#: width x height): InfiXAI/InfiGUI-G1 @ 22208e4 eval/prompts.py ``InfiguiG1Prompt.generate_prompt``.
INFIGUI_G1_SYSTEM = ("You FIRST think about the reasoning process as an internal monologue and then provide the final "
                     "answer.\nThe reasoning process MUST BE enclosed within <think> </think> tags.")
INFIGUI_G1_USER = (IMAGE_PLACEHOLDER + "The screen's resolution is {width}x{height}.\nLocate the UI element(s) for "
                   '"{instruction}", output the coordinates using JSON format: [{"point_2d": [x, y]}, ...]')
#: GUI-Owl-1.5 grounding system message (``only_two_action_system_prompt``) and the refusal sentence its OSWorld-G
#: class appends after a newline (``infesible_prefix``): X-PLUG/MobileAgent @ 11cea57
#: Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py; the user turn is the screenshot, then the
#: instruction.
GUIOWL15_SYSTEM = (
    '# Tools\n'
    '\n'
    'You may call one or more functions to assist with the user query.\n'
    '\n'
    'You are provided with function signatures within <tools></tools> XML tags:\n'
    '<tools>\n'
    '{"type": "function", "function": {"name": "computer_use", "description": "Use a mouse to interact with'
    ' a computer.\n'
    "* The screen's resolution is 1000x1000.\n"
    '* Make sure to click any buttons, links, icons, etc with the cursor tip in the center of the element. '
    "Don't click boxes on their edges unless asked.\n"
    "* don't use any other computer use tool like type, key, scroll, left_click_drag and so on.\n"
    "* you can only use the left_click and mouse_move action to interact with the computer. if you can't fi"
    'nd the element, you should terminate the task and report the failure.", "parameters": {"properties": {'
    '"action": {"description": "The action to perform. The available actions are:\n'
    '* `mouse_move`: Move the cursor to a specified (x, y) pixel coordinate on the screen.\n'
    '* `left_click`: Click the left mouse button with coordinate (x, y) pixel coordinate on the screen.", "'
    'enum": ["mouse_move", "left_click"], "type": "string"}, "coordinate": {"description": "(x, y): The x ('
    'pixels from the left edge) and y (pixels from the top edge) coordinates to move the mouse to. Required'
    ' only by `action=mouse_move` and `action=left_click`.", "type": "array"}}, "required": ["action"], "ty'
    'pe": "object"}}}\n'
    '</tools>\n'
    '\n'
    'For each function call, return a json object with function name and arguments within <tool_call></tool'
    '_call> XML tags:\n'
    '<tool_call>\n'
    '{"name": <function-name>, "arguments": <args-json-object>}\n'
    '</tool_call>\n'
)
GUIOWL15_INFEASIBLE = (
    'Additionally, if you think the task is infeasible (e.g., the task is not related to the image), return'
    ' <tool_call>\n'
    '{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}\n'
    '</tool_call>'
)
#: MAI-UI grounding system message: Tongyi-MAI/MAI-UI @ 4dd07b9 evaluation/grounding/eval_server.py
#: ``SYSTEM_PROMPT`` (the same text in models/MAI_UI.py); the user turn is the instruction + "\n", then the
#: screenshot.
MAI_UI_SYSTEM = (
    'You are a GUI grounding agent. \n'
    '## Task\n'
    "Given a screenshot and the user's grounding instruction. Your task is to accurately locate a UI elemen"
    "t based on the user's instructions.\n"
    "First, you should carefully examine the screenshot and analyze the user's instructions,  translate the"
    " user's instruction into a effective reasoning process, and then provide the final coordinate.\n"
    '## Output Format\n'
    'Return a json object with a reasoning process in <grounding_think></grounding_think> tags, a [x,y] for'
    'mat coordinate within <answer></answer> XML tags:\n'
    '<grounding_think>...</grounding_think>\n'
    '<answer>\n'
    '{"coordinate": [x,y]}\n'
    '</answer>\n'
    '## Input instruction\n'
)
#: GELab-Zero (Step-GUI) mobile agent prompt, the only prompt its repository publishes: stepfun-ai/gelab-zero @
#: 19465cf copilot_tools/parser_0920_summary.py (``task_define_prompt`` + ``make_status_prompt`` with no history,
#: as ``env2messages4ask`` sends them: one user turn, text, screenshot, text).
GELAB_TASK = (
    '你是一个手机 GUI-Agent 操作专家，你需要根据用户下发的任务、手机屏幕截图和交互操作的历史记录，借助既定的动作空间与手机进行交互，从而完成用户的任务。\n'
    '请牢记，手机屏幕坐标系以左上角为原点，x轴向右，y轴向下，取值范围均为 0-1000。\n'
    '\n'
    '在 Android 手机的场景下，你的动作空间包含以下9类操作，所有输出都必须遵守对应的参数要求：\n'
    '1. CLICK：点击手机屏幕坐标，需包含点击的坐标位置 point。\n'
    '例如：action:CLICK\tpoint:x,y\n'
    '2. TYPE：在手机输入框中输入文字，需包含输入内容 value、输入框的位置 point。\n'
    '例如：action:TYPE\tvalue:输入内容\tpoint:x,y\n'
    '3. COMPLETE：任务完成后向用户报告结果，需包含报告的内容 value。\n'
    '例如：action:COMPLETE\treturn:完成任务后向用户报告的内容\n'
    '4. WAIT：等待指定时长，需包含等待时间 value（秒）。\n'
    '例如：action:WAIT\tvalue:等待时间\n'
    '5. AWAKE：唤醒指定应用，需包含唤醒的应用名称 value。\n'
    '例如：action:AWAKE\tvalue:应用名称\n'
    '6. INFO：询问用户问题或详细信息，需包含提问内容 value。\n'
    '例如：action:INFO\tvalue:提问内容\n'
    '7. ABORT：终止当前任务，仅在当前任务无法继续执行时使用，需包含 value 说明原因。\n'
    '例如：action:ABORT\tvalue:终止任务的原因\n'
    '8. SLIDE：在手机屏幕上滑动，滑动的方向不限，需包含起点 point1 和终点 point2。\n'
    '例如：action:SLIDE\tpoint1:x1,y1\tpoint2:x2,y2\n'
    '9. LONGPRESS：长按手机屏幕坐标，需包含长按的坐标位置 point。\n'
    '例如：action:LONGPRESS\tpoint:x,y\n'
)
GELAB_STATUS = (
    '\n'
    '已知用户任务为：{instruction}\n'
    '已知已经执行过的历史动作如下：暂无历史操作\n'
    '当前手机屏幕截图如下：\n'
    + IMAGE_PLACEHOLDER + '\n'
    '在执行操作之前，请务必回顾你的历史操作记录和限定的动作空间，先进行思考和解释然后输出动作空间和对应的参数：\n'
    '1. 思考（THINK）：在 <THINK> 和 </THINK> 标签之间。\n'
    '2. 解释（explain）：在动作格式中，使用 explain: 开头，简要说明当前动作的目的和执行方式。\n'
    '在执行完操作后，请输出执行完当前步骤后的新历史总结。\n'
    '输出格式示例：\n'
    '<THINK> 思考的内容 </THINK>\n'
    'explain:解释的内容\taction:动作空间和对应的参数\tsummary:执行完当前步骤后的新历史总结\n'
)


_FIELD = re.compile(r"\{(instruction|history|width|height)\}")


def _fill(text: str, step: Step, geometry: ImageGeometry, *, drop_final_period: bool = False) -> str:
    """``text`` with ``{instruction}`` / ``{history}`` / ``{width}`` / ``{height}`` (the resized image, pixels)
    replaced in one pass (an instruction holding "{history}" stays as written); ``drop_final_period``: one final "."
    of the instruction is dropped first (UI-Venus-1.5)."""
    instruction = step.instruction
    if drop_final_period and instruction.endswith("."):
        instruction = instruction[:-1]
    values = {"instruction": instruction, "history": qwen_history(step), "width": str(geometry.resized_width),
              "height": str(geometry.resized_height)}
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
    #: UI-Venus-1.5's script drops one final "." of the instruction before filling its prompt.
    drop_final_period: bool = False

    @property
    def answer_tool(self) -> str | None:
        return GROUNDING_TOOL if self.answer_format == "tool_call" else None

    def render(self, step: Step, geometry: ImageGeometry) -> list[dict[str, str]]:
        text = _fill(self.user, step, geometry, drop_final_period=self.drop_final_period)
        if IMAGE_PLACEHOLDER in self.user:  # the prompt places the screenshot itself (OS-Atlas "Screenshot: <image>")
            content = text
        else:
            content = f"{IMAGE_PLACEHOLDER}{text}" if self.image_first else f"{text}{IMAGE_PLACEHOLDER}"
        messages = [{"role": "system", "content": _fill(self.system, step, geometry)}] if self.system else []
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


#: The tool GUI-Owl-1.5's grounding answers call (its system message's only tool; ``tool_call`` format).
GROUNDING_TOOL = "computer_use"
#: The 2025-26 grounding models' answers as each writes them: (a click at {x}, {y} in the template's frame, the
#: refusal or None where the model has none). Parsed back by the format of the same name in :mod:`core.parsers`.
_GROUNDING_ANSWERS: dict[str, tuple[str, str | None]] = {
    "box": ("[{x},{y},{x},{y}]", None),
    "venus": ("[{x},{y}]", "[-1,-1]"),
    "infigui": ('<think>target</think>\n[{{"point_2d": [{x}, {y}]}}]', "<think>absent</think>\n[]"),
    "mai_ui": ('<grounding_think>target</grounding_think>\n<answer>\n{{"coordinate": [{x},{y}]}}\n</answer>', None),
    "gelab": ("<THINK> target </THINK>\nexplain:target\taction:CLICK\tpoint:{x},{y}\tsummary:target",
              "<THINK> absent </THINK>\nexplain:absent\taction:ABORT\tvalue:absent\tsummary:absent"),
    "tool_call": ('<tool_call>\n{{"name": "' + GROUNDING_TOOL + '", "arguments": {{"action": "left_click", '
                  '"coordinate": [{x}, {y}]}}}}\n</tool_call>',
                  '<tool_call>\n{"name": "' + GROUNDING_TOOL + '", "arguments": {"action": "terminate", "status": '
                  '"failure"}}\n</tool_call>'),
}


def _write_grounding(t: ModelPromptTemplate, a: Action, geometry: ImageGeometry) -> str | None:
    click, refusal = _GROUNDING_ANSWERS[t.answer_format]
    if a.type == "impossible":
        return refusal
    xy = _needs_point(t, a, geometry)
    return click.format(x=xy[0], y=xy[1]) if a.type == "click" and xy is not None else None


_WRITERS = {"uitars": _write_uitars, "os_atlas": _write_os_atlas, "qwen_grounding": _write_qwen_grounding,
            "point": _write_point, "seeclick": _write_point, "pyautogui": _write_pyautogui,
            **dict.fromkeys(_GROUNDING_ANSWERS, _write_grounding)}

_GROUNDING = ("click",)
#: A grounding prompt that tells the model how to say the target is not there.
_REFUSING = ("click", "impossible")
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
#: (min_pixels, max_pixels) of the 2025-26 grounding models' resize; core.presets names the source of each.
UIVENUS_PIXELS = (2_000_000, 4_800_000)
UIVENUS15_PIXELS = (3136, 12_845_056)
GTA1_PIXELS = (3136, 4096 * 2160)
INFIGUI_G1_PIXELS = (3136, 5600 * 28 * 28)
GUIOWL15_PIXELS = (196 * 32 * 32, 9800 * 32 * 32)
MAI_UI_PIXELS = (16 * 16 * 4, 6_553_600)
QWEN3VL_PROCESSOR_PIXELS = (65_536, 16_777_216)


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
    *(_t(name, fmt, frame, actions, description, user, min_pixels=pixels[0], max_pixels=pixels[1],
         factor=QWEN3VL_FACTOR if frame is Frame.GRID1000 else QWEN25VL_FACTOR, **kw)
      for name, fmt, frame, actions, pixels, description, user, kw in (
        ("guig2-grounding", "box", Frame.RESIZED, _GROUNDING, (QWEN25VL_MIN_PIXELS, QWEN25VL_MAX_PIXELS),
         "GUI-G2-7B grounding query (ZJU-REAL/GUI-G2 @ 5c5c365 README.md), [x1,y1,x2,y2] in resized pixels.",
         GUIG2_GROUNDING, {}),
        ("uivenus-grounding", "box", Frame.RESIZED, _GROUNDING, UIVENUS_PIXELS,
         "UI-Venus-Ground-7B query (inclusionAI/UI-Venus @ fc7670d models/grounding/ui_venus_ground_7b.py).",
         GUIG2_GROUNDING, {}),
        ("uivenus15-grounding", "venus", Frame.GRID1000, _REFUSING, UIVENUS15_PIXELS,
         "UI-Venus-1.5 query with its [-1,-1] refusal (inclusionAI/UI-Venus @ c3a1442 "
         "models/grounding/eval_screenspot_pro.py).", UIVENUS15_GROUNDING, {"drop_final_period": True}),
        ("gta1-grounding", "point", Frame.RESIZED, _GROUNDING, GTA1_PIXELS,
         "GTA1 system message with the resized size, then the screenshot and the instruction (Yan98/GTA1 @ "
         "81f0c4c README.md).", "{instruction}", {"system": GTA1_SYSTEM}),
        ("infigui-g1-grounding", "infigui", Frame.RESIZED, _REFUSING, INFIGUI_G1_PIXELS,
         "InfiGUI-G1 thinking system message and point_2d query (InfiXAI/InfiGUI-G1 @ 22208e4 eval/prompts.py).",
         INFIGUI_G1_USER, {"system": INFIGUI_G1_SYSTEM}),
        ("guiowl15-grounding", "tool_call", Frame.GRID1000, _GROUNDING, GUIOWL15_PIXELS,
         "GUI-Owl-1.5 computer_use tool system message (X-PLUG/MobileAgent @ 11cea57 "
         "Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py).", "{instruction}",
         {"system": GUIOWL15_SYSTEM}),
        ("guiowl15-grounding-refusal", "tool_call", Frame.GRID1000, _REFUSING, GUIOWL15_PIXELS,
         "GUI-Owl-1.5 system message + its OSWorld-G refusal sentence (terminate, status failure; same file).",
         "{instruction}", {"system": GUIOWL15_SYSTEM + "\n" + GUIOWL15_INFEASIBLE}),
        ("mai-ui-grounding", "mai_ui", Frame.GRID1000, _GROUNDING, MAI_UI_PIXELS,
         "MAI-UI grounding system message; the instruction + newline, then the screenshot (Tongyi-MAI/MAI-UI @ "
         "4dd07b9 evaluation/grounding/eval_server.py).", "{instruction}\n",
         {"system": MAI_UI_SYSTEM, "image_first": False}),
        ("gelab-zero-mobile", "gelab", Frame.GRID1000, _REFUSING, QWEN3VL_PROCESSOR_PIXELS,
         "GELab-Zero mobile agent prompt with the instruction as the task (stepfun-ai/gelab-zero @ 19465cf "
         "copilot_tools/parser_0920_summary.py).", GELAB_TASK + GELAB_STATUS, {}),
    )),
)

__all__ = ["GTA1_PIXELS", "GUIOWL15_PIXELS", "INFIGUI_G1_PIXELS", "MAI_UI_PIXELS", "MODEL_TEMPLATES", "ModelPromptTemplate",
           "QWEN3VL_PROCESSOR_PIXELS", "UITARS_MAX_PIXELS", "UITARS_MIN_PIXELS", "UIVENUS15_PIXELS", "UIVENUS_PIXELS"]
