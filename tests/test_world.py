"""The simulated phone (core.world): determinism, gold sequences, boxes vs pixels, hostile input, gymnasium API."""

from __future__ import annotations

import math
import warnings

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.world as world
from core.actions import ACTION_NAMES, Action
from core.world.content import make_content
from core.world.device import SCREENS, make_theme
from core.world.env import EpisodeOverError
from core.world.phone import Phone, evaluate
from core.world.render import FRAMES, SPRITES, Renderer
from core.world.tasks import FAMILIES, HELD_OUT_FAMILIES, SPLITS


def gold_episode(env: world.SimPhoneEnv, task, limit: int = 40):
    """(frames, infos) of the gold sequence followed in ``env`` from reset."""
    obs, info = env.reset(options={"task": task})
    frames, infos = [obs.copy()], [info]
    for _ in range(limit):
        if info["gold_action"] is None:
            break
        obs, _, terminated, _, info = env.step(info["gold_action"])
        frames.append(obs.copy())
        infos.append(info)
        if terminated:
            break
    return frames, infos


def sample_tasks(split: str, per_family: int = 2):
    seen: dict[str, int] = {}
    out = []
    for t in world.list_tasks(split):
        if seen.get(t.family, 0) < per_family:
            seen[t.family] = seen.get(t.family, 0) + 1
            out.append(t)
    return out


def test_splits_hold_out_seeds_and_families():
    train, test_seed, test_family = (world.list_tasks(s) for s in ("train", "test_seed", "test_family"))
    assert {t.seed for t in train}.isdisjoint({t.seed for t in test_seed})
    assert {t.family for t in test_seed} == {t.family for t in train}
    assert {t.family for t in test_family} == set(HELD_OUT_FAMILIES)
    assert not {t.family for t in train} & set(HELD_OUT_FAMILIES)
    assert "calculator" not in {t.app for t in train}  # a whole app never trained on
    assert [t.id for t in world.list_tasks("test")] == [t.id for t in test_seed + test_family]
    assert len({t.id for t in train + test_seed + test_family}) == len(train) + len(test_seed) + len(test_family)
    assert {t.split for t in test_family} == {"test_family"}
    assert world.get_task(train[7].id) == train[7]
    assert len(FAMILIES) >= 8 and len({f.app for f in FAMILIES.values()}) >= 6
    with pytest.raises(ValueError, match="unknown split"):
        world.list_tasks("validation")
    with pytest.raises(ValueError, match="unknown task family"):
        world.get_task("fly_to_mars-3")


def test_every_task_is_solved_by_its_gold_sequence():
    """Every task of every split: following the gold plan from the start reaches the goal (phone level, no pixels;
    the env-level runs below render the same plans)."""
    for split in SPLITS:
        for task in world.list_tasks(split):
            fam = FAMILIES[task.family]
            phone = Phone(SCREENS[task.screen], make_content(task.seed),
                          Renderer(SCREENS[task.screen], make_theme(task.theme, "blue"), task.font_scale))
            if task.params["start"] != "home":
                phone.apply(Action(type="open_app", text=task.params["start"]))
            assert not fam.goal(phone, task.params), f"{task.id} starts solved"
            for _ in range(25):
                step = fam.plan(phone, task.params)
                if step is None:
                    break
                assert phone.apply(step.action) is None, f"{task.id}: gold step {step} was ignored"
            assert fam.goal(phone, task.params), f"{task.id} not solved by its gold plan"


@pytest.mark.parametrize("split", ["train", "test_seed", "test_family"])
def test_gold_episodes_in_the_env_reward_once_and_terminate(split):
    env = world.SimPhoneEnv()
    for task in sample_tasks(split):
        _, infos = gold_episode(env, task)
        last = infos[-1]
        assert last["success"] and last["gold_action"] is None and last["step_instruction"] is None
        assert all(i["ignored"] is None for i in infos)
        assert all(i["gold_match"] is True for i in infos[1:])  # core.matching: each gold step is right
        assert infos[0]["gold_record"].box == (tuple(infos[0]["gold_box"]) if infos[0]["gold_box"] else None)
        assert all(i["step_instruction"] for i in infos[:-1])
        for i in infos[:-1]:  # every tap's gold box holds the tap and lies on the screen
            g, box = i["gold_action"], i["gold_box"]
            if g.type == "click":
                assert box[0] <= g.point[0] <= box[2] and box[1] <= g.point[1] <= box[3]
                assert 0 <= box[0] < box[2] <= i["screen_size"][0] and 0 <= box[1] < box[3] <= i["screen_size"][1]


def test_reward_terminated_truncated_semantics():
    env = world.SimPhoneEnv(max_steps=3)
    obs, info = env.reset(options={"task": "settings_toggle-0"})
    rewards = []
    for _ in range(10):
        obs, r, term, trunc, info = env.step(info["gold_action"])
        rewards.append(r)
        if term:
            break
    assert rewards[-1] == 1.0 and sum(rewards) == 1.0 and term and not trunc
    with pytest.raises(EpisodeOverError, match="call reset"):  # gymnasium's rule: reset after the end
        env.step(Action(type="wait"))
    env.reset(options={"task": "settings_toggle-0"})
    for _ in range(3):
        _, r, term, trunc, info = env.step(Action(type="wait"))
    assert trunc and not term and r == 0.0 and info["step"] == 3
    env.reset(options={"task": "settings_toggle-0", "max_steps": 50})
    _, r, term, trunc, _ = env.step(Action(type="complete"))
    assert term and not trunc and r == 0.0  # the agent ended the episode without reaching the goal


def test_same_seed_gives_byte_identical_screens():
    tasks = [world.get_task(i) for i in ("send_message-3", "set_alarm-7", "open_contact-5", "calculator-200001")]
    first = [gold_episode(world.SimPhoneEnv(), t)[0] for t in tasks]
    SPRITES.clear()
    FRAMES.clear()  # redraw everything from scratch
    second = [gold_episode(world.SimPhoneEnv(), t)[0] for t in tasks]
    for a, b in zip(first, second, strict=True):
        assert len(a) == len(b)
        assert all(x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))
    # and different seeds give different phones
    assert first[0][0].tobytes() != gold_episode(world.SimPhoneEnv(), world.get_task("send_message-4"))[0][0].tobytes()


def test_widget_boxes_match_drawn_pixels():
    """Removing one widget from a screen changes pixels only inside its box, and (unless another widget lies on
    it or a list cuts it) changes some: the box is where the widget is drawn. Every kind of screen once, on the
    720x1600 phone (kept small so the test is fast)."""
    seen, checked = _check_screens_of(("send_message-13", "set_alarm-1", "create_note-28", "maps_search-2",
                                       "calculator-200025", "settings_toggle-2", "open_contact-7",
                                       "delete_note-200002"))
    assert len(seen) >= 15 and checked > 300, (len(seen), checked)


def test_curriculum_widget_boxes_match_drawn_pixels():
    """The same on the curriculum's screens (boards, app tiles, the scrolling grid before and after a scroll, the
    text box), on every family's first validation task."""
    from core.world.curriculum import CURRICULUM_FAMILIES

    seen, checked = _check_screens_of([f"{f}-2000000" for f in CURRICULUM_FAMILIES])
    assert {r for r, _, _ in seen} >= {"board", "pan", "textbox", "settings_page"} and checked > 60, (seen, checked)


def _check_screens_of(task_ids) -> tuple[set, int]:
    """Follow each task's gold plan and check every widget of each new kind of screen (see above); returns the
    screen kinds seen and the number of widgets checked."""
    env = world.SimPhoneEnv()
    checked, seen = 0, set()
    for task_id in task_ids:
        env.reset(options={"task": task_id})
        info, term = env._info(None), False
        while True:
            phone = env.phone
            state = (phone.route[0], phone.dialog and phone.dialog[0], phone.focus is not None)
            if state not in seen or phone.route == ("pan",):
                seen.add(state)
                widgets = phone.widgets()
                full = env.renderer.frame(widgets, phone.status_h, phone.nav_h)
                for k, w in enumerate(widgets):
                    other = env.renderer.frame(widgets[:k] + widgets[k + 1:], phone.status_h, phone.nav_h)
                    ys, xs = np.nonzero(np.any(other != full, axis=2))
                    x1, y1, x2, y2 = w.visible_box
                    covered = any(_overlap(w.visible_box, o.visible_box) for o in widgets[k + 1:])
                    if not covered and w.clip is None:  # a clipped row's visible sliver may hold no ink
                        assert ys.size, f"{task_id} {phone.route}: {w.id} draws nothing"
                    if ys.size:
                        assert x1 <= xs.min() and xs.max() < x2 and y1 <= ys.min() and ys.max() < y2, (
                            f"{task_id} {phone.route}: {w.id} drawn outside its box {w.visible_box}")
                    checked += 1
            if info["gold_action"] is None or term:  # the screen after the last step is checked too
                break
            _, _, term, _, info = env.step(info["gold_action"])
    return seen, checked


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_ignored_actions_change_nothing_and_say_why():
    env = world.SimPhoneEnv()
    obs, info = env.reset(options={"task": "send_message-13"})  # starts on the home screen
    for action, reason in [
        (Action(type="type", text="hello"), "no text field has focus"),
        (Action(type="click", point=(5.0, float(info["screen_size"][1]) * 0.9)), "no widget"),
        (Action(type="click", point=(1e9, 5.0)), "outside"),
        (Action(type="press_back"), "home screen"),
        (Action(type="doubleclick", point=(10.0, 10.0)), "no effect on a phone"),
        ({"action": "system_button", "button": "Home"}, "already on the home screen"),
    ]:
        obs2, r, term, trunc, info2 = env.step(action)
        assert reason in (info2["ignored"] or ""), (action, info2["ignored"])
        assert info2["gold_match"] is False  # the gold step was a tap on the Messages icon
        assert obs2.tobytes() == obs.tobytes() and info2["widgets"] == info["widgets"] and r == 0.0
        info2["widgets"][0]["box"][0] = -1  # a caller editing its info never reaches the env's next info


def test_android_back_home_recent_and_keyboard():
    env = world.SimPhoneEnv()
    _, info = env.reset(options={"task": "send_message-3"})
    while info["route"] != "thread/Emma Moreau":
        _, _, _, _, info = env.step(info["gold_action"])
    _, _, _, _, info = env.step(info["gold_action"])  # tap the message field
    assert any(w["role"] == "key" for w in info["widgets"]) and env.phone.focus == "message_input"
    _, _, _, _, info = env.step(Action(type="type", text="hi"))
    assert env.phone.fields["message_input"] == "hi"
    _, _, _, _, info = env.step(Action(type="press_back"))  # Back hides the keyboard first
    assert info["route"] == "thread/Emma Moreau" and not any(w["role"] == "key" for w in info["widgets"])
    _, _, _, _, info = env.step({"action": "system_button", "button": "Back"})
    assert info["route"] == "messages"
    _, _, _, _, info = env.step(Action(type="press_recent"))
    assert info["route"] == "recents"
    assert env.phone.content.app_labels["messages"] in {w["text"] for w in info["widgets"] if w["role"] == "listitem"}
    _, _, _, _, info = env.step(Action(type="press_home"))
    assert info["route"] == "home"
    _, _, _, _, info = env.step({"action": "open", "text": "Settings"})
    assert info["route"] == "settings"


def test_scroll_reveals_rows_below_the_fold():
    env = world.SimPhoneEnv()
    env.reset(options={"task": "open_contact-5"})
    env.step(Action(type="open_app", text="Contacts"))
    if env.phone.tabs["contacts"] != "All":
        env.step(Action(type="click", point=env.phone.find("tab_all").center))
    before = {w.id for w in env.phone.widgets()}
    assert "contact_25" not in before  # a list longer than the screen
    _, _, _, _, info = env.step({"action": "swipe", "coordinate": [540, 1700], "coordinate2": [540, 700]})
    assert info["ignored"] is None and {w["id"] for w in info["widgets"]} != before
    for _ in range(10):
        env.step(Action(type="scroll", direction="down"))
    _, _, _, _, info = env.step(Action(type="scroll", direction="down"))
    assert "already at its end" in info["ignored"]
    assert any(w["id"] == f"contact_{len(env.phone.content.contacts) - 1}" for w in info["widgets"])


def test_calculator_never_evaluates_python():
    assert evaluate("12+7*3") == "33" and evaluate("7/2") == "3.5" and evaluate("8-10") == "-2"
    for bad in ("", "1+", "+1", "1//2", "__import__('os')", "1/0", "2**8"):
        assert evaluate(bad) == "Error"


def test_malformed_input_raises_clear_errors():
    env = world.SimPhoneEnv()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(Action(type="wait"))
    env.reset(options={"task": "maps_search-1"})
    for bad in (None, "click(10, 10)", 42, [1, 2], {"action": "teleport"}, {"action": "click"}):
        with pytest.raises(ValueError):
            env.step(bad)
    with pytest.raises(ValueError, match="task"):
        env.reset(options={"task": 3.5})


_points = st.tuples(st.floats(allow_nan=True, allow_infinity=True, width=32),
                    st.floats(allow_nan=True, allow_infinity=True, width=32))


@st.composite
def hostile_actions(draw):
    kind = draw(st.sampled_from(sorted(ACTION_NAMES)))
    fields = {"type": kind, "point": draw(_points), "end_point": draw(_points),
              "text": draw(st.text(max_size=300)) or "x", "direction": draw(st.sampled_from(["up", "down", "left", "right"])),
              "button": draw(st.sampled_from(["Back", "Home", "Menu", "Enter", "Power"])), "status": "failure"}
    try:
        return Action(**fields)
    except ValueError:
        return Action(type="wait")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(hostile_actions(), st.dictionaries(st.sampled_from(["action", "coordinate", "text", "button"]),
                                                              st.one_of(st.text(max_size=20), st.lists(st.floats()))),
                          ), min_size=1, max_size=12),
       st.sampled_from(["send_message-3", "set_alarm-7", "create_note-4", "calculator-200001"]))
def test_hostile_actions_never_crash(actions, task_id):
    env = world.SimPhoneEnv()
    obs, info = env.reset(options={"task": task_id})
    for a in actions:
        try:
            obs, r, term, trunc, info = env.step(a)
        except ValueError:
            continue  # malformed input: a clear error, the rollout counts it as an invalid action
        assert obs.shape == (info["screen_size"][1], info["screen_size"][0], 3) and obs.dtype == np.uint8
        assert r in (0.0, 1.0) and isinstance(info["widgets"], list)
        assert info["ignored"] is None or isinstance(info["ignored"], str)
        g = info["gold_action"]
        assert g is None or all(math.isfinite(v) for v in (g.point or (0.0, 0.0)))
        if term or trunc:  # the contract: reset after the end
            obs, info = env.reset(options={"task": task_id})


@pytest.mark.parametrize("task_id", ["maps_search-3", "send_message-13", "set_alarm-1"])
def test_hostile_text_in_focused_fields_is_typed_drawn_and_submitted(task_id):
    """Newlines, control characters, emoji and 5,000-character strings go into the focused field (capped), are
    drawn, and submitting them (Send, Search, OK, Enter) never crashes."""
    env = world.SimPhoneEnv()
    _, info = env.reset(options={"task": task_id})
    while env.phone.focus is None:
        _, _, _, _, info = env.step(info["gold_action"])
    for text in ("a\nb", "\x00\x07\r\t", "\U0001f600" * 50, "x" * 5000):
        obs, _, _, _, info = env.step(Action(type="type", text=text))
        assert info["ignored"] is None and obs.shape[2] == 3
    assert len(env.phone.fields[env.phone.focus]) == 200  # MAX_FIELD
    submit = next(w for w in env.phone.widgets() if w.id in ("send", "dialog_ok", "search"))
    _, _, _, _, info = env.step(Action(type="click", point=submit.center))
    assert (info["ignored"] is None) == submit.enabled  # OK stays disabled: the text is not a time
    env.step(Action(type="press_enter"))
    for w in env.phone.widgets():  # whatever screen this is, every widget draws
        assert env.renderer.sprite(w)[0].dtype == np.uint8


def test_gymnasium_registration_and_checker():
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(world.ENV_ID)  # wraps with gymnasium's passive env checker and order enforcing
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test
        check_env(env.unwrapped)  # gymnasium's full checker: seeding, spaces, new observation data every call
    obs, info = env.reset(seed=3, options={"task": "open_note-2"})
    assert env.observation_space.contains(obs)
    obs, r, term, trunc, info = env.step(info["gold_action"])
    assert set(info) >= {"task_id", "family", "app", "instruction", "step_instruction", "screen_size", "widgets",
                         "success", "gold_action", "gold_box", "ignored", "step"}
    sampled = env.action_space.sample()
    assert isinstance(sampled, Action) and env.action_space.contains(sampled)
    obs, info = env.reset(seed=11)  # no task: a train task drawn from the seed
    assert info["task_id"] in {t.id for t in world.list_tasks("train")}
    env.close()
