"""The curriculum of the simulated phone (core.world.curriculum): its families, splits, determinism, gold plans,
the random baseline's designed success rates, export, play, rollout and gymnasium's checker."""

from __future__ import annotations

import json
import math
import random
import warnings
from collections import Counter

import gymnasium
import pandas as pd
import pytest
from typer.testing import CliRunner

import core.world as world
from core.actions import Action
from core.cli import app
from core.inference.backends.baseline import RANDOM_ACTIONS, random_action
from core.rollout.envs import get_env
from core.world.curriculum import (
    AGENT_FAMILIES,
    BOARD_LEVELS,
    CURRICULUM_FAMILIES,
    MULTI_STEP_FAMILIES,
    TEXT_FAMILIES,
    VISUAL_FAMILIES,
)
from core.world.content import make_content
from core.world.device import SCREENS, make_theme
from core.world.phone import Phone
from core.world.render import FRAMES, SPRITES, Renderer
from core.world.tasks import CURRICULUM_SPLITS, FAMILIES, SPLITS

runner = CliRunner(env={"COLUMNS": "400"})
P_KIND = 1 / len(RANDOM_ACTIONS)  # the random baseline draws each action kind with this probability


def reset(task_id: str):
    env = world.SimPhoneEnv()
    obs, info = env.reset(options={"task": task_id})
    return env, obs, info


def area(box) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def test_splits_are_disjoint_and_list_every_family_seed_by_seed():
    seeds = {name: {t.seed for t in world.list_tasks(name)} for name in ("curriculum_val", "curriculum_test")}
    _, first_seed, n_seeds = CURRICULUM_SPLITS["curriculum_train"]
    train = world.list_tasks("curriculum_train", 9 * 300)  # the whole split is 45,000 tasks: its seed range instead
    assert {t.seed for t in train} == set(range(first_seed, first_seed + 300)) and n_seeds >= 1000
    seeds["curriculum_train"] = set(range(first_seed, first_seed + n_seeds))
    assert {t.split for t in train} == {"curriculum_train"}
    names = list(seeds)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert seeds[a].isdisjoint(seeds[b]), (a, b)
    first = world.list_tasks("curriculum_train", n=len(CURRICULUM_FAMILIES))
    assert [t.family for t in first] == list(CURRICULUM_FAMILIES)  # the first N tasks cover every family
    assert [t.id for t in world.list_tasks("curriculum_test", 20)] == [t.id for t in world.list_tasks("curriculum_test")[:20]]
    assert {t.split for t in world.list_tasks("curriculum_val")} == {"curriculum_val"}
    val, test = ({t.seed for t in world.list_tasks(s)} for s in ("val_seed", "test_seed"))
    assert val and val.isdisjoint(test) and val.isdisjoint({t.seed for t in world.list_tasks("train")})
    assert {t.family for t in world.list_tasks("val_seed")} == {t.family for t in world.list_tasks("train")}
    assert not set(CURRICULUM_FAMILIES) & {t.family for s in SPLITS for t in world.list_tasks(s)}
    assert set(get_env("sim-phone").splits) == set(world.SPLIT_NAMES)
    with pytest.raises(ValueError, match="unknown split"):
        world.list_tasks("curriculum_validation")


def test_skip_leaves_out_the_layout_seeds_an_earlier_export_took(tmp_path):
    """`world export --skip K` (the demo's sharpening prompts: seeds its SFT never used) continues the family-filtered
    list where `--n K` ended, seed by seed."""
    fams = ["scroll_direction", "go_back"]
    first, rest = world.list_tasks("curriculum_train", 6, fams), world.list_tasks("curriculum_train", 4, fams, skip=6)
    assert [t.id for t in first + rest] == [t.id for t in world.list_tasks("curriculum_train", 10, fams)]
    assert min(t.seed for t in rest) == max(t.seed for t in first) + 1
    out = tmp_path / "later.parquet"
    done = runner.invoke(app, ["world", "export", "--split", "curriculum_train", "--families", ",".join(fams),
                                    "--skip", "6", "--n", "2", "--levels", "high", "--output", str(out)])
    assert done.exit_code == 0, done.output
    assert sorted(pd.read_parquet(out)["id"].str.split("/").str[1]) == sorted(t.id for t in rest[:2])
    past = runner.invoke(app, ["world", "export", "--split", "curriculum_val", "--skip", "99999", "--output",
                                    str(tmp_path / "none.parquet")])
    assert past.exit_code == 2 and "--skip 99999 leaves no task" in past.output
    for flag in ("--skip", "--n"):  # beyond Python's counts: named, never blamed on --families
        huge = runner.invoke(app, ["world", "export", "--split", "curriculum_val", flag, str(10**20), "--output",
                                   str(tmp_path / "huge.parquet")])
        assert huge.exit_code == 2 and f"'{flag}'" in huge.output and "--families" not in huge.output, huge.output
        assert not (tmp_path / "huge.parquet").exists()


def test_families_are_text_or_visual():
    assert CURRICULUM_FAMILIES == (*TEXT_FAMILIES, *VISUAL_FAMILIES) and set(CURRICULUM_FAMILIES) <= set(FAMILIES)
    assert {FAMILIES[f].max_actions for f in CURRICULUM_FAMILIES} == {1, 2}


def test_tasks_are_short_and_on_the_small_screen():
    tasks = world.list_tasks("curriculum_val")
    assert {t.screen for t in tasks} == {"square_448"} and {t.font_scale for t in tasks} == {1.0}
    for t in tasks:
        assert len(t.instruction.split()) <= 8, t.instruction
    by_family = {f: [t.instruction for t in tasks if t.family == f] for f in CURRICULUM_FAMILIES}
    assert set(by_family["go_back"]) == {"Go back"}
    assert {i.split()[1] for i in by_family["scroll_direction"]} == {"down", "up", "left", "right"}
    assert all(i.startswith("Type '") and i.endswith("' in the box") for i in by_family["type_in_box"])
    assert all(i.startswith("Tap the ") for f in VISUAL_FAMILIES for i in by_family[f])


def test_board_tiles_are_distinct_and_span_a_token_at_the_demo_budget():
    """Every tile has its own (colour, shape); at max_pixels 50176 the 448 px screen becomes 224 px = 8 x 8 tokens
    of 28 px, so a tile's sides must be >= 56 screen px."""
    for level, (rows, cols, _) in BOARD_LEVELS.items():
        for task in world.list_tasks("curriculum_val")[:90]:
            if task.family != level:
                continue
            env, _, info = reset(task.id)
            tiles = [w for w in info["widgets"] if w["role"] == "tile"]
            assert len(tiles) == rows * cols and len({w["text"] for w in tiles}) == rows * cols
            assert min(min(w["box"][2] - w["box"][0], w["box"][3] - w["box"][1]) for w in tiles) >= 56
            target = next(w for w in tiles if w["text"] == task.instruction.removeprefix("Tap the "))
            assert info["gold_box"] == target["box"]


def test_same_seed_gives_byte_identical_screens_and_seeds_differ():
    ids = [t.id for t in world.list_tasks("curriculum_test", len(CURRICULUM_FAMILIES))]

    def screens():
        out = []
        for task_id in ids:
            env, obs, info = reset(task_id)
            out.append(obs.tobytes())
            obs, *_ = env.step(info["gold_action"])
            out.append(obs.tobytes())
        return out

    first = screens()
    SPRITES.clear()
    FRAMES.clear()
    assert screens() == first
    assert world.get_task(ids[4]) == world.get_task(ids[4])
    other = [t.id for t in world.list_tasks("curriculum_val", len(CURRICULUM_FAMILIES))]
    boards = [(reset(a)[1].tobytes(), reset(b)[1].tobytes()) for a, b in zip(ids, other, strict=True)
              if a.startswith("tap_tile")]
    assert all(x != y for x, y in boards)


@pytest.mark.parametrize("family", CURRICULUM_FAMILIES)
def test_gold_plan_solves_every_validation_task_in_its_action_budget(family):
    env = world.SimPhoneEnv()
    for task in world.list_tasks("curriculum_val"):
        if task.family != family:
            continue
        obs, info = env.reset(options={"task": task})
        assert not info["success"]
        rewards = []
        while info["gold_action"] is not None:
            obs, r, term, trunc, info = env.step(info["gold_action"])
            rewards.append(r)
            assert info["ignored"] is None and info["gold_match"] is True
            if term or trunc:
                break
        assert info["success"] and term and not trunc and rewards[-1] == 1.0, task.id
        assert len(rewards) == (2 if family == "tap_two_tiles" else 1)


def test_a_wrong_action_ends_the_episode_and_pinned_screens_stay():
    env, _, info = reset("tap_tile_3x3-2000000")
    wrong = next(w for w in info["widgets"] if w["role"] == "tile" and w["box"] != info["gold_box"])
    _, r, term, trunc, info = env.step(Action(type="click", point=((wrong["box"][0] + wrong["box"][2]) / 2,
                                                                  (wrong["box"][1] + wrong["box"][3]) / 2)))
    assert r == 0.0 and term and not trunc and not info["success"]
    env, _, info = reset("scroll_direction-2000000")
    _, _, term, _, info = env.step(Action(type="press_home"))
    assert info["ignored"] == "the screen is pinned: Home does nothing" and term and info["route"] == "pan"
    # in order only: the second tile first, then the first, fails; the plan shows the way after a wrong tap
    task = world.get_task("tap_two_tiles-2000003")
    env = world.SimPhoneEnv()
    obs, info = env.reset(options={"task": task, "max_steps": 5})
    first, second = (env.phone.board[i] for i in task.params["targets"])
    for tile in (second, first):
        _, _, term, trunc, info = env.step(Action(type="click", point=tile.center))
    assert not info["success"] and term and not trunc and info["gold_action"].point == second.center
    phone = env.phone
    assert phone.tapped == [second.id, first.id] and FAMILIES["tap_two_tiles"].goal(phone, task.params) is False
    phone.apply(Action(type="click", point=second.center))
    assert FAMILIES["tap_two_tiles"].goal(phone, task.params)  # the last two taps, in order


def test_typing_is_scored_by_the_text_f1_rule():
    fam = FAMILIES["type_in_box"]
    for text, ok in (("blue sky", True), ("sky", True), ("blue sky and sea", True), ("hello", False),
                     ("blue skies above the town", False)):
        env, _, info = reset("type_in_box-2000000")
        task = env.task
        target = task.params["text"]
        typed = text.replace("blue", target.split()[0]).replace("sky", target.split()[1])
        _, _, _, _, info = env.step(Action(type="type", text=typed))
        assert info["success"] is ok and fam.goal(env.phone, task.params) is ok, typed


def started_phone(task) -> Phone:
    """The task's phone in its start state, without drawing a screenshot."""
    screen = SCREENS[task.screen]
    phone = Phone(screen, make_content(task.seed), Renderer(screen, make_theme(task.theme, "blue"), 1.0))
    FAMILIES[task.family].setup(phone, task.params)
    return phone


def random_success(task) -> bool:
    """One episode of the random baseline at the phone level (no pixels): the same draws as the rollout's
    ``--policy random`` with seed 0, within the family's action budget."""
    fam, phone = FAMILIES[task.family], started_phone(task)
    for step in range(fam.max_actions):
        action = random_action(f"0|{task.id}|{step}", (phone.screen.width, phone.screen.height))
        phone.apply(action)
        if fam.goal(phone, task.params):
            return True
        if action.type == "complete":
            return False
    return False


def designed_rate(task) -> float:
    """The random baseline's success probability worked out from the screen: a uniformly random kind, a uniformly
    random point (taps), a uniformly random scroll direction, words never matching the phrases."""
    env, _, info = reset(task.id)
    screen = 448 * 448
    widgets = {w["id"]: w for w in info["widgets"]}
    if task.family == "go_back":  # Back, or a tap on the Back / Navigate-up buttons
        return P_KIND + P_KIND * (area(widgets["nav_back"]["box"]) + area(widgets["navigate_up"]["box"])) / screen
    if task.family == "scroll_direction":
        return P_KIND / 4
    if task.family == "type_in_box":
        return 0.0
    if task.family == "tap_two_tiles":
        return math.prod(P_KIND * area(env.phone.board[i].box) / screen for i in task.params["targets"])
    return P_KIND * area(info["gold_box"]) / screen


@pytest.mark.parametrize("family", CURRICULUM_FAMILIES)
def test_random_baseline_succeeds_at_the_designed_rate(family):
    tasks = [world.make_task(family, s) for s in range(1_000_000, 1_002_000)]
    sample = random.Random(family).sample(tasks, 100)
    expected = sum(designed_rate(t) for t in sample) / len(sample)  # averaged over layouts
    hits = sum(random_success(t) for t in tasks)
    sigma = math.sqrt(max(expected * (1 - expected), 1e-4) / len(tasks))
    assert abs(hits / len(tasks) - expected) <= 4 * sigma + 0.002, (family, hits / len(tasks), expected)
    if family in TEXT_FAMILIES[1:] or family in VISUAL_FAMILIES:
        assert hits / len(tasks) <= 0.03  # the model has to learn something to beat it


def test_tap_hit_rates_span_the_designed_levels():
    """A uniformly random tap hits the target tile with probability tile area / screen area: about 20% on the
    2x2 board down to about 5% on the 4x4 board and the small 2x2 tiles."""
    rates = {}
    for level in BOARD_LEVELS:
        env, _, info = reset(f"{level}-2000000")
        rates[level] = area(info["gold_box"]) / (448 * 448)
    assert 0.18 <= rates["tap_tile_2x2"] <= 0.25
    assert 0.07 <= rates["tap_tile_3x3"] <= 0.10
    assert 0.04 <= rates["tap_tile_4x4"] <= 0.06 and 0.04 <= rates["tap_tile_2x2_small"] <= 0.06


def test_export_cli_writes_rows_with_their_family(tmp_path):
    out = tmp_path / "cur.parquet"
    r = runner.invoke(app, ["world", "export", "--split", "curriculum_train", "--n", "90", "--output", str(out)])
    assert r.exit_code == 0, r.output
    df = pd.read_parquet(out)
    extra = df["extra"].map(json.loads)
    families = Counter(e["family"] for e in extra)
    assert set(families) == set(CURRICULUM_FAMILIES)
    assert set(df["split"]) == {"curriculum_train"} and set(df["source"]) == {"sim_phone"}
    high = df[df["task_type"] == "high"]
    assert len(high) == 90 + 10  # one row per gold step: tap_two_tiles has two
    assert set(df["image_width"]) == {448} and set(df["image_height"]) == {448}
    for _, row in high.iterrows():
        fam = json.loads(row["extra"])["family"]
        assert row["id"].startswith(f"sim_phone/{fam}-")
    r = runner.invoke(app, ["world", "export", "--split", "curriculum_nope", "--output", str(tmp_path / "x.parquet")])
    assert r.exit_code == 2 and "unknown split" in r.output and not (tmp_path / "x.parquet").exists()


def test_world_play_and_rollout_take_curriculum_tasks(tmp_path):
    shot = tmp_path / "p.png"
    r = runner.invoke(app, ["world", "play", "scroll_direction-3000001", "--screenshot", str(shot)],
                      input="home\ngold\n")
    assert r.exit_code == 0, r.output
    assert "ignored: the screen is pinned" in r.output and "the task's action budget is spent" in r.output
    r = runner.invoke(app, ["world", "play", "open_app_tile-3000001", "--screenshot", str(shot)], input="gold\n")
    assert r.exit_code == 0 and "goal reached" in r.output
    out = {}
    for policy in ("scripted", "random"):
        r = runner.invoke(app, ["rollout", "--env", "sim-phone", "--tasks", "curriculum_test", "--episodes", "45",
                                "--policy", policy, "--gallery", "0", "--output", str(tmp_path / policy),
                                "--json", str(tmp_path / f"{policy}.json")])
        assert r.exit_code == 0, r.output
        out[policy] = json.loads((tmp_path / f"{policy}.json").read_text())
    assert out["scripted"]["success_rate"] == 1.0 and set(out["scripted"]["per_family"]) == set(CURRICULUM_FAMILIES)
    assert out["random"]["success_rate"] < 0.2


def test_gymnasium_checker_passes_on_curriculum_tasks():
    from gymnasium.utils.env_checker import check_env

    for task_id in ("tap_two_tiles-3000000", "type_in_box-3000000"):
        env = gymnasium.make(world.ENV_ID, task=task_id)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
        obs, info = env.reset(seed=1)
        assert obs.shape == (448, 448, 3) and env.observation_space.contains(obs)
        env.close()


def test_export_families_keeps_only_those_in_split_order(tmp_path):
    text = ["go_back", "type_in_box"]
    listed = world.list_tasks("curriculum_train", 6, families=text)
    assert [t.family for t in listed] == text * 3  # seed by seed, as the split lists them
    assert [t.seed for t in listed] == [1_000_000, 1_000_000, 1_000_001, 1_000_001, 1_000_002, 1_000_002]
    assert [t.id for t in listed] == [t.id for t in world.list_tasks("curriculum_train", 27) if t.family in text][:6]
    assert {t.family for t in world.list_tasks("test", families=["delete_note"])} == {"delete_note"}
    out = tmp_path / "text.parquet"
    r = runner.invoke(app, ["world", "export", "--split", "curriculum_train", "--families", ",".join(text), "--n", "8",
                            "--levels", "high", "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert Counter(json.loads(e)["family"] for e in pd.read_parquet(out)["extra"]) == {"go_back": 4, "type_in_box": 4}
    r = runner.invoke(app, ["world", "export", "--split", "curriculum_train", "--families", "go_back,delete_note",
                            "--output", str(tmp_path / "x.parquet")])
    shown = " ".join(r.output.replace("│", " ").split())  # the error box wraps at the terminal's width
    assert r.exit_code == 2 and "no task family delete_note" in shown and "--families" in shown
    assert not (tmp_path / "x.parquet").exists()


def test_export_shows_each_start_screen_with_several_goals(tmp_path):
    """--instructions-per-screen: the same screenshot with up to K goals, each row's action reaching its own goal."""
    from core.data.unified import iter_steps

    out = tmp_path / "alt.parquet"
    r = runner.invoke(app, ["world", "export", "--split", "curriculum_train", "--n", "18", "--levels", "low,high",
                            "--instructions-per-screen", "4", "--output", str(out)])
    assert r.exit_code == 0, r.output
    screens: dict[tuple[str, str], list] = {}
    for s in iter_steps(out):
        if s.extra["step_index"] == 0:
            screens.setdefault((s.extra["episode_id"], s.task_type), []).append(s)
    assert len(screens) == 2 * 18
    env = world.SimPhoneEnv()
    for (task_id, level), rows in screens.items():
        task = world.get_task(task_id)
        family = FAMILIES[task.family]
        if level == "low" and task.family == "tap_two_tiles":
            assert 1 <= len(rows) <= 4, task_id  # low rows name only the first tile (repeats are left out)
        else:
            assert len(rows) == (1 if task.family == "go_back" else 4), task_id
        assert len({row.image for row in rows}) == 1  # one screenshot, byte for byte
        assert len({row.instruction for row in rows}) == len(rows)
        if level != "high":
            continue
        goals = dict((instr, params) for params, instr in family.variants(task.params, make_content(task.seed))
                     ) if family.variants else {}
        goals[task.instruction] = task.params
        for row in rows:
            variant = task.model_copy(update={"params": goals[row.instruction], "instruction": row.instruction})
            env.reset(options={"task": variant})
            _, reward, terminated, _, info = env.step(row.action)
            assert not info["ignored"], (row.id, info["ignored"])
            if task.family != "tap_two_tiles":  # one action reaches the goal
                assert terminated and info["success"], row.id
    actions = {row.instruction: row.action for row in screens[("scroll_direction-1000000", "high")]}
    assert {a.direction for a in actions.values()} == {"down", "up", "left", "right"}
    assert all(a.direction == i.split()[-1] for i, a in actions.items())


def test_a_variant_that_changes_the_screen_is_refused(monkeypatch):
    """The export checks that every variant starts on the task's own screenshot."""
    from dataclasses import replace

    from core.world.export import task_steps

    back = FAMILIES["go_back"]
    other_page = replace(back, variants=lambda p, c: [({"page": q}, "Go back") for q in world.curriculum.PAGES
                                                      if q != p["page"]])
    monkeypatch.setitem(FAMILIES, "go_back", other_page)
    with pytest.raises(RuntimeError, match="starts on another screen"):
        task_steps(world.SimPhoneEnv(), world.get_task("go_back-1000000"), ["high"], instructions_per_screen=2)
    assert len(task_steps(world.SimPhoneEnv(), world.get_task("go_back-1000000"), ["high"])) == 1


# ------------------------------------------------------------------ multi-step families (the agent curriculum)


def test_agent_splits_list_the_agent_families_seed_by_seed_on_seeds_of_their_own():
    first = world.list_tasks("agent_val", n=len(AGENT_FAMILIES))
    assert [t.family for t in first] == list(AGENT_FAMILIES) and {t.seed for t in first} == {5_000_000}
    seeds = {s: {t.seed for t in world.list_tasks(s)} for s in ("agent_val", "agent_test", "curriculum_val",
                                                                  "curriculum_test")}
    _, train_first, train_n = CURRICULUM_SPLITS["agent_train"]
    seeds["agent_train"] = set(range(train_first, train_first + train_n))
    for a in seeds:
        for b in seeds:
            assert a == b or seeds[a].isdisjoint(seeds[b]), (a, b)
    assert {t.split for t in world.list_tasks("agent_test")} == {"agent_test"}
    assert set(MULTI_STEP_FAMILIES) <= set(AGENT_FAMILIES) and not set(MULTI_STEP_FAMILIES) & set(CURRICULUM_FAMILIES)
    assert {FAMILIES[f].max_actions for f in MULTI_STEP_FAMILIES} == {2, 3}


@pytest.mark.parametrize("family", MULTI_STEP_FAMILIES)
def test_the_scripted_policy_solves_every_multi_step_validation_task(family):
    """The gold plan solves each task in exactly its action budget, every step the gold one (1.00 over 200)."""
    env = world.SimPhoneEnv()
    tasks = [t for t in world.list_tasks("agent_val") if t.family == family]
    assert len(tasks) == 200
    for task in tasks:
        _, info = env.reset(options={"task": task})
        anchors = [info["state_hash"]]
        for step in range(FAMILIES[family].max_actions):
            assert not info["success"] and info["gold_action"] is not None, (task.id, step)
            _, reward, term, trunc, info = env.step(info["gold_action"])
            assert info["ignored"] is None and info["gold_match"] is True, (task.id, step)
            anchors.append(info["state_hash"])
        assert info["success"] and term and not trunc and reward == 1.0, task.id
        assert len(set(anchors)) == len(anchors), task.id  # every step moves to a new state: one anchor a step


@pytest.mark.parametrize(("family", "n_other"), [("open_app_then_back", 3), ("scroll_two_ways", 7),
                                               ("open_two_apps", 11)])
def test_multi_step_variants_are_every_other_goal_on_the_same_screen(family, n_other):
    """task_variants: every other goal of a multi-step task (another app, direction pair, ordered app pair) on its
    start screenshot, byte for byte; the gold plan solves each in the family's budget; drawn by the task id."""
    from core.world.export import png_bytes

    env = world.SimPhoneEnv()
    for task in [t for t in world.list_tasks("agent_val", 60) if t.family == family]:
        variants = world.task_variants(task, 99)
        assert len(variants) == n_other and world.task_variants(task, 99) == variants
        assert len(world.task_variants(task, 2)) == 2
        assert len({task.instruction, *(v.instruction for _, v in variants)}) == n_other + 1
        start, _ = env.reset(options={"task": task})
        for _, variant in variants:
            assert (variant.id, variant.seed, variant.screen) == (task.id, task.seed, task.screen)
            obs, info = env.reset(options={"task": variant})
            assert png_bytes(obs) == png_bytes(start), variant.instruction
            for _ in range(FAMILIES[family].max_actions):
                obs, _, term, _, info = env.step(info["gold_action"])
            assert term and info["success"], variant.instruction
    assert world.task_variants(world.get_task("go_back-5000000"), 3) == []
    assert world.task_variants(world.get_task("scroll_two_ways-5000001"), 0) == []


@pytest.mark.parametrize(("task_id", "right_steps"), [("open_app_then_back-5000000", 1), ("scroll_two_ways-5000001", 1),
                                                     ("open_two_apps-5000002", 2)])
def test_an_episode_fails_midway_after_right_steps(task_id, right_steps):
    """Right steps, then a wrong one (Home: ignored on the pinned screens): the budget runs out, failure; the step
    that went wrong is the one that differs from the gold."""
    env, _, info = reset(task_id)
    for _ in range(right_steps):
        _, _, term, _, info = env.step(info["gold_action"])
        assert not term and not info["success"]
    _, _, term, trunc, info = env.step(Action(type="press_home"))
    steps = right_steps + 1
    while not (term or trunc):
        _, _, term, trunc, info = env.step(Action(type="press_home"))
        steps += 1
    assert steps == FAMILIES[task_id.rpartition("-")[0]].max_actions and not info["success"]


@pytest.mark.parametrize("family", MULTI_STEP_FAMILIES)
def test_a_random_policy_almost_never_solves_a_multi_step_task(family):
    """The rollout's random policy on 2,000 agent_train layouts: at most 0.5% (measured: 0.25%, 0.15%, 0%:
    docs/curriculum.md)."""
    tasks = [world.make_task(family, s) for s in range(4_000_000, 4_002_000)]
    assert sum(random_success(t) for t in tasks) / len(tasks) <= 0.005
