"""core.parsers: every format, every tolerance (lenient ok / strict rejected), failures with reasons,
frame conversion in to_action, adversarial inputs (time-bounded) and fuzzing."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.actions import Action
from core.geometry import Frame, ImageGeometry
from core.parsers import (
    MODEL_FORMATS,
    ParsedAction,
    ParseResult,
    detect_format,
    parse_action,
    parse_guir1_answer,
    parse_json_action,
    parse_literal,
    parse_pyautogui,
    parse_tool_call,
)

GEO = ImageGeometry.for_model(1080, 2400, max_pixels=1258291)  # resized 728 x 1652

CANON = "<think>tap it</think> <answer>[{'action': 'click', 'point': [123, 300], 'input_text': 'no input text'}]</answer>"


# ------------------------------------------------------------------------------------------ GUI-R1


def test_guir1_canonical_click():
    r = parse_guir1_answer(CANON, strict=True)
    assert r.ok and r.format == "guir1" and r.tolerances == () and r.thought == "tap it"
    a = r.action
    assert (a.action, a.point, a.text, a.direction) == ("click", (123.0, 300.0), None, None)
    act = a.to_action(GEO, Frame.RESIZED)
    assert act.type == "click"
    assert act.point == pytest.approx((123 * 1080 / 728, 300 * 2400 / 1652))


@pytest.mark.parametrize("answer, expected", [
    ("[{'action': 'scroll', 'point': [-100, -100], 'input_text': 'down'}]", ("scroll", None, None, "down")),
    ("[{'action': 'type', 'point': [-100, -100], 'input_text': 'shanghai mall'}]", ("type", None, "shanghai mall", None)),
    ("[{'action': 'close/delete', 'point': [-100, -100], 'input_text': 'no input text'}]", ("close/delete", None, None, None)),
    ("[{'action': 'press_back', 'point': [-100, -100], 'input_text': 'no input text'}]", ("press_back", None, None, None)),
    ("[{'action': 'open_app', 'point': [-100, -100], 'input_text': 'Clock'}]", ("open_app", None, "Clock", None)),
    ("[{'action': 'type', 'point': [-100, -100], 'input_text': \"it's\"}]", ("type", None, "it's", None)),
])
def test_guir1_canonical_actions(answer, expected):
    r = parse_guir1_answer(f"<think>x</think><answer>{answer}</answer>", strict=True)
    assert r.ok, r.error
    a = r.action
    assert (a.action, a.point, a.text, a.direction) == expected


def test_guir1_several_actions_and_scroll_to_action():
    r = parse_action("<think></think><answer>[{'action': 'scroll', 'point': [-100, -100], 'input_text': 'Up'}, "
                     "{'action': 'enter', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>")
    assert r.ok and [a.action for a in r.actions] == ["scroll", "enter"]
    assert r.actions[0].to_action(GEO, "resized") == Action(type="scroll", direction="up")
    assert r.actions[1].to_action(GEO, "resized") == Action(type="enter")


TOLERANT = [
    ("<think>x</think><answer> [{'action': 'click', 'point': [1, 2], 'input_text': 'no input text'}] </answer>",
     "whitespace around tags"),
    ('<think>x</think><answer>[{"action": "click", "point": [1, 2], "input_text": "no input text"}]</answer>',
     "double quotes"),
    ("<think>x</think><answer>[{'action': 'click', 'point': [1, 2], 'input_text': 'no input text', 'ok': true}]"
     "</answer>", "json literals"),
    ("<think>x</think><answer>[{'action': 'click', 'point': [1.5, 2], 'input_text': 'no input text'}]</answer>",
     "float point"),
    ("<think>x</think><answer>[{'action': 'click', 'point': [-3, 2], 'input_text': 'no input text'}]</answer>",
     "negative point"),
    ("<think>x</think><answer>[\n  {'action': 'click',\n   'point': [1, 2],\n   'input_text': 'no input text'}\n]"
     "</answer>", "pretty-printed"),
    ("<answer>[{'action': 'click', 'point': [1, 2], 'input_text': 'no input text'}]</answer>", "no <think> tag"),
    ("<think>x</think><answer>{'action': 'click', 'point': [1, 2], 'input_text': 'no input text'}</answer>",
     "answer is a dict"),
    ("<think>x</think><answer>[{'action': 'Click', 'point': [1, 2], 'input_text': 'no input text'}]</answer>",
     "action name case"),
    ("<think>x</think><answer>[{'action': 'click', 'point': [0, 0, 10, 20], 'input_text': 'no input text'}]</answer>",
     "box as point"),
    ("<think>x</think><answer>[{'action': 'click', 'point': '[1, 2]', 'input_text': 'no input text'}]</answer>",
     "point as string"),
    ("<think>x</think><answer>[{'action': 'click', 'point': [1, 2]}]</answer>", "missing input_text"),
    ("<think>x</think><answer>[{'action': 'click', 'coordinate': [1, 2], 'input_text': 'no input text'}]</answer>",
     "key alias"),
]


@pytest.mark.parametrize("text, tolerance", TOLERANT)
def test_guir1_tolerances_lenient_ok_strict_rejected(text, tolerance):
    lenient = parse_guir1_answer(text)
    assert lenient.ok, lenient.error
    assert tolerance in lenient.tolerances
    assert lenient.action.action == "click"
    strict = parse_guir1_answer(text, strict=True)
    assert not strict.ok and strict.actions == ()
    assert "strict" in strict.error and tolerance in strict.tolerances


def test_guir1_box_as_point_takes_centre():
    r = parse_guir1_answer(TOLERANT[9][0])
    assert r.action.point == (5.0, 10.0)


@pytest.mark.parametrize("text, reason", [
    ("<think>x</think> click at 1, 2", "no <answer> tag"),
    ("<answer>[{'action': 'click', 'point': [1, 2]}]", "no </answer> tag"),
    ("<answer>'click'</answer>", "answer is not a list"),
    ("<answer>[]</answer>", "empty list"),
    ("<answer></answer>", "empty answer"),
    ("<answer>[{'action': 'fly', 'point': [1, 2], 'input_text': 'no input text'}]</answer>", "unknown action"),
    ("<answer>[{'action': 'click', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>", "needs a point"),
    ("<answer>[{'action': 'scroll', 'point': [-100, -100], 'input_text': 'sideways'}]</answer>", "scroll direction"),
    ("<answer>[{'action': 'type', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>", "needs input text"),
    ("<answer>[{'action': 'click', 'point': [1, 2, 3], 'input_text': 'x'}]</answer>", "must be [x, y]"),
    ("<answer>[{'action': 'click', 'point': [nan, 2]}]</answer>", "unexpected character"),
    ("<answer>[{'action': 'click', 'point': [1e999, 2]}]</answer>", "not finite"),
    ("<answer>[{'action': 'click', 'point': [1, 2]}] trailing</answer>", "single literal"),
    ("<answer>[" + "[" * 40 + "]" * 40 + "]</answer>", "nested too deeply"),
    ("<answer>[{'action': 'click', 'point': [" + "9" * 100 + ", 2]}]</answer>", "number too long"),
    ("<answer>" + " " * 70_000 + "[]</answer>", "too long"),
])
def test_guir1_failures_have_reasons(text, reason):
    r = parse_guir1_answer(text)
    assert isinstance(r, ParseResult) and not r.ok and r.actions == ()
    assert reason in r.error


def test_max_chars_limit():
    r = parse_action(CANON, max_chars=20)
    assert not r.ok and r.error.startswith("too long")


def test_no_eval_of_answer(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"<answer>[__import__('pathlib').Path({str(marker)!r}).touch()]</answer>"
    r = parse_action(payload)
    assert not r.ok and not marker.exists()


def test_parse_literal_reads_python_and_json():
    assert parse_literal("[{'a': (1, -2.5e3)}, None, true, \"x\\n\"]") == [{"a": (1, -2500.0)}, None, True, "x\n"]
    with pytest.raises(ValueError):
        parse_literal("[1, 2] + [3]")
    with pytest.raises(ValueError):
        parse_literal("{'a': __import__('os')}")


# ------------------------------------------------------------------------------------------ tool call

QWEN3 = ('Thought: The clock app is on the home screen.\nAction: Tap the Clock icon.\n<tool_call>\n'
         '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 250]}}\n</tool_call>')


def test_tool_call_qwen3_canonical():
    r = parse_tool_call(QWEN3, strict=True)
    assert r.ok and r.format == "tool_call" and r.tolerances == ()
    assert r.thought == "The clock app is on the home screen."
    a = r.action
    assert (a.action, a.point, a.fmt) == ("click", (500.0, 250.0), "tool_call")
    assert a.to_action(GEO, Frame.GRID1000) == Action(type="click", point=(540.0, 600.0))


@pytest.mark.parametrize("args, expected", [
    ({"action": "system_button", "button": "Back"}, Action(type="press_back")),
    ({"action": "system_button", "button": "Home"}, Action(type="press_home")),
    ({"action": "type", "text": "hello"}, Action(type="type", text="hello")),
    ({"action": "open", "text": "Clock"}, Action(type="open_app", text="Clock")),
    ({"action": "terminate", "status": "success"}, Action(type="complete")),
    ({"action": "terminate", "status": "failure"}, Action(type="impossible")),
    ({"action": "key", "text": "volume_up"}, Action(type="hotkey", text="volume_up")),
    ({"action": "answer", "text": "42"}, Action(type="answer", text="42")),
    ({"action": "wait", "time": 3}, Action(type="wait", duration=3.0)),
    ({"action": "long_press", "coordinate": [100, 100], "time": 2}, Action(type="long_press", point=(108.0, 240.0),
                                                                           duration=2.0)),
    ({"action": "swipe", "coordinate": [500, 700], "coordinate2": [500, 300]}, Action(type="scroll", direction="down")),
])
def test_tool_call_mobile_use_maps_via_from_mobile_use(args, expected):
    import json
    text = "<tool_call>\n" + json.dumps({"name": "mobile_use", "arguments": args}) + "\n</tool_call>"
    r = parse_tool_call(text, strict=True)
    assert r.ok, r.error
    assert r.action.to_action(GEO, Frame.GRID1000) == expected


def test_tool_call_swipe_kept_when_asked():
    r = parse_tool_call('<tool_call>{"name": "mobile_use", "arguments": {"action": "swipe", "coordinate": [500, 700],'
                        ' "coordinate2": [500, 300]}}</tool_call>')
    act = r.action.to_action(GEO, Frame.GRID1000, swipe_as_scroll=False)
    assert act.type == "swipe" and act.point == (540.0, 1680.0) and act.end_point == (540.0, 720.0)


def test_tool_call_computer_use_and_multiple_calls():
    text = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [10, 20]}}\n'
            '</tool_call>\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "scroll", "pixels": -300}}'
            '\n</tool_call>')
    r = parse_action(text)
    assert r.ok and [a.action for a in r.actions] == ["left_click", "scroll"]
    geo = ImageGeometry.unresized(100, 100)
    assert r.actions[0].to_action(geo, Frame.ORIGINAL) == Action(type="click", point=(10.0, 20.0))
    assert r.actions[1].to_action(geo, Frame.ORIGINAL) == Action(type="scroll", direction="down")


@pytest.mark.parametrize("text, tolerance", [
    ("<tool_call>{'name': 'mobile_use', 'arguments': {'action': 'click', 'coordinate': [1, 2]}}</tool_call>",
     "single quotes"),
    ('<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [1, 2]}}', "missing closing tag"),
    ('<tool_call>{"name": "mobile_use", "arguments": "{\\"action\\": \\"click\\", \\"coordinate\\": [1, 2]}"}'
     '</tool_call>', "arguments as string"),
    ('<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [1.5, 2]}}</tool_call>',
     "float point"),
    ('<tool_call>{"name": "mobile_use", "arguments": {"action": "Click", "coordinate": [1, 2]}}</tool_call>',
     "action name case"),
])
def test_tool_call_tolerances(text, tolerance):
    r = parse_tool_call(text)
    assert r.ok and tolerance in r.tolerances and r.action.action == "click"
    s = parse_tool_call(text, strict=True)
    assert not s.ok and tolerance in s.error


@pytest.mark.parametrize("text, reason", [
    ('<tool_call>{"name": "browser", "arguments": {"action": "click"}}</tool_call>', "unknown tool"),
    ('<tool_call>{"name": "mobile_use", "arguments": {"action": "fly"}}</tool_call>', "unknown action"),
    ('<tool_call>{"name": "mobile_use", "arguments": {"action": "click"}}</tool_call>', "needs a coordinate"),
    ('<tool_call>{"name": "mobile_use", "arguments": {"action": "type"}}</tool_call>', "needs text"),
    ('<tool_call></tool_call>', "empty tool call"),
    ('<tool_call>{"name": "mobile_use"} extra</tool_call>', "single JSON object"),
])
def test_tool_call_failures(text, reason):
    r = parse_tool_call(text)
    assert not r.ok and reason in r.error


def test_to_action_raises_value_error_naming_field():
    with pytest.raises(ValueError, match="type"):
        ParsedAction(action="fly").to_action(GEO, Frame.RESIZED)
    with pytest.raises(ValueError, match="point"):
        ParsedAction(action="click").to_action(GEO, Frame.RESIZED)
    with pytest.raises(ValueError, match="point"):
        ParsedAction(action="click", point=(float("nan"), 1.0)).to_action(GEO, Frame.RESIZED)
    drag = parse_tool_call('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click_drag", '
                           '"coordinate": [5, 5]}}</tool_call>')
    assert drag.ok
    with pytest.raises(ValueError, match="drag"):  # the drag's start is not in the answer
        drag.action.to_action(GEO, Frame.RESIZED)


# ------------------------------------------------------------------------------------------ pyautogui

AGUVIS = """Thought: The search box is at the top.
Action: Click the search box.
```python
pyautogui.click(x=0.31, y=0.62)
```"""


def test_pyautogui_aguvis_click_normalized():
    r = parse_action(AGUVIS, strict=True)
    assert r.ok and r.format == "pyautogui" and r.thought == "The search box is at the top."
    act = r.action.to_action(GEO, Frame.NORMALIZED)
    assert act.type == "click" and act.point == pytest.approx((0.31 * 1080, 0.62 * 2400))


@pytest.mark.parametrize("code, expected", [
    ("pyautogui.write(message='hello world')", Action(type="type", text="hello world")),
    ("pyautogui.scroll(page=-0.5)", Action(type="scroll", direction="down")),
    ("pyautogui.scroll(page=0.5)", Action(type="scroll", direction="up")),
    ("pyautogui.hotkey(keys=['ctrl', 'c'])", Action(type="hotkey", text="ctrl+c")),
    ("pyautogui.hotkey('ctrl', 'v')", Action(type="hotkey", text="ctrl+v")),
    ("pyautogui.press(keys=['enter'])", Action(type="press_enter")),
    ("pyautogui.doubleClick(x=0.5, y=0.5)", Action(type="doubleclick", point=(540.0, 1200.0))),
    ("pyautogui.rightClick(0.5, 0.5)", Action(type="rightclick", point=(540.0, 1200.0))),
    ("pyautogui.moveTo(x=0.5, y=0.25)", Action(type="moveto", point=(540.0, 600.0))),
    ("mobile.swipe(from_coord=[0.5, 0.8], to_coord=[0.5, 0.2])", Action(type="scroll", direction="down")),
    ("mobile.home()", Action(type="press_home")),
    ("mobile.back()", Action(type="press_back")),
    ("mobile.long_press(x=0.1, y=0.5)", Action(type="long_press", point=(108.0, 1200.0))),
    ("mobile.open_app(app_name='Clock')", Action(type="open_app", text="Clock")),
    ("mobile.wait(seconds=2)", Action(type="wait", duration=2.0)),
    ("mobile.terminate(status='success')", Action(type="complete")),
    ("mobile.terminate(status='failure')", Action(type="impossible")),
    ("answer('The price is $5')", Action(type="answer", text="The price is $5")),
])
def test_pyautogui_calls(code, expected):
    r = parse_pyautogui(code)
    assert r.ok, r.error
    assert r.action.to_action(GEO, Frame.NORMALIZED) == expected


@pytest.mark.parametrize("code, reason", [
    ("pyautogui.click(x=__import__('os').system('true'), y=1)", "non-literal"),
    ("pyautogui.click(x=0.1)", "needs x and y"),
    ("pyautogui.launch_missiles()", "unknown action"),
    ("pyautogui.click(x=0.1, y=0.2); import os", "code is not a call"),
    ("pyautogui.click(**{'x': 1, 'y': 2})", "non-literal"),
    ("just prose, no code", "no pyautogui"),
])
def test_pyautogui_failures(code, reason):
    r = parse_pyautogui(code)
    assert not r.ok and reason in r.error


# ------------------------------------------------------------------------------------------ JSON


def test_json_action_and_tolerances():
    r = parse_json_action('{"action": "click", "point": [10, 20]}', strict=True)
    assert r.ok and r.action.to_action(ImageGeometry.unresized(100, 100), "original").point == (10.0, 20.0)
    fenced = parse_action('Here:\n```json\n{"action": "scroll", "direction": "up"}\n```')
    assert fenced.ok and fenced.format == "json" and "code fence" in fenced.tolerances
    assert fenced.action.direction == "up"
    listed = parse_json_action('[{"action": "type", "text": "a"}, {"action": "press_enter"}]')
    assert [a.action for a in listed.actions] == ["type", "press_enter"]
    call = parse_json_action('{"name": "mobile_use", "arguments": {"action": "system_button", "button": "Home"}}')
    assert call.action.to_action(GEO, Frame.GRID1000) == Action(type="press_home")
    assert not parse_json_action('{"action": "warp"}').ok


def test_detect_format_and_unknown_format():
    assert detect_format(CANON) == "guir1"
    assert detect_format(QWEN3) == "tool_call"
    assert detect_format(AGUVIS) == "pyautogui"
    assert detect_format('{"action": "click"}') == "json"
    assert detect_format("nothing here") == "none"
    r = parse_action("nothing here")
    assert not r.ok and r.format == "none" and r.error == "no action found"
    assert not parse_action(CANON, fmt="xml").ok
    assert not parse_action(None).ok  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ adversarial

MB = 1_000_000
ADVERSARIAL = {
    "open brackets in answer": "<answer>" + "[" * 500_000,
    "closed deep brackets": "<answer>" + "[" * 499_990 + "</answer>",
    "braces": "{" * MB,
    "brackets": "[" * MB,
    "tool_call braces": "<tool_call>" + "{" * (MB - 11),
    "many tool_calls": "<tool_call>{}</tool_call>" * (MB // 25),
    "many answer tags": "<answer>" * (MB // 8),
    "huge number": "<answer>[{'action': 'click', 'point': [" + "9" * (MB - 60) + ", 1]}]</answer>",
    "backslashes in string": "<answer>['" + "\\" * 60_000 + "']</answer>",
    "unterminated string": "<answer>['" + "a" * 60_000 + "</answer>",
    "pyautogui parens": "pyautogui.click(" + "(" * (MB - 16),
    "pyautogui lines": "pyautogui.click(x=1, y=2)\n" * (MB // 26),
    "newlines": "\n" * MB,
    "call keywords without newlines": "answer(mobile.home()pyautogui." * (MB // 30),
    "indented call keywords": ("\n \tmobile.x(" * (MB // 12))[:MB],
    "spaces then code": " " * (MB - 20) + "mobile.home()",
    "thought spam": "Thought: " * (MB // 9 - 3) + "<tool_call>{}</tool_call>",
    "unicode junk": ("\u202e\U0001f600\x00\ufffd<answer>" * (MB // 12))[:MB],
    "quotes": "<answer>" + "'" * (MB - 8),
    "nested dicts within size": "<answer>" + "{'a':" * 12_000 + "1" + "}" * 12_000 + "</answer>",
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_inputs_fail_fast(name):
    text = ADVERSARIAL[name]
    assert len(text) <= MB
    best = float("inf")
    for _ in range(3):  # best of 3; CPU time of this thread: the work, not the wait for a busy machine's cores
        t0 = time.thread_time()
        r = parse_action(text)
        best = min(best, time.thread_time() - t0)
        assert isinstance(r, ParseResult)
    assert best < 0.05, f"{name}: {best * 1000:.1f} ms"


# ------------------------------------------------------------------------------------------ fuzzing

VALID = [CANON, QWEN3, AGUVIS, '{"action": "click", "point": [10, 20]}', TOLERANT[5][0],
         "pyautogui.write(message='hi')\nmobile.swipe(from_coord=[0.1, 0.2], to_coord=[0.3, 0.4])"]


def _check(text: str, fmt: str = "auto") -> None:
    r = parse_action(text, fmt=fmt)
    assert isinstance(r, ParseResult) and (fmt == "auto" or r.format in (fmt, "tool_call"))
    assert r.ok == bool(r.actions) and (r.ok or r.error)
    for a in r.actions:
        for frame in Frame:
            try:
                assert isinstance(a.to_action(GEO, frame), Action)
            except ValueError:
                pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_fuzz_random_text(text):
    _check(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VALID), st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3),
                                                  st.text(alphabet="[]{}()'\",:-.0123456789<>/ \nabcdeTtrunl\\",
                                                          max_size=4)), max_size=6))
def test_fuzz_mutated_valid_answers(base, edits):
    text = base
    for pos, cut, insert in edits:
        pos = pos % (len(text) + 1)
        text = text[:pos] + insert + text[pos + cut:]
    _check(text)


# ------------------------------------------------------------------------------------------ public models' formats

MODEL_VALID = {
    "uitars": "Thought: go\nAction: click(start_box='<|box_start|>(235,512)<|box_end|>')\n\n"
              "drag(start_point='<point>1 2</point>', end_point='<point>3 4</point>')",
    "os_atlas": "thoughts:\nopen it\nactions:\nCLICK <point>[[950,87]]</point>",
    "qwen_grounding": '```json\n[{"bbox_2d": [10, 20, 30, 40], "label": "x"}]\n```',
    "point": "(523, 847)",
    "seeclick": "<box>(100,200),(300,400)</box>",
    "box": "[850,1149,967,1177]",
    "venus": "[523,847]",
    "infigui": '<think>t</think>\n[{"point_2d": [10, 20]}, {"point_2d": [30, 40]}]',
    "mai_ui": '<grounding_think>t</grounding_think>\n<answer>\n{"coordinate": [73,19]}\n</answer>',
    "gelab": "<THINK> t </THINK>\nexplain:x\taction:CLICK\tpoint:107,611\tsummary:s",
}
HOSTILE_MODEL = {
    **ADVERSARIAL,
    "action labels": "Action: " * (MB // 8),
    "point tags": "<point>1 " * (MB // 9),
    "box tags": "<|box_start|>(" * (MB // 14),
    "os-atlas words": "CLICK " * (MB // 6),
    "click call parens": "Action: click(start_box='" + "(" * (MB - 30) + "')",
    "huge action line": "Action: type(content='" + "a" * (MB - 40) + "')",
    "bbox json": '[{"bbox_2d": [' + "1, " * (MB // 3 - 10) + "1]}]",
    "digits": "(" + "9" * (MB - 10) + ", 1)",
    "think tags": "<think>" * (MB // 7),
    "closed think then bracket": "</think>[" * (MB // 9),
    "grounding think tags": "<grounding_think>" * (MB // 17),
    "answer then braces": "<answer>" + "{" * (MB - 20) + "</answer>",
    "tab fields": "point:1,2\t" * (MB // 10),
    "refusal brackets": "[-1,-1]" * (MB // 7),
    "brackets without close": "[1," * (MB // 3),
}


@pytest.mark.parametrize("fmt", sorted(MODEL_FORMATS))
@pytest.mark.parametrize("name", sorted(HOSTILE_MODEL))
def test_model_formats_hostile_inputs_fail_fast(fmt, name):
    """The public models' formats never raise and stay fast on the same hostile inputs (and their own)."""
    text = HOSTILE_MODEL[name]
    assert len(text) <= MB
    best = float("inf")
    for _ in range(3):  # CPU time, as above
        t0 = time.thread_time()
        r = parse_action(text, fmt=fmt)
        best = min(best, time.thread_time() - t0)
        assert isinstance(r, ParseResult) and (r.ok or r.error)
    assert best < 0.05, f"{fmt} / {name}: {best * 1000:.1f} ms"


def test_model_formats_never_evaluate(tmp_path):
    marker = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    for fmt in MODEL_FORMATS:
        for text in (f"Action: {code}", f"Action: click(start_box={code})", code, f"actions:\nTYPE [{code}]"):
            parse_action(text, fmt=fmt)
    assert not marker.exists()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(MODEL_VALID)), st.lists(st.tuples(
    st.integers(0, 200), st.integers(0, 3),
    st.text(alphabet="[]{}()'\",:-.0123456789<>/|_ \nabcdeTtrunlACKIL\\", max_size=4)), max_size=6))
def test_fuzz_mutated_model_answers(fmt, edits):
    text = MODEL_VALID[fmt]
    for pos, cut, insert in edits:
        pos = pos % (len(text) + 1)
        text = text[:pos] + insert + text[pos + cut:]
    _check(text, fmt)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(MODEL_VALID)), st.text(max_size=300))
def test_fuzz_random_text_model_formats(fmt, text):
    _check(text, fmt)


# ------------------------------------------------------------------------------------------ one number reader

# Each public model's coordinate text, with {x} and {y} where the numbers go (as the model writes them).
COORD_ANSWERS = {
    "uitars": "Action: click(start_box='({x},{y})')",
    "uitars-point": "Action: click(point='<point>{x} {y}</point>')",
    "os_atlas": "actions:\nCLICK <point>[[{x},{y}]]</point>",
    "os_atlas-box": "<|box_start|>({x},{y}),({x},{y})<|box_end|>",
    "point": "({x}, {y})",
    "seeclick": "({x},{y})",
    "seeclick-box": "<box>({x},{y}),({x},{y})</box>",
    "pyautogui": "pyautogui.click(x={x}, y={y})",
    "guir1": "<answer>[{{'action': 'click', 'point': [{x}, {y}], 'input_text': 'no input text'}}]</answer>",
    "json": '{{"action": "click", "point": [{x}, {y}]}}',
    "box": "[{x},{y},{x},{y}]",
    "venus": "[{x},{y}]",
    "infigui": '[{{"point_2d": [{x}, {y}]}}]',
    "mai_ui": '<answer>{{"coordinate": [{x}, {y}]}}</answer>',
    "gelab": "action:CLICK\tpoint:{x},{y}",
}


def _coords(kind: str, x: str, y: str) -> ParseResult:
    return parse_action(COORD_ANSWERS[kind].format(x=x, y=y), fmt=kind.split("-")[0])


@pytest.mark.parametrize("kind", sorted(COORD_ANSWERS))
@pytest.mark.parametrize("x, y, expected", [
    ("1e2", "200", (100, 200)),
    ("0.30000000000000004", "2E-1", (0.30000000000000004, 0.2)),
    ("-.5", "+7", (-0.5, 7)),
])
def test_every_parser_reads_a_number_whole(kind, x, y, expected):
    """An exponent, 17 significant digits or a sign are one number in every format, never extra numbers."""
    r = _coords(kind, x, y)
    assert r.ok, (kind, r.error)
    point = r.action.point
    if kind == "seeclick-box":  # the 0-1000 grid, as fractions
        point = (point[0] * 1000, point[1] * 1000)
    assert point == pytest.approx(expected)


@pytest.mark.parametrize("kind", sorted(COORD_ANSWERS))
@pytest.mark.parametrize("x, reason", [
    ("0x1A", "is not a decimal number"),
    ("12px", "is not a decimal number"),
    ("1.2.3", "is not a decimal number"),
    ("1_000", "is not a decimal number"),
    ("1e999", "not finite"),
    ("9" * 400, "too long"),
])
def test_every_parser_refuses_a_number_it_cannot_read_whole(kind, x, reason):
    """Hex, a unit, two numbers glued, an underscore, inf or a 400-digit integer: a failed parse with the reason,
    never a point made of the pieces (code that Python itself cannot read is refused as code)."""
    r = _coords(kind, x, "5")
    assert not r.ok, (kind, r.error)
    assert reason in r.error or (kind == "pyautogui" and "code is not a call" in r.error), (kind, r.error)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(COORD_ANSWERS)), st.floats(-1e300, 1e300, allow_nan=False),
       st.floats(-1e300, 1e300, allow_nan=False))
def test_any_float_as_python_writes_it_is_read_back_exactly(kind, x, y):
    """repr() of any finite float (``1e-05``, ``1.7976931348623157e+300``, ``0.30000000000000004``) is the number."""
    assume((x, y) not in ((-100, -100), (-1, -1)))  # GUI-R1's "no point", UI-Venus-1.5's refusal
    r = _coords(kind, repr(x), repr(y))
    assert r.ok, (kind, r.error)
    point = r.action.point
    if kind == "seeclick-box":
        assert point == (x / 1000, y / 1000) or point == pytest.approx((x / 1000, y / 1000))
    else:
        assert point == (x, y)


def test_seeclick_box_without_closing_tag_is_on_the_grid():
    """A ``<box>`` cut short is still SeeClick's 0-1000 box (its centre / 1000), never read as fractions."""
    r = parse_action("<box>(100,200),(300,400)", fmt="seeclick")
    assert r.ok and r.action.point == pytest.approx((0.2, 0.3)) and "missing closing tag" in r.tolerances
    assert not parse_action("<box>(100,200),(300,400)", fmt="seeclick", strict=True).ok


# ------------------------------------------------------------------------------------------ OS-Atlas sections

@pytest.mark.parametrize("thought", ["WAIT for the page.", "CLICK on the search box.", "TYPE [hello] later",
                                     "SCROLL [DOWN] first?", "  PRESS_BACK if it fails"])
def test_os_atlas_reads_the_action_only_from_the_actions_section(thought):
    """An action word at the start of a thought line is thought, not the answer (OS-Atlas: thoughts:\\n..\\nactions:)."""
    r = parse_action(f"thoughts:\n{thought}\nactions:\nCLICK <point>[[950,87]]</point>", fmt="os_atlas")
    assert r.ok and r.action.action == "click" and r.action.point == (950, 87) and r.thought == thought.strip()


@pytest.mark.parametrize("text, reason", [
    ("thoughts:\nWAIT for the page.", "without an 'actions:' section"),
    ("thoughts:\nWAIT\nactions:\nthe search box", "no action word at the start of the 'actions:' section"),
    ("actions:\n", "no action word"),
])
def test_os_atlas_without_an_action_in_its_section_is_refused(text, reason):
    r = parse_action(text, fmt="os_atlas")
    assert not r.ok and reason in r.error
