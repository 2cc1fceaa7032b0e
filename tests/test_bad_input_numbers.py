"""One validation for every number (core.numbers.checked_number): finite, in range, named in the error, never an
OverflowError. The action model, gold records, the ``world play`` loop, the rewards' options and the
library-level reward inputs (``extra_info`` that is no object)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from core.actions import from_mobile_use
from core.numbers import NumberError, checked_number
from core.records import GoldRecordError, from_reward_inputs
from core.rewards.adapters import checked_options, trl_reward_func, verl_compute_score
from core.rewards.registry import REWARDS, RewardOptionError, check_options, score

HUGE = 10 ** 400  # 400 digits: float(HUGE) raises OverflowError
GT = json.dumps({"action": "click", "gt_bbox": [100, 200, 300, 400], "input_text": "no input text"})
ANSWER = '<think>t</think><answer>[{"action": "click", "point": [150, 250], "input_text": "no input text"}]</answer>'


@pytest.mark.parametrize("value, kw, reason", [
    (HUGE, {}, "must be a finite number, got an integer of 1329 bits (beyond the float range)"),
    (10 ** 5000, {}, "must be a finite number, got an integer of 16610 bits (beyond the float range)"),  # beyond Python's int-to-str limit
    ("1e999", {}, "must be a finite number, got '1e999'"),
    (float("nan"), {}, "must be a finite number, got nan"),
    (True, {}, "must be a number, got True"),
    ([1], {}, "must be a number, got [1]"),
    (2.9, {"integer": True}, "must be a whole number, got 2.9"),
    (0, {"minimum": 1}, "must be >= 1, got 0"),
    (1.5, {"maximum": 1}, "must be <= 1, got 1.5"),
    (0.0, {"above": 0}, "must be > 0, got 0.0"),
], ids=["400 digits", "5000 digits", "1e999", "nan", "bool", "list", "fraction", "minimum", "maximum", "above"])
def test_checked_number_names_the_value_and_never_overflows(value, kw, reason):
    with pytest.raises(NumberError) as e:
        checked_number(value, "opt", **kw)
    assert str(e.value) == f"opt: {reason}" and e.value.name == "opt"


def test_checked_number_accepts_what_float_reads():
    assert checked_number("2.5", "x") == 2.5 and checked_number(3.0, "x", integer=True) == 3
    assert isinstance(checked_number(3.0, "x", integer=True), int)


@pytest.mark.parametrize("arguments, field", [
    ({"action": "click", "coordinate": [HUGE, 5]}, "coordinate[0]"),
    ({"action": "click", "coordinate": [5, float("inf")]}, "coordinate[1]"),
    ({"action": "swipe", "coordinate": [5, 5], "coordinate2": [float("nan"), 5]}, "coordinate2[0]"),
    ({"action": "long_press", "coordinate": [5, 5], "time": HUGE}, "time"),
    ({"action": "wait", "time": -1}, "time"),
])
def test_mobile_use_numbers_are_value_errors_naming_the_argument(arguments, field):
    with pytest.raises(ValueError) as e:
        from_mobile_use(arguments)
    assert str(e.value).startswith(f"{field}: ")


def test_gold_record_with_a_huge_integer_is_a_named_ground_truth_error():
    with pytest.raises(GoldRecordError, match=r"field 'gt_bbox': must be a finite number"):
        from_reward_inputs({"action": "click", "gt_bbox": [HUGE, 1, 2, 3]})


def test_world_play_survives_overflowing_and_non_finite_coordinates(tmp_path):
    from core.world.cli import world_app

    lines = [f'json {{"action": "click", "coordinate": [{HUGE}, 5]}}', 'json {"action": "click", "coordinate": [NaN, 5]}',
             "tap 1e999 5", "quit"]
    res = CliRunner().invoke(world_app, ["play", "send_message-3", "--screenshot", str(tmp_path / "s.png")],
                             input="\n".join(lines) + "\n")
    assert res.exit_code == 0, res.output
    assert "invalid: coordinate[0]: must be a finite number, got an integer of 1329 bits" in res.output
    assert "invalid: coordinate[0]: must be a finite number, got nan" in res.output
    assert "ignored: tap coordinates are not finite numbers" in res.output


# ------------------------------------------------------------------------------------------ reward options


@pytest.mark.parametrize("reward, options, message", [
    ("r1gui", {"format_weight": float("nan")}, "option 'format_weight': must be a finite number, got nan"),
    ("r1gui", {"accuracy_weight": -1}, "option 'accuracy_weight': must be >= 0, got -1"),
    ("r1gui", {"point_radius": 0}, "option 'point_radius': must be > 0, got 0"),
    ("r1gui", {"gate_format": "yes"}, "option 'gate_format': must be true or false"),
    ("r1gui", {"mode": "publshed"}, "option 'mode': must be one of default, guir1"),
    ("r1gui", {"fromat_weight": 0.1}, "option 'fromat_weight': unknown option; r1gui takes mode"),
    ("gui_agent", {"weights": {"coord": float("inf")}}, "option 'weights': weights.coord: must be a finite number"),
    ("gui_agent", {"weights": {"cord": 1}}, "option 'weights': unknown part 'cord'"),
    ("aitw", {"type_weight": 1.5}, "option 'type_weight': must be <= 1, got 1.5"),
    ("r1v", {"mode": "guir1"}, "option 'mode': unknown option; r1v takes no options"),
])
def test_bad_reward_options_are_rejected_with_their_name(reward, options, message):
    with pytest.raises(RewardOptionError) as e:
        check_options(reward, options)
    assert message in str(e.value) and f"reward {reward!r}" in str(e.value)
    with pytest.raises(RewardOptionError):  # scoring checks the same way: no NaN score ever comes out
        score(reward, ANSWER, GT, None, **options)


def test_every_reward_accepts_its_own_defaults():
    for name, spec in REWARDS.items():
        assert check_options(name, dict(spec.defaults)) == dict(spec.defaults)


def test_gui_reward_options_env_is_checked_when_the_reward_is_built(monkeypatch):
    monkeypatch.setenv("GUI_REWARD_OPTIONS", '{"format_weight": NaN}')
    with pytest.raises(RewardOptionError, match="'format_weight': must be a finite number, got nan"):
        checked_options("r1gui")
    with pytest.raises(RewardOptionError, match="'accuracy_weight': must be >= 0"):
        trl_reward_func("r1gui", accuracy_weight=-1)  # at trainer config time, before any batch


def test_verl_compute_score_with_extra_info_that_is_no_object_is_a_named_error():
    with pytest.raises(GoldRecordError, match=r"field 'extra_info': invalid JSON"):
        verl_compute_score("gui_r1", ANSWER, GT, extra_info="oops")
    with pytest.raises(GoldRecordError, match=r"field 'extra_info': expected a JSON object string, got int"):
        verl_compute_score("gui_r1", ANSWER, GT, extra_info=5)
    as_json = verl_compute_score("gui_r1", ANSWER, GT, extra_info=json.dumps({"frame": "resized"}))
    assert as_json == verl_compute_score("gui_r1", ANSWER, GT, extra_info={"frame": "resized"})
