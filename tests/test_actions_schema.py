import io

import pytest
from PIL import Image

from core.actions import (
    ACTION_NAMES,
    Action,
    ActionArgs,
    canonical_action_name,
    from_mobile_use,
    scroll_to_swipe,
    swipe_to_scroll,
    to_mobile_use,
)
from core.data.unified import UnifiedWriter, iter_steps, iter_unified_batches
from core.schema import HistoryItem, Step, StepValidationError

GUIR1_NAMES = ["click", "long_press", "type", "select", "scroll", "open_app", "press_back", "press_home",
               "press_recent", "press_enter", "enter", "complete", "close/delete", "wait", "impossible", "hotkey",
               "moveto", "doubleclick", "rightclick", "press_tab", "press_space", "press_down", "press_pgdn"]
MOBILE_USE_NAMES = ["click", "long_press", "swipe", "type", "answer", "system_button", "wait", "terminate"]


def test_action_space_is_the_union():
    assert set(GUIR1_NAMES) | set(MOBILE_USE_NAMES) <= ACTION_NAMES
    assert canonical_action_name(" Enter ") == "press_enter"


@pytest.mark.parametrize(
    "action",
    [
        Action(type="click", point=(10, 20)),
        Action(type="long_press", point=(10, 20), duration=2),
        Action(type="type", text="hello world"),
        Action(type="scroll", direction="down"),
        Action(type="scroll", direction="left"),
        Action(type="open_app", text="Chrome"),
        Action(type="press_back"),
        Action(type="press_home"),
        Action(type="press_recent"),
        Action(type="press_enter"),
        Action(type="complete"),
        Action(type="impossible"),
        Action(type="wait", duration=2),
        Action(type="hotkey", text="ctrl+c"),
        Action(type="answer", text="42"),
    ],
)
def test_mobile_use_round_trip(action):
    call = to_mobile_use(action, 1080, 2400)
    assert call is not None
    back = from_mobile_use(call)
    assert back.type == action.type
    assert back.point == action.point and back.text == action.text and back.direction == action.direction


def test_desktop_only_actions_have_no_mobile_form():
    for a in [Action(type="close/delete"), Action(type="doubleclick", point=(1, 1)), Action(type="press_tab")]:
        assert to_mobile_use(a, 100, 100) is None


def test_scroll_swipe_directions_are_inverse():
    for d in ("up", "down", "left", "right"):
        s, e = scroll_to_swipe(d, 1080, 2400)
        assert swipe_to_scroll(s, e) == d
    # scrolling down moves the finger up
    s, e = scroll_to_swipe("down", 1080, 2400)
    assert e[1] < s[1]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"type": "teleport"}, "unknown action"),
        ({"type": "click"}, "needs a point"),
        ({"type": "scroll", "direction": "diagonal"}, "direction"),
        ({"type": "type"}, "needs text"),
    ],
)
def test_bad_actions_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Action(**kwargs)


def _png(w=40, h=80) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (200, 10, 10)).save(buf, format="PNG")
    return buf.getvalue()


def _step(**over):
    fields = dict(id="s1", image=_png(), image_size=(40, 80), instruction="open settings",
                  action=Action(type="click", point=(10, 10)), bbox=(5, 5, 20, 20))
    fields.update(over)
    return Step.build("row 7", **fields)


@pytest.mark.parametrize(
    "over, field",
    [
        ({"bbox": (5, 5, 50, 20)}, "outside"),
        ({"bbox": (20, 5, 5, 20)}, "x2 < x1"),
        ({"instruction": "  "}, "instruction"),
        ({"action": Action(type="click", point=(100, 10))}, "action.point"),
        ({"image_size": (0, 10)}, "image_size"),
        ({"task_type": "medium"}, "task_type"),
    ],
)
def test_step_validation_names_record_and_field(over, field):
    with pytest.raises(StepValidationError) as e:
        _step(**over)
    assert "row 7" in str(e.value) and field in str(e.value)


def test_unified_round_trip_and_atomic_write(tmp_path):
    steps = [
        _step(id=f"s{i}", history=(HistoryItem(action=Action(type="press_back"), description="go back"),),
              extra={"episode_id": "e1", "step_index": i})
        for i in range(5)
    ]
    out = tmp_path / "u.parquet"
    with UnifiedWriter(out, batch_rows=2) as w:
        w.write_all(steps)
        assert not out.exists()  # only the .tmp exists while writing
    assert out.exists() and not (tmp_path / "u.parquet.tmp").exists()
    back = list(iter_steps(out))
    assert back == steps
    assert sum(b.num_rows for b in iter_unified_batches(out, batch_size=2)) == 5


def test_failed_write_leaves_no_file(tmp_path):
    out = tmp_path / "u.parquet"
    with pytest.raises(RuntimeError):
        with UnifiedWriter(out) as w:
            w.write(_step())
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_parsed_and_gold_actions_carry_every_action_argument():
    """ActionArgs is Action's fields but ``type``; a parsed answer and a gold record built from an Action's
    arguments keep each of them, and nothing is positional (they are keyword-only)."""
    import dataclasses

    from core.geometry import Frame
    from core.parsers import ParsedAction
    from core.records import GoldRecord

    names = [f.name for f in dataclasses.fields(ActionArgs)]
    assert names == [n for n in Action.model_fields if n != "type"]
    a = Action(type="swipe", point=(1.0, 2.0), end_point=(3.0, 4.0), text="t", direction="up", button="Back",
               status="success", duration=1.5)
    args = {n: getattr(a, n) for n in names}
    for held in (ParsedAction(a.type, **args), GoldRecord(action=a.type, frame=Frame.ORIGINAL, **args)):
        assert {n: getattr(held, n) for n in names} == args
    with pytest.raises(TypeError):
        ActionArgs((1.0, 2.0))
