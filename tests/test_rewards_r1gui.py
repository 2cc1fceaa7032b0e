"""r1gui: the ``guir1`` compat mode pinned behaviour by behaviour, the corrected default mode fix by fix,
fuzzing against a plain re-statement of GUI-R1's reward, and the 1 MB time bound."""

from __future__ import annotations

import ast
import json
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.rewards import RewardInputError, score
from core.rewards.r1gui import KEYS, guir1_point, r1gui_score


def guir1(completion, gt, **kw):
    return r1gui_score(completion, gt, mode="guir1", **kw)


def gt(action="click", bbox=(10, 20, 30, 40), text="no input text", **extra):
    return json.dumps({"action": action, "gt_bbox": list(bbox), "input_text": text, **extra})


def answer(body, think="the search box is at the top"):
    return f"<think>{think}</think><answer>{body}</answer>"


CLICK = answer("[{'action': 'click', 'point': [12, 30], 'input_text': 'no input text'}]")


# --------------------------------------------------------------------------------------------- guir1: overall


def test_overall_is_08_accuracy_plus_02_format():
    assert guir1(CLICK, gt()) == pytest.approx({**guir1(CLICK, gt()), "overall": 1.0})
    miss = answer("[{'action': 'click', 'point': [90, 90], 'input_text': 'no input text'}]")
    r = guir1(miss, gt())
    assert (r["overall"], r["format"], r["accuracy"]) == (0.2, 1.0, 0.0)
    r = guir1(" " + CLICK, gt())  # format fails, accuracy still counts: parts are independent
    assert (r["overall"], r["format"], r["accuracy"]) == (0.8, 0.0, 1.0)
    assert list(r) == list(KEYS)


# --------------------------------------------------------------------------------------------- guir1: format


@pytest.mark.parametrize("text, ok", [
    (CLICK, True),
    (" " + CLICK, False),  # leading space
    (CLICK + "\n", False),  # trailing newline
    ("<think>a</think>\n\n <answer>[]</answer>", True),  # whitespace between the tags; empty list passes
    ("<think>a</think>x<answer>[]</answer>", False),
    ("<think>a\nb</think><answer>\n[{'action': 'click', 'point': [1, 2], 'input_text': 'x'}]\n</answer>", True),
    (answer("[{'action': 'click', 'point': [1, 2], 'input_text': 'x', 'extra': 5}]"), True),  # extra keys
    (answer("[{'action': 'click', 'point': [True, 2], 'input_text': 'x'}]"), True),  # bools are ints
    (answer("[{'action': 'click', 'point': [1.0, 2], 'input_text': 'x'}]"), False),
    (answer("[{'action': 'click', 'point': [1, 2, 3], 'input_text': 'x'}]"), True),  # items 0 and 1 only
    (answer("[{'action': 'click', 'point': [1], 'input_text': 'x'}]"), False),
    (answer("[{'action': 'click', 'point': b'ab', 'input_text': 'x'}]"), True),  # bytes index to ints
    (answer("[{'action': 'click', 'point': '12', 'input_text': 'x'}]"), False),
    (answer("[{'action': 'click', 'point': {0: 1, 1: 2}, 'input_text': 'x'}]"), True),
    (answer("[{'action': 'click', 'point': [1, 2]}]"), False),  # missing input_text
    (answer("[{'action': 5, 'point': [1, 2], 'input_text': 'x'}]"), False),
    (answer("[{'action': 'type', 'point': [1, 2], 'input_text': 'no input text'}]"), False),
    (answer("[{'action': 'open_app', 'point': [1, 2], 'input_text': 'no input text'}]"), False),
    (answer("[{'action': 'wait', 'point': [1, 2], 'input_text': 'no input text'}]"), True),
    (answer("[{'action': 'scroll', 'point': [1, 2], 'input_text': 'up'}]"), True),
    (answer("[{'action': 'scroll', 'point': [1, 2], 'input_text': 'Up'}]"), False),  # exact direction
    (answer("{'action': 'click', 'point': [1, 2], 'input_text': 'x'}"), False),  # a dict, not a list
    (answer('[{"action": "click", "point": [1, 2], "input_text": "x"}]'), True),  # JSON is a literal too
    (answer("[{'action': 'click', 'point': [1, 2], 'input_text': 'x'}, 3]"), False),
    (answer("[{'action': 'click', 'point': [1+1, 2], 'input_text': 'x'}]"), False),  # reference evals: 1
    (answer("[{'action': 'click', 'point': [x, 2], 'input_text': 'x'}]"), False),
    (answer("__import__('os').system('echo pwned')"), False),
    ("<think>a</think><answer>[]</answer><answer>junk</answer>", True),  # the FIRST answer body is checked
])
def test_guir1_format(text, ok):
    assert guir1(text, gt())["format"] == (1.0 if ok else 0.0)


def test_guir1_never_evaluates(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"[{{'action': 'click', 'point': [1, 2], 'input_text': open({str(marker)!r}, 'w').name}}]"
    assert guir1(answer(payload), gt())["format"] == 0.0
    assert not marker.exists()


# --------------------------------------------------------------------------------------------- guir1: accuracy


@pytest.mark.parametrize("point, bbox, hit", [
    ("[12, 30]", (10, 20, 30, 40), True),
    ("[10, 30]", (10, 20, 30, 40), False),  # strictly inside: the left edge misses
    ("[30, 30]", (10, 20, 30, 40), False),
    ("[12, 40]", (10, 20, 30, 40), False),
    ("[100, 239]", (100, 100), True),  # 139^2 < 140^2
    ("[100, 240]", (100, 100), False),  # 140^2 is not < 140^2
    ("[12, 30]", (10, 20, 30), False),  # other lengths score 0
])
def test_guir1_click_geometry(point, bbox, hit):
    c = answer(f"[{{'action': 'click', 'point': {point}, 'input_text': 'no input text'}}]")
    assert guir1(c, gt(bbox=bbox))["accuracy"] == (1.0 if hit else 0.0)


def test_guir1_point_extraction_quirks():
    # the last [int, int] on the first line that has '{' before and '}' after
    assert guir1_point("{'a': [1, 2], 'b': [3, 4]}") == (3, 4)
    assert guir1_point("{'a': [1, 2]} [3, 4]") == (1, 2)
    assert guir1_point("{'a': [1, 2]} [3, 4] }") == (3, 4)
    assert guir1_point("{ [5, 6]\n x\n }") is None  # '}' on a later, non-blank line
    assert guir1_point("{ [5, 6]\n\n  }") == (5, 6)  # only whitespace before the next line's '}'
    assert guir1_point("{'p': [-5, 6]}") is None  # no negatives
    assert guir1_point("{'p': [5.5, 6]}") is None  # no floats
    assert guir1_point("{'p': [ 5, 6]}") is None  # no space after '['
    assert guir1_point("{'p': [5,\n 6]}") == (5, 6)  # but any whitespace after the comma
    assert guir1_point("[1, 2]\n{'p': [3, 4]}") == (3, 4)
    assert guir1_point("{'p': [" + "9" * 5000 + ", 1]}") is None  # int() digit limit: reference uses (0, 0)


def test_guir1_missing_point_is_origin():
    c = answer("[{'action': 'click', 'input_text': 'no input text'}]")
    assert guir1(c, gt(bbox=(-1, -1, 5, 5)))["accuracy"] == 1.0  # (0, 0) is strictly inside
    assert guir1("<think></think>no answer", gt(bbox=(50, 50)))["accuracy"] == 0.0
    assert guir1("'action': 'click'", gt(bbox=(-1, -1, 5, 5)))["accuracy"] == 0.0  # no answer -> no action


def test_guir1_action_regex_quirks():
    close = answer("[{'action': 'close/delete', 'point': [1, 2], 'input_text': 'no input text'}]")
    assert guir1(close, gt(action="close/delete"))["accuracy"] == 0.0  # \w+ cannot match 'close/delete'
    dq = answer('[{"action": "press_back", "point": [1, 2], "input_text": "no input text"}]')
    assert guir1(dq, gt(action="press_back"))["accuracy"] == 0.0  # double quotes never match
    assert guir1(dq, gt(action="press_back"))["format"] == 1.0
    assert guir1("<think></think><answer>junk</answer>", gt(action="no action"))["accuracy"] == 1.0
    sq = answer("[{'action': 'PRESS_BACK', 'point': [1, 2], 'input_text': 'no input text'}]")
    assert guir1(sq, gt(action="Press_Back"))["accuracy"] == 1.0  # lower-cased on both sides


@pytest.mark.parametrize("pred, truth, hit", [
    ("hello world", "hello there", True),
    ("face", "facebook", True),
    (" ".join(f"t{i}" for i in range(11)),
     " ".join(f"t{i}" for i in range(6)) + " " + " ".join(f"u{i}" for i in range(7)), False),  # 0.4999999999999999
    ("it", "it's late", False),  # the regex stops at the apostrophe: pred text is 'it'
])
def test_guir1_text_actions(pred, truth, hit):
    for action in ("type", "select", "scroll"):
        c = answer(f"[{{'action': '{action}', 'point': [1, 2], 'input_text': '{pred}'}}]")
        assert guir1(c, gt(action=action, text=truth))["accuracy"] == (1.0 if hit else 0.0)


def test_guir1_text_missing_and_other_actions():
    c = answer("[{'action': 'type', 'point': [1, 2]}]")
    assert guir1(c, gt(action="type", text="no input text"))["accuracy"] == 1.0  # missing -> 'no input text'
    c = answer("[{'action': 'open_app', 'point': [1, 2], 'input_text': 'Chrome'}]")
    assert guir1(c, gt(action="open_app", text="Gmail"))["accuracy"] == 1.0  # names match is enough
    c = answer("[{'action': 'long_press', 'point': [900, 900], 'input_text': 'x'}]")
    assert guir1(c, gt(action="long_press"))["accuracy"] == 1.0  # the point is never checked


@pytest.mark.parametrize("truth", [
    "not json", "[1, 2]", '"click"', json.dumps({"action": "click", "gt_bbox": [10, 20, 30, 40]}),
    json.dumps({"action": 3, "gt_bbox": [10, 20, 30, 40], "input_text": ""}),
    json.dumps({"action": "click", "gt_bbox": "abcd", "input_text": ""}),
    json.dumps({"action": "click", "gt_bbox": [1e200, 1e200], "input_text": ""}),  # OverflowError in **2
])
def test_guir1_bad_ground_truth_scores_zero(truth):
    assert guir1(CLICK, truth)["accuracy"] == 0.0


# --------------------------------------------------------------------------------------------- default mode


def default(completion, truth, extra=None, **kw):
    return r1gui_score(completion, truth, extra, mode="default", **kw)


def test_fix_tolerant_parsing_and_whitespace():
    pretty = ("\n<think>\nlook\n</think>\n<answer>\n[\n  {\"action\": \"click\", \"point\": [12, 30],"
              " \"input_text\": \"no input text\"}\n]\n</answer>\n")
    assert guir1(pretty, gt())["overall"] == 0.0
    assert default(pretty, gt())["overall"] == 1.0


def test_fix_names_with_punctuation_and_double_quotes():
    c = answer('[{"action": "close/delete", "point": [-100, -100], "input_text": "no input text"}]')
    assert default(c, gt(action="close/delete"))["accuracy"] == 1.0
    assert guir1(c, gt(action="close/delete"))["accuracy"] == 0.0


def test_fix_negative_and_float_points():
    c = answer("[{'action': 'click', 'point': [12.5, 30.25], 'input_text': 'no input text'}]")
    assert default(c, gt())["accuracy"] == 1.0 and guir1(c, gt())["accuracy"] == 0.0
    neg = answer("[{'action': 'click', 'point': [-12, 30], 'input_text': 'no input text'}]")
    assert default(neg, gt(bbox=(-20, 20, 30, 40)))["accuracy"] == 1.0
    assert default(neg, gt())["accuracy"] == 0.0


def test_fix_missing_point_is_a_miss():
    c = answer("[{'action': 'click', 'input_text': 'no input text'}]")
    assert guir1(c, gt(bbox=(-1, -1, 5, 5)))["accuracy"] == 1.0
    assert default(c, gt(bbox=(-1, -1, 5, 5)))["accuracy"] == 0.0


def test_fix_long_press_point_and_open_app_text():
    far = answer("[{'action': 'long_press', 'point': [900, 900], 'input_text': 'no input text'}]")
    assert default(far, gt(action="long_press"))["accuracy"] == 0.0
    near = answer("[{'action': 'long_press', 'point': [15, 25], 'input_text': 'no input text'}]")
    assert default(near, gt(action="long_press"))["accuracy"] == 1.0
    app = answer("[{'action': 'open_app', 'point': [-100, -100], 'input_text': 'Chrome'}]")
    assert default(app, gt(action="open_app", text="Gmail"))["accuracy"] == 0.0
    assert default(app, gt(action="open_app", text="chrome"))["accuracy"] == 1.0


def test_fix_scroll_case_insensitive():
    c = answer("[{'action': 'scroll', 'point': [-100, -100], 'input_text': 'UP'}]")
    assert default(c, gt(action="scroll", text="up"))["overall"] == 1.0
    assert default(c, gt(action="scroll", text="down"))["accuracy"] == 0.0


def test_fix_f1_float_edge_and_inclusive_edges():
    p = " ".join(f"t{i}" for i in range(11))
    truth = " ".join(f"t{i}" for i in range(6)) + " " + " ".join(f"u{i}" for i in range(7))
    c = answer(f"[{{'action': 'type', 'point': [-100, -100], 'input_text': '{p}'}}]")
    assert default(c, gt(action="type", text=truth))["accuracy"] == 1.0
    edge = answer("[{'action': 'click', 'point': [10, 30], 'input_text': 'no input text'}]")
    assert default(edge, gt())["accuracy"] == 1.0


def test_fix_ground_truth_frames():
    # model answers in resized pixels of a 1000x2000 image resized to 500x1000; box given in other frames
    extra = {"frame": "resized", "image_size": [1000, 2000], "resized_size": [500, 1000]}
    c = answer("[{'action': 'click', 'point': [250, 500], 'input_text': 'no input text'}]")
    assert default(c, gt(bbox=(0.45, 0.45, 0.55, 0.55)), extra)["accuracy"] == 1.0  # normalized box
    assert default(c, gt(bbox=(400, 900, 600, 1100), frame="original"), extra)["accuracy"] == 1.0
    assert default(c, gt(bbox=(0, 0, 100, 100), frame="original"), extra)["accuracy"] == 0.0
    no_box = json.dumps({"action": "click", "input_text": ""})
    assert default(c, no_box, {**extra, "gt_bbox_original": [400, 900, 600, 1100]})["accuracy"] == 1.0
    with pytest.raises(RewardInputError, match="image_size"):
        default(c, gt(bbox=(400, 900, 600, 1100), frame="original"), {"frame": "resized"})


def test_default_bad_ground_truth_raises_naming_the_field():
    with pytest.raises(RewardInputError, match="'ground_truth'"):
        default(CLICK, "not json")
    with pytest.raises(RewardInputError, match="'gt_bbox'"):
        default(CLICK, json.dumps({"action": "click", "gt_bbox": [1, "a", 2, 3], "input_text": ""}))


def test_knobs_format_weight_and_gate():
    miss = answer("[{'action': 'click', 'point': [90, 90], 'input_text': 'no input text'}]")
    assert score("r1gui", miss, gt())["overall"] == 0.2
    assert score("r1gui", miss, gt(), gate_format=True)["overall"] == 0.0
    assert score("r1gui", CLICK, gt(), gate_format=True)["overall"] == 1.0
    assert score("r1gui", miss, gt(), format_weight=0.5, accuracy_weight=0.5)["overall"] == 0.5
    assert score("r1gui_guir1", miss, gt(), gate_format=True)["overall"] == 0.0


# --------------------------------------------------------------------------------------------- fuzzing

_COORD_RE = re.compile(r"\{.*\[(\d+),\s*(\d+)]\s*.*\}")


def restated_guir1(completion: str, truth: str) -> tuple[float, float]:
    """GUI-R1's r1gui said plainly (regexes as published, ast.literal_eval where it calls eval)."""
    fmt = 0.0
    if re.fullmatch(r"<think>.*?</think>\s*<answer>.*?</answer>", completion, re.DOTALL):
        body = re.search(r"<answer>(.*?)</answer>", completion, re.DOTALL).group(1).strip()
        try:
            actions = ast.literal_eval(body)
            ok = isinstance(actions, list)
            for a in actions if ok else []:
                ok = ok and isinstance(a, dict) and all(k in a for k in ("action", "point", "input_text"))
                ok = ok and isinstance(a["action"], str) and isinstance(a["point"][0], int) \
                    and isinstance(a["point"][1], int) and isinstance(a["input_text"], str)
                ok = ok and not (a["action"] in ("type", "select", "open_app") and a["input_text"] == "no input text")
                ok = ok and not (a["action"] == "scroll" and a["input_text"] not in ("left", "right", "up", "down"))
            fmt = 1.0 if ok else 0.0
        except Exception:  # noqa: BLE001
            fmt = 0.0
    try:
        g = json.loads(truth)
        ga, gb, gtext = g["action"].lower(), g["gt_bbox"], g["input_text"]
        m = re.search(r"<answer>(.*?)</answer>", completion, re.DOTALL)
        body = m.group(1).strip() if m else None
        am = re.search(r"'action':\s*'(\w+)'", body) if body is not None else None
        tm = re.search(r"'input_text':\s*'(.*?)'", body) if body is not None else None
        cm = _COORD_RE.search(body) if body is not None else None
        pa = am.group(1).lower() if am else "no action"
        pt = tm.group(1) if tm else "no input text"
        px, py = (int(cm.group(1)), int(cm.group(2))) if cm else (0, 0)
        if pa != ga:
            acc = 0.0
        elif ga == "click":
            if len(gb) == 2:
                acc = float((px - gb[0]) ** 2 + (py - gb[1]) ** 2 < 140 ** 2)
            elif len(gb) == 4:
                acc = float(gb[0] < px < gb[2] and gb[1] < py < gb[3])
            else:
                acc = 0.0
        elif ga in ("type", "select", "scroll"):
            from core.text_match import guir1_f1
            acc = float(guir1_f1(pt, gtext) >= 0.5)
        else:
            acc = 1.0
    except Exception:  # noqa: BLE001
        acc = 0.0
    return fmt, acc


_ACTIONS = st.sampled_from(["click", "type", "scroll", "select", "open_app", "press_back", "close/delete", "Click"])
_POINTS = st.one_of(st.tuples(st.integers(-5, 300), st.integers(0, 300)).map(list), st.just([1.5, 2]),
                    st.just("ab"), st.just([True, 0]), st.just([1]))
_TEXTS = st.sampled_from(["no input text", "left", "Up", "hello world", "a b c", "it's", ""])
_ITEM = st.fixed_dictionaries({"action": _ACTIONS, "point": _POINTS, "input_text": _TEXTS})
_NOISE = st.lists(st.sampled_from(list("{}[],: '\"\n\t0123456789x-.") + ["<answer>", "</answer>", "</think>",
                                                                          "'action': 'click'", "[12, 30]"]),
                  max_size=12).map("".join)


@st.composite
def completions(draw):
    items = draw(st.lists(_ITEM, max_size=3))
    body = repr(items) if draw(st.booleans()) else json.dumps(items)
    if draw(st.booleans()):
        body = body.replace(", ", ",\n ")
    pre, mid, post = (draw(st.sampled_from(["", "", " ", "\n"])) for _ in range(3))
    text = f"{pre}<think>{draw(_NOISE)}</think>{mid}<answer>{body}</answer>{post}"
    if draw(st.integers(0, 4)) == 0:
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(_NOISE) + text[i:]
    return text


@st.composite
def ground_truths(draw):
    bbox = draw(st.one_of(st.tuples(*[st.integers(0, 300)] * 4).map(list),
                          st.tuples(st.floats(0, 300), st.floats(0, 300)).map(list), st.just([10, 20, 30])))
    return json.dumps({"action": draw(_ACTIONS), "gt_bbox": bbox, "input_text": draw(_TEXTS)})


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(completions(), ground_truths())
def test_guir1_equals_restatement(completion, truth):
    r = guir1(completion, truth)
    assert (r["format"], r["accuracy"]) == restated_guir1(completion, truth)
    assert r["overall"] == 0.8 * r["accuracy"] + 0.2 * r["format"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(max_size=60))
def test_no_exception_on_arbitrary_text(completion, truth):
    r = guir1(completion, truth)
    assert set(r) == set(KEYS) and all(isinstance(v, float) for v in r.values())
    try:
        r = default(completion, gt())
    except RewardInputError:
        pytest.fail("a valid ground truth must never raise")
    assert set(r) == set(KEYS)


# --------------------------------------------------------------------------------------------- size and time

MB = 1_000_000


@pytest.mark.parametrize("make", [
    lambda: answer("[{'action': 'click', 'point': [12, 30], 'input_text': 'no input text'}]", think="x" * MB),
    lambda: answer("{[1,2] " * (MB // 7)),  # many candidate points, no '}'
    lambda: "<think>" + "{" * MB + "</think><answer>" + "[1, 2]" * 10 + "</answer>",
    lambda: answer("[" + "{'action': 'click', 'point': [1, 2], 'input_text': 'x'}, " * (MB // 56) + "]"),
    lambda: "<think></think>\n<answer>" * (MB // 25),
])
@pytest.mark.parametrize("mode", ["guir1", "default"])
def test_one_megabyte_completion_under_50ms(make, mode):
    text = make()
    assert len(text) >= MB * 0.95
    r1gui_score(text, gt(), mode=mode)  # warm caches
    best = float("inf")
    for _ in range(3):  # best of 3, CPU time of this thread: the bound is on the work, not on a busy machine's scheduler
        t0 = time.thread_time()
        r1gui_score(text, gt(), mode=mode)
        best = min(best, time.thread_time() - t0)
    assert best < 0.05, f"{best * 1000:.1f} ms"
