"""core.prompts: GUI-R1 text reproduced exactly, one <image> per prompt, history rendering, and for EVERY
template: gold answer -> parser -> same action (type, text/direction, point in ORIGINAL pixels) on real
steps from ../shared/data and on hand-built steps covering each action the template allows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.actions import Action
from core.geometry import Frame
from core.parsers import FORMATS, MODEL_FORMATS, parse_action
from core.prompts import (
    TEMPLATES,
    TemplateError,
    default_template_for,
    get_template,
    mobile_use_tool,
    render_guir1_history,
)
from core.presets import get_preset
from core.schema import HistoryItem, Step

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

# --------------------------------------------------------------------------------------------- real steps


def _guiodyssey_step() -> Step:
    """The GUIOdyssey record: Tap [663, 1135] on a 720x1280 screenshot, 10 history steps."""
    rec = json.loads((DATA / "guiodyssey" / "navigation_meta_format.json").read_text())[0]
    user = rec["messages"][1]["content"]
    instruction = user.split("## User Instruction\n", 1)[1].split("\n\n## Action History", 1)[0].strip()
    hist = user.split("## Action History\n", 1)[1].split("\n\n## Screenshots", 1)[0]
    history = tuple(HistoryItem(description=line.split(": ", 1)[1]) for line in hist.splitlines() if line.strip())
    point = json.loads(rec["solution"])[0]["Action"]["point_2d"]
    w, h = rec["image_sizes"][0]
    return Step.build("guiodyssey[0]", id="guiodyssey-0", image=str(DATA / "guiodyssey" / Path(rec["images"][0]).name),
                      image_size=(w, h), instruction=instruction, history=history, task_type="high",
                      action=Action(type="click", point=tuple(point)), bbox=tuple(rec["bbox"]), source="guiodyssey")


def _aitz_steps() -> list[Step]:
    """The AitZ episode: home (6), swipe (4, touch != lift), click (4), complete (10); 270x600 screenshots."""
    folder = DATA / "aitz" / "GOOGLE_APPS-523638528775825151"
    recs = json.loads((folder / "GOOGLE_APPS-523638528775825151.json").read_text())
    w, h = 270, 600
    steps, history = [], []
    for r in recs:
        (ty, tx), (ly, lx) = json.loads(r["result_touch_yx"]), json.loads(r["result_lift_yx"])
        kind = r["result_action_type"]
        if kind == 6:
            action = Action(type="press_home")
        elif kind == 10:
            action = Action(type="complete")
        elif kind == 4 and (ty, tx) == (ly, lx) or kind == 4 and abs(ty - ly) + abs(tx - lx) < 0.01:
            action = Action(type="click", point=(tx * w, ty * h))
        elif kind == 4:
            action = Action(type="swipe", point=(tx * w, ty * h), end_point=(lx * w, ly * h))
        else:
            raise AssertionError(f"unexpected AITW action {kind}")
        steps.append(Step.build(f"aitz[{r['step_id']}]", id=f"aitz-{r['step_id']}", image_size=(w, h),
                                image=str(folder / f"GOOGLE_APPS-523638528775825151_{r['step_id']}.png"),
                                instruction=r["instruction"], history=tuple(history), task_type="high",
                                action=action, source="aitz"))
        history.append(HistoryItem(action=action, description=r["coat_action_desc"]))
    return steps


def _screenspot_steps() -> list[Step]:
    """ScreenSpot rows whose 2560x1440 web screenshots are present: click at the bbox centre (grounding)."""
    steps = []
    for line in (DATA / "screenspot" / "screenspot_v1_annotations.jsonl").read_text().splitlines():
        row = json.loads(line)
        if not (DATA / "screenspot" / "images" / row["image"]).exists():
            continue
        x, y, bw, bh = row["bbox"]
        steps.append(Step.build(row["image"], id=f"screenspot-{len(steps)}", image_size=(2560, 1440),
                                image=str(DATA / "screenspot" / "images" / row["image"]),
                                instruction=row["instruction"], task_type="grounding", bbox=(x, y, x + bw, y + bh),
                                action=Action(type="click", point=(x + bw / 2, y + bh / 2)), source="screenspot"))
    return steps


REAL = [_guiodyssey_step(), *_aitz_steps(), *_screenspot_steps()]


def test_real_steps_loaded():
    assert len(REAL) >= 1 + 4 + 4
    assert {s.action.type for s in REAL} >= {"click", "press_home", "swipe", "complete"}


# --------------------------------------------------------------------------------------------- hand-built steps

_EXAMPLES = {
    "click": Action(type="click", point=(321.0, 777.0)),
    "long_press": Action(type="long_press", point=(100.0, 1500.0)),
    "doubleclick": Action(type="doubleclick", point=(640.0, 20.0)),
    "rightclick": Action(type="rightclick", point=(5.0, 2390.0)),
    "moveto": Action(type="moveto", point=(1079.0, 1.0)),
    "type": Action(type="type", text="shanghai shopping mall"),
    "select": Action(type="select", text="Large"),
    "open_app": Action(type="open_app", text="Clock"),
    "hotkey": Action(type="hotkey", text="ctrl+c"),
    "answer": Action(type="answer", text="It's 5 o'clock"),
    "drag": Action(type="drag", point=(100.0, 200.0), end_point=(500.0, 900.0)),
}


def _example(name: str) -> Action:
    if name in _EXAMPLES:
        return _EXAMPLES[name]
    if name == "scroll":
        return Action(type="scroll", direction="left")
    if name == "swipe":
        return Action(type="swipe", point=(540.0, 1800.0), end_point=(540.0, 600.0))
    return Action(type=name)


def _hand_steps(template) -> list[Step]:
    return [Step(id=f"hand-{name}", image_size=(1080, 2400), instruction="Do the thing", task_type="high",
                 action=_example(name), history=(HistoryItem(description="Open the app"),))
            for name in template.actions]


# --------------------------------------------------------------------------------------------- round trip


def _expected(template, step: Step) -> Action:
    return template.answer_action(step)


def _tolerance_px(template, geometry) -> tuple[float, float]:
    """1 px, or half a unit of the answer frame when that is coarser (integer answers on the 0-1000 grid of a
    2400 px screen are 2.4 px apart, so rounding alone moves a point up to 1.2 px)."""
    sx, sy = geometry.scale(template.frame)
    return max(1.0, 0.5 / sx + 1e-9), max(1.0, 0.5 / sy + 1e-9)


def _round_trip(template, step: Step) -> None:
    geometry = template.geometry(step)
    gold = template.gold_answer(step, geometry)
    result = parse_action(gold, fmt=template.answer_format, strict=True)
    assert result.ok, (template.name, step.id, gold, result.error)
    assert result.format == template.answer_format
    got = result.action.to_action(geometry, template.frame)
    want = _expected(template, step)
    if want.type == "swipe" and template.answer_format == "tool_call":
        got = result.action.to_action(geometry, template.frame, swipe_as_scroll=False)
    assert got.type == want.type, (template.name, step.id, gold)
    assert got.text == want.text and got.direction == want.direction, (template.name, step.id, gold)
    tx, ty = _tolerance_px(template, geometry)
    if want.type in ("click", "long_press", "doubleclick", "rightclick", "moveto", "swipe"):
        for name in ("point", "end_point") if want.type == "swipe" else ("point",):
            p, q = getattr(got, name), getattr(want, name)
            assert p is not None and q is not None
            assert abs(p[0] - q[0]) <= tx and abs(p[1] - q[1]) <= ty, (template.name, step.id, name, p, q)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_round_trips_every_allowed_action(name):
    template = TEMPLATES[name]
    for step in _hand_steps(template):
        _round_trip(template, step)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_round_trips_real_steps(name):
    template = TEMPLATES[name]
    done = 0
    for step in REAL:
        try:
            template.answer_action(step)
        except TemplateError:
            continue
        _round_trip(template, step)
        done += 1
    assert done >= 1, f"{name}: no real step expressible"


def test_point_error_within_one_pixel_for_resized_templates():
    step = REAL[0]  # GUIOdyssey 720x1280
    for template in TEMPLATES.values():
        if template.frame is Frame.RESIZED:
            geometry = template.geometry(step)
            got = parse_action(template.gold_answer(step, geometry), fmt=template.answer_format).action.to_action(
                geometry, template.frame)
            assert abs(got.point[0] - 663) <= 1 and abs(got.point[1] - 1135) <= 1


def test_gold_answer_rejects_actions_the_template_lacks():
    step = _hand_steps(TEMPLATES["guir1-high"])[5]  # type
    with pytest.raises(TemplateError, match="hand-type.*action.type.*guir1-low"):
        TEMPLATES["guir1-low"].gold_answer(step, TEMPLATES["guir1-low"].geometry(step))
    drag = Step(id="d", image_size=(100, 100), instruction="drag", action=Action(
        type="drag", point=(1.0, 1.0), end_point=(5.0, 5.0)))
    with pytest.raises(TemplateError, match="drag"):
        TEMPLATES["qwen3vl-mobile-use"].gold_answer(drag, TEMPLATES["qwen3vl-mobile-use"].geometry(drag))


def test_enter_alias_and_swipe_as_scroll():
    enter = Step(id="e", image_size=(100, 100), instruction="go", action=Action(type="press_enter"))
    assert "'action': 'enter'" in TEMPLATES["guir1-high"].gold_answer(enter, TEMPLATES["guir1-high"].geometry(enter))
    swipe = REAL[2]  # AitZ step 1: finger moves up -> content scrolls down
    gold = TEMPLATES["guir1-high"].gold_answer(swipe, TEMPLATES["guir1-high"].geometry(swipe))
    assert "'action': 'scroll'" in gold and "'input_text': 'down'" in gold


# --------------------------------------------------------------------------------------------- exact GUI-R1 text


def _ref_high(text: str, history: str) -> str:
    # verbatim from GUI-R1 verl/utils/dataset.py (task_type == 'high')
    return (
        f"You are GUI-R1, a reasoning GUI Agent Assistant. In this UI screenshot <image>, I want you to continue executing the command '{text}', with the action history being '{history}'.\n"
        "Please provide the action to perform (enumerate from ['complete', 'close/delete', 'press_home', 'click', 'press_back', 'type', 'select', 'scroll', 'enter']), the point where the cursor is moved to (integer) if a click is performed, and any input text required to complete the action.\n"
        "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> tags as follows:\n"
        "<think> ... </think> <answer>[{'action': enum['complete', 'close/delete', 'press_home', 'click', 'press_back', 'type', 'select', 'scroll', 'enter'], 'point': [x, y], 'input_text': 'no input text [default]'}]</answer>\n"
        "Note:\n specific input text (no default) is necessary for actions enum['type', 'select', 'scroll'] \n Example:\n"
        "[{'action': enum['complete', 'close/delete', 'press_home', 'press_back', 'enter'], 'point': [-100, -100], 'input_text': 'no input text'}]\n"
        "[{'action': enum['click'], 'point': [123, 300], 'input_text': 'no input text'}]\n"
        "[{'action': enum['type', 'select'], 'point': [-100, -100], 'input_text': 'shanghai shopping mall'}]\n"
        "[{'action': enum['scroll'], 'point': [-100, -100], 'input_text': enum['up', 'left', 'right', 'down']}]"
    )


def _ref_low(text: str, history: str) -> str:
    # verbatim from GUI-R1 verl/utils/dataset.py (every other task_type)
    return (
        f"You are GUI-R1, a reasoning GUI Agent Assistant. In this UI screenshot <image>, I want you to continue executing the command '{text}', with the action history being '{history}'.\n"
        "Please provide the action to perform (enumerate from ['click']), the point where the cursor is moved to (integer) if a click is performed, and any input text required to complete the action.\n"
        "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> tags as follows:\n"
        "<think> ... </think> <answer>[{'action': enum[ 'click'], 'point': [x, y], 'input_text': 'no input text'}]</answer>\n"
        "Example:\n"
        "[{'action': enum['click'], 'point': [123, 300], 'input_text': 'no input text'}]\n"
    )


_INTRO = "You are a reasoning GUI Agent Assistant. In this UI screenshot <image>, I want you to continue executing the command '{text}', with the action history being '{history}'.\n"


def _ref_inference(name: str, text: str, history: str) -> str:
    # verbatim from GUI-R1 guir1/inference/inference_vllm_<benchmark>.py (without the extra '<image>\n' prefix)
    if name == "androidcontrol":
        return (
            f"You are GUI-R1, a reasoning GUI Agent Assistant. In this UI screenshot <image>, I want you to continue executing the command '{text}', with the action history being '{history}'.\n"
            "Please provide the action to perform (enumerate from ['wait', 'long_press', 'click', 'press_back', 'type', 'open_app', 'scroll']), the point where the cursor is moved to (integer) if a click is performed, and any input text required to complete the action.\n"
            "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> tags as follows:\n"
            "<think> ... </think> <answer>[{'action': enum['wait', 'long_press', 'click', 'press_back', 'type', 'open_app', 'scroll'], 'point': [x, y], 'input_text': 'no input text [default]'}]</answer>\n"
            "Note:\n specific input text (no default) is necessary for actions enum['type', 'open_app', 'scroll'] \n Example:\n"
            "[{'action': enum['wait', 'press_back'], 'point': [-100, -100], 'input_text': 'no input text'}]\n"
            "[{'action': enum['click', 'long_press'], 'point': [123, 300], 'input_text': 'no input text'}]\n"
            "[{'action': enum['type', 'open_app'], 'point': [-100, -100], 'input_text': 'shanghai shopping mall'}]\n"
            "[{'action': enum['scroll'], 'point': [-100, -100], 'input_text': enum['up', 'left', 'right', 'down']}]"
        )
    if name == "guiodyssey":
        return _INTRO.format(text=text, history=history) + (
            "Please provide the action to perform (enumerate from ['press_back', 'press_recent', 'press_home', 'complete', 'long_press', 'scroll', 'click', 'impossible', 'type']), the point where the cursor is moved to (integer) if a click is performed, and any input text required to complete the action.\n"
            "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> tags as follows:\n"
            "<think> ... </think> <answer>[{'action': enum['press_back', 'press_recent', 'press_home', 'complete', 'long_press', 'scroll', 'click', 'impossible', 'type'], 'point': [x, y], 'input_text': 'no input text [default]'}]</answer>\n"
            "Note:\n specific input text (no default) is necessary for actions enum['type', 'scroll'] \n Example:\n"
            "[{'action': enum['complete','press_back', 'press_recent', 'press_home','impossible'], 'point': [-100, -100], 'input_text': 'no input text'}]\n"
            "[{'action': enum['click','long_press'], 'point': [123, 300], 'input_text': 'no input text'}]\n"
            "[{'action': enum['type'], 'point': [-100, -100], 'input_text': 'shanghai shopping mall'}]\n"
            "[{'action': enum['scroll'], 'point': [-100, -100], 'input_text': enum['up', 'left', 'right', 'down']}]"
        )
    if name == "guiact-web":
        return _INTRO.format(text=text, history=history) + (
            "Please provide the action to perform (enumerate from ['scroll', 'click', 'complete']), the point where the cursor is moved to (integer) if a click is performed, and any input text required to complete the action.\n"
            "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> tags as follows:\n"
            "<think> ... </think> <answer>[{'action': enum['scroll', 'click', 'complete'], 'point': [x, y], 'input_text': 'no input text [default]'}]</answer>\n"
            "Note:\n specific input text (no default) is necessary for actions enum['scroll'] \nExample:\n"
            "[{'action': enum['complete'], 'point': [-100, -100], 'input_text': 'no input text'}]\n"
            "[{'action': enum['click'], 'point': [123, 300], 'input_text': 'no input text'}]\n"
            "[{'action': enum['scroll'], 'point': [-100, -100], 'input_text': enum['up', 'left', 'right', 'down']}]"
        )
    if name == "omniact-web":
        return _INTRO.format(text=text, history=history) + (
            "Please provide the action to perform (enumerate from ['press_tab', 'moveto', 'rightclick', 'press_enter', 'scroll', 'click', 'press_down', 'hotkey', 'press_space', 'doubleclick']), the point where the cursor is moved to (integer) if a click is performed, and any input text required to complete the action.\n"
            "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> tags as follows:\n"
            "<think> ... </think> <answer>[{'action': enum['press_tab', 'moveto', 'rightclick', 'press_enter', 'scroll', 'click', 'press_down', 'hotkey', 'press_space', 'doubleclick'], 'point': [x, y], 'input_text': 'no input text [default]'}]</answer>\n"
            "Note:\n specific input text (no default) is necessary for actions enum['scroll'] \n Example:\n"
            "[{'action': enum['press_tab', 'press_enter','press_down','hotkey','press_space'], 'point': [-100, -100], 'input_text': 'no input text'}]\n"
            "[{'action': enum['moveto', 'rightclick','click','doubleclick'], 'point': [123, 300], 'input_text': 'no input text'}]\n"
            "[{'action': enum['scroll'], 'point': [-100, -100], 'input_text': enum['up', 'left', 'right', 'down']}]"
        )
    if name == "omniact-desktop":
        return _INTRO.format(text=text, history=history) + (
            "Please provide the action to perform (enumerate from ['click', 'moveto', 'press_pgdn']), the point where the cursor is moved to (integer) if a click is performed, and any input text required to complete the action.\n"
            "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> tags as follows:\n"
            "<think> ... </think> <answer>[{'action': enum['click', 'moveto', 'press_pgdn'], 'point': [x, y], 'input_text': 'no input text [default]'}]</answer>\n"
            "Example:\n"
            "[{'action': enum['press_pgdn'], 'point': [-100, -100], 'input_text': 'no input text'}]\n"
            "[{'action': enum['moveto','click'], 'point': [123, 300], 'input_text': 'no input text'}]\n"
        )
    assert name == "screenspot"
    return (
        f"You are RUN1-R1, a reasoning GUI Agent Assistant. In this UI screenshot <image>, I want you to continue executing the command '{text}', with the action history being 'None'.\n"
        "Please provide the action to perform (enumerate from ['click']), the point where the cursor is moved to (integer) if a click is performed, and any input text required to complete the action.\n"
        "Output the thinking process in <think> </think> tags, and the final answer in <answer> </answer> tags as follows:\n"
        "<think> ... </think> <answer>[{'action': enum[ 'click'], 'point': [x, y], 'input_text': 'no input text [default]'}]</answer>\n"
        "Example:\n"
        "[{'action': enum['click'], 'point': [123, 300], 'input_text': 'no input text'}]\n"
    )


def _user_text(name: str, step: Step) -> str:
    t = TEMPLATES[name]
    msgs = t.render(step, t.geometry(step))
    assert [m["role"] for m in msgs] == ["user"]
    return msgs[0]["content"]


@pytest.mark.parametrize("step", REAL[:3], ids=lambda s: s.id)
def test_guir1_training_text_is_exact(step):
    history = render_guir1_history(step)
    assert _user_text("guir1-high", step) == _ref_high(step.instruction, history)
    assert _user_text("guir1-low", step) == _ref_low(step.instruction, history)
    assert _user_text("guir1-grounding", step) == _ref_low(step.instruction, "None")


@pytest.mark.parametrize("bench", ["androidcontrol", "guiodyssey", "guiact-web", "omniact-web", "omniact-desktop",
                                   "screenspot"])
def test_guir1_inference_text_is_exact(bench):
    step = REAL[0].model_copy(update={"history_text": " \nStep 1: Open Tumblr.\n\n"})
    assert _user_text(f"guir1-inference-{bench}", step) == _ref_inference(bench, step.instruction, step.history_text)
    assert _user_text("guir1-inference", step) == _ref_inference("androidcontrol", step.instruction,
                                                                 step.history_text)


def test_short_prompt_is_the_screenshot_then_the_task_with_guir1_answers():
    short, high = TEMPLATES["guir1-short"], TEMPLATES["guir1-high"]
    for step in REAL:
        # the screenshot first, as trl's GRPO trainer prepends it to a text prompt: SFT, GRPO and inference agree
        assert _user_text("guir1-short", step) == f"<image>Task: {step.instruction}"
        g = short.geometry(step)
        assert g == high.geometry(step)
        assert short.gold_answer(step, g) == high.gold_answer(step, g)
    assert short.actions == high.actions and short.answer_format == "guir1"


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_exactly_one_image_placeholder(name):
    t = TEMPLATES[name]
    for step in REAL:
        msgs = t.render(step, t.geometry(step))
        assert sum(m["content"].count("<image>") for m in msgs) == 1
        assert "<image>" in msgs[-1]["content"] and msgs[-1]["role"] == "user"


# --------------------------------------------------------------------------------------------- history


def test_render_guir1_history():
    ody = REAL[0]
    assert render_guir1_history(ody).startswith(" \nStep 1: Tap on the Mapillary app to start exploring hiking "
                                                "trails.\nStep 2: ")
    assert render_guir1_history(ody).endswith("the weather forecast.\n\n")
    assert render_guir1_history(REAL[1]) == " \nNone\n"  # first AitZ step
    assert render_guir1_history(REAL[3]) == " \nStep 1: press the home button\nStep 2: scroll up\n\n"
    verbatim = REAL[3].model_copy(update={"history_text": "anything, kept as is"})
    assert render_guir1_history(verbatim) == "anything, kept as is"
    undescribed = REAL[1].model_copy(update={"history": (HistoryItem(action=Action(type="scroll", direction="up")),)})
    assert render_guir1_history(undescribed) == " \nStep 1: Scroll up\n\n"


# --------------------------------------------------------------------------------------------- Qwen3-VL


def test_qwen3vl_prompt_has_tool_schema_and_screen_size():
    t = get_template("qwen3vl-mobile-use")
    step = REAL[0]
    system, user = t.render(step, t.geometry(step))
    assert system["role"] == "system" and user["role"] == "user"
    tool = json.loads(re.search(r"<tools>\n(.*)\n</tools>", system["content"], re.S).group(1))
    assert tool["function"]["name"] == "mobile_use"
    assert "720x1280" in tool["function"]["description"] and "0-1000" in tool["function"]["description"]
    assert step.instruction in user["content"] and "Step 10: Type 'Los Angeles'" in user["content"]
    gold = t.gold_answer(step, t.geometry(step))
    assert gold.startswith("Thought: ") and "\nAction: " in gold
    call = json.loads(gold.split("<tool_call>\n", 1)[1].split("\n</tool_call>", 1)[0])
    assert call == {"name": "mobile_use", "arguments": {"action": "click", "coordinate": [921, 887]}}


def test_qwen3vl_agent_prompt_states_the_cookbooks_999_screen():
    """The ``qwen3vl`` preset's navigation prompt (issue 51 class 3): the Qwen3-VL cookbook's mobile agent states
    "The screen's resolution is 999x999." (QwenLM/Qwen3-VL @ 9658872 cookbooks/mobile_agent.ipynb cell 7), not the
    screen's size nor the 0-1000 grid; gold answers are on that screen: (663, 1135) of 720 x 1280 is
    [round(663 / 720 * 999), round(1135 / 1280 * 999)] = [920, 886] (0-1000: [921, 887])."""
    t = get_template("qwen3vl-mobile-agent")
    assert t.frame is Frame.GRID999 and get_preset("qwen3vl").templates["navigation"] == t.name
    step = REAL[0]
    system, _ = t.render(step, t.geometry(step))
    tool = json.loads(re.search(r"<tools>\n(.*)\n</tools>", system["content"], re.S).group(1))
    text = json.dumps(tool)
    assert "The screen's resolution is 999x999." in tool["function"]["description"]
    assert "0-1000" not in text and "720x1280" not in text
    gold = t.gold_answer(step, t.geometry(step))
    call = json.loads(gold.split("<tool_call>\n", 1)[1].split("\n</tool_call>", 1)[0])
    assert call["arguments"]["coordinate"] == [920, 886]
    with pytest.raises(ValueError, match="999 or 1000"):
        mobile_use_tool(720, 1280, 998)


# --------------------------------------------------------------------------------------------- registry


def test_get_template_lists_names_on_error():
    assert get_template("guir1-high").name == "guir1-high"
    with pytest.raises(ValueError, match="unknown prompt template 'nope'.*guir1-high.*qwen3vl-mobile-use"):
        get_template("nope")
    for name, t in TEMPLATES.items():
        assert t.name == name and t.answer_format in FORMATS + MODEL_FORMATS


def test_default_template_for():
    assert default_template_for(REAL[0]) == "guir1-high"
    assert default_template_for(REAL[-1]) == "guir1-grounding"
    low_click = REAL[0].model_copy(update={"task_type": "low"})
    assert default_template_for(low_click) == "guir1-low"
    low_type = low_click.model_copy(update={"action": Action(type="type", text="x")})
    assert default_template_for(low_type) == "guir1-high"
