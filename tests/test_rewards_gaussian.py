"""GUI-G2's Gaussian point reward (``core.rewards.gaussian``) against hand-computed values."""

from __future__ import annotations

import json
import math

import pytest

from core.rewards import RewardInputError, score

BOX = [100, 200, 300, 400]  # centre (200, 300); alpha 0.5 -> sigma (100, 100)


def _gt(action="click", bbox=BOX, text="no input text", frame="resized") -> str:
    return json.dumps({"action": action, "gt_bbox": bbox, "input_text": text, "frame": frame})


def _answer(action="click", point=(0, 0), text="no input text", think=True) -> str:
    body = f"[{{'action': '{action}', 'point': [{point[0]}, {point[1]}], 'input_text': '{text}'}}]"
    return (f"<think>t</think><answer>{body}</answer>" if think else f"<answer>{body}</answer>")


@pytest.mark.parametrize("point, expected", [
    ((200, 300), 1.0),                     # the centre
    ((300, 300), math.exp(-0.5)),          # one sigma right (the box edge)
    ((100, 300), math.exp(-0.5)),          # one sigma left
    ((200, 400), math.exp(-0.5)),          # one sigma down
    ((300, 400), math.exp(-1.0)),          # one sigma in x and in y
    ((400, 300), math.exp(-2.0)),          # two sigma right: outside the box, still some credit
    ((250, 350), math.exp(-0.25)),         # half a sigma in each
])
def test_click_on_a_box_scores_the_gaussian_of_its_offset_from_the_centre(point, expected):
    r = score("gaussian", _answer(point=point), _gt())
    assert r["accuracy"] == pytest.approx(expected)
    assert r["format"] == 1.0 and r["overall"] == pytest.approx(0.8 * expected + 0.2)
    assert r["arg_match"] == (1.0 if 100 <= point[0] <= 300 and 200 <= point[1] <= 400 else 0.0)  # r1gui's verdict


def test_sigma_follows_alpha_and_each_side_of_the_box():
    wide = [0, 0, 400, 100]  # centre (200, 50), alpha 1 -> sigma (400, 100)
    assert score("gaussian", _answer(point=(600, 50)), _gt(bbox=wide), alpha=1.0)["accuracy"] \
        == pytest.approx(math.exp(-0.5))
    assert score("gaussian", _answer(point=(200, 150)), _gt(bbox=wide), alpha=1.0)["accuracy"] \
        == pytest.approx(math.exp(-0.5))
    assert score("gaussian", _answer(point=(300, 300)), _gt(), alpha=0.25)["accuracy"] == pytest.approx(math.exp(-2))


def test_the_value_is_the_same_in_every_frame():
    """Gold box in ORIGINAL pixels of a 1000 x 2000 screen; the model answers on the 0..1000 grid."""
    gt = _gt(bbox=BOX, frame="original")
    extra = {"frame": "grid1000", "image_size": [1000, 2000]}
    assert score("gaussian", _answer(point=(300, 150)), gt, extra)["accuracy"] == pytest.approx(math.exp(-0.5))
    assert score("gaussian", _answer(point=(200, 150)), gt, extra)["accuracy"] == pytest.approx(1.0)


def test_a_gold_point_counts_as_a_square_of_side_twice_the_point_radius():
    extra = {"frame": "resized", "image_size": [1000, 2000], "resized_size": [1000, 2000]}
    gt = _gt(bbox=[500, 1000])
    # sigma = 0.5 * 2 * 0.14 = 0.14 of the screen: 140 px across, 280 px down
    assert score("gaussian", _answer(point=(640, 1000)), gt, extra)["accuracy"] == pytest.approx(math.exp(-0.5))
    assert score("gaussian", _answer(point=(500, 1280)), gt, extra)["accuracy"] == pytest.approx(math.exp(-0.5))
    assert score("gaussian", _answer(point=(640, 1000)), gt, extra, point_radius=0.07)["accuracy"] \
        == pytest.approx(math.exp(-2))
    with pytest.raises(RewardInputError, match="image_size"):
        score("gaussian", _answer(point=(640, 1000)), gt, {"frame": "resized"})


def test_a_box_of_zero_width_is_its_centre_point():
    extra = {"frame": "resized", "image_size": [1000, 2000]}
    line = _gt(bbox=[500, 900, 500, 1100])
    assert score("gaussian", _answer(point=(640, 1000)), line, extra)["accuracy"] == pytest.approx(math.exp(-0.5))


@pytest.mark.parametrize("gold, answer, expected", [
    (("type", None, "blue sky"), ("type", (0, 0), "blue sky"), 1.0),
    (("type", None, "blue sky"), ("type", (0, 0), "the blue sky"), 1.0),   # token F1 0.8
    (("type", None, "blue sky"), ("type", (0, 0), "red"), 0.0),
    (("scroll", None, "down"), ("scroll", (0, 0), "down"), 1.0),
    (("scroll", None, "down"), ("scroll", (0, 0), "up"), 0.0),
    (("press_back", None, "no input text"), ("press_back", (0, 0), "no input text"), 1.0),
    (("press_back", None, "no input text"), ("press_home", (0, 0), "no input text"), 0.0),
    (("click", BOX, "no input text"), ("long_press", (200, 300), "no input text"), 0.0),  # wrong type
    (("long_press", BOX, "no input text"), ("long_press", (300, 300), "no input text"), math.exp(-0.5)),
])
def test_other_actions_follow_gui_r1s_rule(gold, answer, expected):
    action, bbox, text = gold
    gt = json.dumps({"action": action, "gt_bbox": bbox or [-100, -100], "input_text": text, "frame": "resized"})
    r = score("gaussian", _answer(*answer), gt)
    assert r["accuracy"] == pytest.approx(expected)
    assert r["action_match"] == (1.0 if answer[0] == action else 0.0)


def test_format_is_r1guis_and_the_weights_are_its_knobs():
    no_think = _answer(point=(300, 300), think=False)
    for completion in (no_think, _answer(point=(300, 300)), "I click the button."):
        assert score("gaussian", completion, _gt())["format"] == score("r1gui", completion, _gt())["format"]
    r = score("gaussian", no_think, _gt())
    assert (r["format"], r["accuracy"]) == (0.0, pytest.approx(math.exp(-0.5)))
    assert r["overall"] == pytest.approx(0.8 * math.exp(-0.5))
    r = score("gaussian", _answer(point=(300, 300)), _gt(), accuracy_weight=1.0, format_weight=0.5)
    assert r["overall"] == pytest.approx(math.exp(-0.5) + 0.5)
    assert score("gaussian", _answer(action="type"), _gt(), gate_format=True)["overall"] == 0.0
    assert score("gaussian_accuracy", _answer(point=(300, 300)), _gt()) == score("gaussian", _answer(point=(300, 300)),
                                                                                  _gt())
    prose = score("gaussian", "I click the button.", _gt())
    assert prose == {"overall": 0.0, "format": 0.0, "accuracy": 0.0, "action_match": 0.0, "arg_match": 0.0,
                     "parsed": 0.0}


def test_mode_guir1_picks_r1guis_published_format_check():
    """The GUI-R1 presets set ``{"mode": "guir1"}`` for every reward of a run; gaussian takes it for its format."""
    loose = "\n" + _answer(point=(300, 300)) + "\n"  # the published check refuses whitespace around the text
    for completion in (loose, _answer(point=(300, 300))):
        r = score("gaussian", completion, _gt(), mode="guir1")
        assert r["format"] == score("r1gui", completion, _gt(), mode="guir1")["format"]
        assert r["accuracy"] == pytest.approx(math.exp(-0.5))
    assert score("gaussian", loose, _gt(), mode="guir1")["format"] == 0.0
    assert score("gaussian", loose, _gt())["format"] == 1.0
    with pytest.raises(ValueError, match="gaussian reward option 'mode'"):
        score("gaussian", loose, _gt(), mode="strict")


def test_a_missing_or_non_numeric_point_scores_zero():
    no_point = "<think>t</think><answer>[{'action': 'click', 'input_text': 'no input text'}]</answer>"
    assert score("gaussian", no_point, _gt())["accuracy"] == 0.0
    assert score("gaussian", _answer(point=("nan", "nan")), _gt())["accuracy"] == 0.0
    for far in (("1e200", "0"), ("-1e308", "1e308"), ("1" + "0" * 400, "5")):  # overflow: no credit, no error
        assert score("gaussian", _answer(point=far), _gt())["accuracy"] == 0.0


@pytest.mark.parametrize("option, value", [("alpha", 0), ("alpha", -0.5), ("alpha", math.nan), ("alpha", math.inf),
                                           ("alpha", True), ("alpha", "0.5"), ("point_radius", 0.0)])
def test_bad_options_are_named(option, value):
    with pytest.raises(ValueError, match=f"gaussian reward option '{option}': must be a finite number > 0"):
        score("gaussian", _answer(point=(200, 300)), _gt(), **{option: value})
