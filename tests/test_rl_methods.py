"""core.rl (NumPy only): GiGPO, GRPO / negative-sample reinforcement / DAPO's success filter, ARPO's success replay
and the online difficulty filter, against numbers worked out by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import math
import re
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.rl import controls, difficulty, gigpo, groups, replay

EPS = 1e-6
S3 = math.sqrt(3)


def close(actual, expected, tol=1e-5):
    np.testing.assert_allclose(np.asarray(actual, dtype=float), expected, rtol=0, atol=tol)


# ---------------------------------------------------------------- gigpo.discounted_returns

def test_discounted_returns_one_trajectory_interleaved_and_extreme_gammas():
    # R2 = 1; R1 = 0.5 + 0.95 * 1 = 1.45; R0 = 0 + 0.95 * 1.45 = 1.3775
    close(gigpo.discounted_returns(["a"] * 3, [0.0, 0.5, 1.0], 0.95), [1.3775, 1.45, 1.0], 1e-12)
    # a = rows 0, 2, 4 (rewards 1, 0, 1), b = rows 1, 3 (rewards 2, 3):
    # a: 1, 0 + .95 * 1 = .95, 1 + .95 * .95 = 1.9025; b: 3, 2 + .95 * 3 = 4.85
    traj, rew = ["a", "b", "a", "b", "a"], [1, 2, 0, 3, 1]
    close(gigpo.discounted_returns(traj, rew, 0.95), [1.9025, 4.85, 0.95, 3.0, 1.0], 1e-12)
    close(gigpo.discounted_returns(traj, rew, 0), rew, 0)  # gamma 0: the step reward alone
    close(gigpo.discounted_returns(traj, rew, 1), [2, 5, 1, 3, 1], 0)  # gamma 1: sums of the rest (a: 1+0+1, b: 2+3)


@pytest.mark.parametrize("gamma", [-0.1, 1.5, float("nan")])
def test_discounted_returns_refuses_gamma_out_of_range(gamma):
    with pytest.raises(ValueError, match="gamma"):
        gigpo.discounted_returns(["a"], [1.0], gamma)


# ---------------------------------------------------------------- gigpo.advantages

# One task 'u': A = 3 steps (s0, s1, s2; rewards 0, 0, 1; episode 1), B = 2 steps (s0, s1b; episode 0), C = 1 step (s0).
TOY = dict(task_ids=["u"] * 6, traj_ids=["A", "A", "A", "B", "B", "C"], step_rewards=[0, 0, 1, 0, 0, 0],
           episode_rewards=[1, 1, 1, 0, 0, 0], anchors=["s0", "s1", "s2", "s0", "s1b", "s0"])
# Returns (gamma .95): A = .9025, .95, 1; B = 0, 0; C = 0. Step group s0 = {.9025, 0, 0}, mean .300833:
# A0 step = +.601667, B0 = C0 = -.300833; s1, s2, s1b are groups of one: step advantage 0.
# mean_std_norm: s0's deviations are .9025 * (2/3, -1/3, -1/3), unbiased std = .9025 * sqrt((4+1+1)/9 / 2) = .9025/sqrt3,
# so A0 step = 2/sqrt3, B0 = C0 = -1/sqrt3.


@pytest.mark.parametrize("mode, episode_mean, expected", [
    # step_rows: six entries 1,1,1,0,0,0, mean .5 -> episode +-.5; A0 = .5 + .601667, B0 = C0 = -.5 - .300833
    ("mean_norm", "step_rows", [1.10167, 0.5, 0.5, -0.80083, -0.5, -0.80083]),
    # std of 1,1,1,0,0,0 (unbiased) = sqrt(6 * .25 / 5) = sqrt(.3): episode +-.5/sqrt(.3) = +-.912871
    ("mean_std_norm", "step_rows", [2.06757, 0.91287, 0.91287, -1.49022, -0.91287, -1.49022]),
    # trajectory: entries 1, 0, 0, mean 1/3 -> A rows 2/3, B and C rows -1/3; A0 = 2/3 + .601667 = 1.268333,
    # B0 = C0 = -1/3 - .300833 = -.634167
    ("mean_norm", "trajectory", [1.268333, 2 / 3, 2 / 3, -0.634167, -1 / 3, -0.634167]),
    # std of 1, 0, 0 = sqrt((4/9 + 1/9 + 1/9) / 2) = 1/sqrt3: A = (2/3) * sqrt3 = 2/sqrt3, B = C = -1/sqrt3;
    # A0 = 2/sqrt3 + 2/sqrt3, B0 = C0 = -1/sqrt3 - 1/sqrt3
    ("mean_std_norm", "trajectory", [4 / S3, 2 / S3, 2 / S3, -2 / S3, -1 / S3, -2 / S3]),
])
def test_gigpo_toy_batch(mode, episode_mean, expected):
    close(gigpo.advantages(**TOY, mode=mode, episode_mean=episode_mean), expected)


def test_step_weight_scales_only_the_step_part():
    # episode part +-.5 (step_rows) untouched: A0 = .5 + .5 * .601667 = .800833, B0 = C0 = -.5 - .5 * .300833 = -.650417
    close(gigpo.advantages(**TOY, episode_mean="step_rows", step_weight=0.5),
          [0.800833, 0.5, 0.5, -0.650417, -0.5, -0.650417])
    close(gigpo.advantages(**TOY, episode_mean="step_rows", step_weight=0), [0.5, 0.5, 0.5, -0.5, -0.5, -0.5])


@pytest.mark.parametrize("mode, scale", [("mean_norm", 1.0), ("mean_std_norm", 1 / (1 + EPS))])
def test_task_group_of_one_entry_gets_its_raw_reward(mode, scale):
    # One trajectory, 3 distinct anchors: with episode_mean='trajectory' the task group has ONE entry: mean 0, std 1,
    # so every row gets .75 (/(1 + eps)); each step group has one row: step advantage 0.
    one = dict(task_ids=["v"] * 3, traj_ids=["T"] * 3, step_rewards=[0, 0, 0.75], episode_rewards=[0.75] * 3,
               anchors=["x", "y", "z"])
    out = gigpo.advantages(**one, mode=mode, episode_mean="trajectory")
    assert out.tolist() == pytest.approx([0.75 * scale] * 3, abs=1e-12)
    # step_rows: 3 entries of .75 (exact in binary), mean .75, std 0 -> 0 (mean_std_norm: 0 / (0 + eps) = 0)
    assert gigpo.advantages(**one, mode=mode, episode_mean="step_rows").tolist() == [0.0] * 3


@pytest.mark.parametrize("mode", gigpo.MODES)
@pytest.mark.parametrize("episode_mean", gigpo.EPISODE_MEANS)
def test_all_equal_rewards_give_zero(mode, episode_mean):
    # 3 one-step trajectories from s0, all reward 1: episode mean 1, std 0; step group s0 = {1, 1, 1}, std 0
    out = gigpo.advantages(["u"] * 3, ["a", "b", "c"], [1, 1, 1], [1, 1, 1], ["s0"] * 3, mode=mode,
                           episode_mean=episode_mean)
    assert out.tolist() == [0.0, 0.0, 0.0]


def test_task_groups_are_independent_and_anchors_do_not_cross_tasks():
    # Task 'w': D (s0, step .5, episode .5), E (s0, step 0, episode 0). Episode mean .25 -> +-.25; its own step group
    # s0 = {.5, 0}, mean .25 -> +-.25. D = .5, E = -.5. Had w's s0 joined u's s0 ({.9025, 0, 0, .5, 0}, mean .2805),
    # u's A0 would change; it stays 1.10167 (test_gigpo_toy_batch).
    batch = {k: list(v) for k, v in TOY.items()}
    for key, extra in dict(task_ids=["w", "w"], traj_ids=["D", "E"], step_rewards=[0.5, 0], episode_rewards=[0.5, 0],
                           anchors=["s0", "s0"]).items():
        batch[key] += extra
    close(gigpo.advantages(**batch, episode_mean="step_rows"),
          [1.10167, 0.5, 0.5, -0.80083, -0.5, -0.80083, 0.5, -0.5])
    assert gigpo.step_groups(["u", "w", "u"], ["s0", "s0", "s0"]).tolist() == [0, 1, 0]
    assert gigpo.step_group_sizes(batch["task_ids"], batch["anchors"]).tolist() == [3, 1, 1, 1, 2]


def test_good_first_step_beats_a_detour_that_episode_level_cannot_see():
    # Task 't' from s0. G: s0 -> s1 -> success (rewards 0, 1). B: s0 -> s0 (a wasted step) -> s1 -> success (0, 0, 1).
    # Both succeed (episode 1): episode-level GRPO gives every row 0. Returns: G = .95, 1; B = .9025, .95, 1.
    # Step group s0 = {G0 .95, B0 .9025, B1 .95}, mean 2.8025/3: G0 = B1 = .0475/3 = .0158333, B0 = -.095/3 = -.0316667.
    # Step group s1 = {1, 1}: 0.
    args = (["t"] * 5, ["G", "G", "B", "B", "B"], [0, 1, 0, 0, 1], [1] * 5, ["s0", "s1", "s0", "s0", "s1"])
    close(groups.grpo_advantages(["t", "t"], [1, 1]), [0, 0], 0)  # GRPO: the two trajectories are alike
    close(gigpo.advantages(*args, step_weight=0), [0] * 5, 0)
    out = gigpo.advantages(*args)
    close(out, [0.0475 / 3, 0, -0.095 / 3, 0.0475 / 3, 0], 1e-12)
    assert out[0] > out[2]  # the good first step outranks the detour's first step at the same anchor s0


# (kwargs changed from a valid call, the name the error must carry)
BAD_GIGPO = [
    (dict(gamma=-0.1), "gamma"), (dict(gamma=1.5), "gamma"), (dict(mode="median"), "mode"),
    (dict(episode_mean="tokens"), "episode_mean"), (dict(step_weight=float("inf")), "step_weight"),
    (dict(epsilon=-1e-6), "epsilon"),
    (dict(step_rewards=[0, 0, float("nan")]), "step_rewards[2]"),
    (dict(episode_rewards=[1, float("nan"), 1]), "episode_rewards[1]"),
    (dict(traj_ids=["A", "A"]), "traj_ids"), (dict(anchors=["s0", "s1"]), "anchors"),
    (dict(step_rewards=[0, 0]), "step_rewards"),
    (dict(task_ids=["u", "v", "v"]), "trajectory 'A'"),  # trajectory A in task groups u and v
    (dict(anchors=["s0", object(), "s2"]), "anchors[1]"),
    (dict(task_ids=["u", ["u", object()], "u"]), "task_ids[1]"),
]


@pytest.mark.parametrize("change, name", BAD_GIGPO, ids=[n for _, n in BAD_GIGPO])
def test_gigpo_bad_input_names_the_argument(change, name):
    args = dict(task_ids=["u"] * 3, traj_ids=["A"] * 3, step_rewards=[0, 0, 1], episode_rewards=[1, 1, 1],
                anchors=["s0", "s1", "s2"]) | change
    with pytest.raises(ValueError, match=re.escape(name)):
        gigpo.advantages(**args)


def _batch(trajs):
    """Rows (task, traj, step reward, episode reward, anchor) of [(task, episode reward, [(anchor, reward), ...])]."""
    return [(task, f"T{t}", r, ep, a) for t, (task, ep, steps) in enumerate(trajs) for a, r in steps]


REWARD = st.sampled_from([0.0, 0.25, 0.5, 1.0])
TRAJ = st.tuples(st.sampled_from("pq"), REWARD, st.lists(st.tuples(st.sampled_from(["s0", "s1", "s2"]), REWARD),
                                                            min_size=1, max_size=3))


@settings(max_examples=80, deadline=None)
@given(trajs=st.lists(TRAJ, min_size=1, max_size=6), data=st.data(), mode=st.sampled_from(gigpo.MODES),
       episode_mean=st.sampled_from(gigpo.EPISODE_MEANS))
def test_gigpo_does_not_depend_on_row_order(trajs, data, mode, episode_mean):
    rows = _batch(trajs)
    order = list(data.draw(st.permutations(range(len(rows)))))
    slots = defaultdict(list)  # keep each trajectory's rows in step order in the slots it gets
    for pos, i in enumerate(order):
        slots[rows[i][1]].append(pos)
    for traj, positions in slots.items():
        for pos, i in zip(positions, [i for i, row in enumerate(rows) if row[1] == traj], strict=True):
            order[pos] = i
    out = gigpo.advantages(*zip(*rows, strict=True), mode=mode, episode_mean=episode_mean)
    shuffled = gigpo.advantages(*zip(*[rows[i] for i in order], strict=True), mode=mode, episode_mean=episode_mean)
    close(shuffled, out[order], 1e-8)


@settings(max_examples=80, deadline=None)
@given(trajs=st.lists(st.tuples(st.sampled_from("pq"), REWARD, st.lists(st.tuples(st.sampled_from(["s0", "s1"]),
                                                                                  REWARD), min_size=1, max_size=1)),
                      min_size=1, max_size=8))
def test_gigpo_one_step_mean_norm_sums_to_zero_per_task(trajs):
    # Episode part: R - mean over the group's trajectories sums to 0; step part: every step group sums to 0 (a group of
    # one gives 0). A task group of ONE trajectory keeps its raw episode reward instead.
    rows = _batch(trajs)
    out = gigpo.advantages(*zip(*rows, strict=True), mode="mean_norm", episode_mean="trajectory")
    for task in "pq":
        members = [i for i, row in enumerate(rows) if row[0] == task]
        expected = rows[members[0]][3] if len(members) == 1 else 0.0
        if members:
            assert out[members].sum() == pytest.approx(expected, abs=1e-9)


# ---------------------------------------------------------------- groups

def test_grpo_advantages_by_hand():
    ids, rewards = ["g", "g", "g", "h", "h", "k"], [1, 0, 0, 0.5, 0.3, 0.7]
    # g: mean 1/3, std 1/sqrt3 -> (2/3)/(1/sqrt3 + eps), (-1/3)/(...); h: mean .4, std sqrt(2 * .01 / 1) = .141421 ->
    # +-.1/.141421 = +-.707107; k: a group of one, mean 0 std 1 -> .7/(1 + eps)
    g = 1 / (1 / S3 + EPS)
    close(groups.grpo_advantages(ids, rewards), [2 / 3 * g, -g / 3, -g / 3, 0.707107, -0.707107, 0.7 / (1 + EPS)])
    close(groups.grpo_advantages(ids, rewards, norm_by_std=False), [2 / 3, -1 / 3, -1 / 3, 0.1, -0.1, 0.7], 1e-12)
    with pytest.raises(ValueError, match=re.escape("rewards[1]")):
        groups.grpo_advantages(["g", "g"], [0, float("nan")])


def test_negative_sample_advantages():
    # f: every sample failed (shaped rewards differ) -> -lam everywhere; m: mixed -> GRPO; s: all succeeded -> GRPO (0)
    ids = ["f", "f", "f", "m", "m", "s", "s"]
    rewards, success = [0.3, 0.1, 0.2, 1.0, 0.0, 1.0, 1.0], [0, 0, 0, 1, 0, 1, 1]
    grpo = groups.grpo_advantages(ids, rewards)
    out = groups.negative_sample_advantages(ids, rewards, success)
    assert out[:3].tolist() == [-0.1] * 3  # default lambda .1
    assert out[3:].tolist() == grpo[3:].tolist()
    close(out[3:], [0.5 / (math.sqrt(0.5) + EPS), -0.5 / (math.sqrt(0.5) + EPS), 0, 0])  # m: mean .5, std sqrt(.5)
    assert groups.negative_sample_advantages(ids, rewards, success, lam=0.5)[:3].tolist() == [-0.5] * 3
    with pytest.raises(ValueError, match="nsr_lambda"):
        groups.negative_sample_advantages(ids, rewards, success, lam=-0.1)


def test_success_groups_keep_mixed_groups_only():
    # a: mixed (kept); b: all succeed; c: all fail though its shaped rewards would differ (the filter reads success)
    f = groups.success_groups(["a", "b", "a", "c", "b", "c"], [1, 1, 0, 0, 1.0, 0.0])
    assert (f.kept, f.all_success, f.all_fail, f.dropped) == (1, 1, 1, 2)
    assert f.keep.tolist() == [True, False, True, False, False, False]


def test_success_accepts_python_bools():
    assert groups.success_groups(["a", "a"], [True, False]).kept == 1


# ---------------------------------------------------------------- replay

def test_success_replay_record_keeps_newest_successes_only():
    buf = replay.SuccessReplay(capacity=2)
    # rows: success no-replay (stored), failure, success that is a replay (not stored), two more successes
    stored = buf.record(["t"] * 5, [1, 0, 1, 1, 1], ["s1", "f", "r", "s2", "s3"],
                        replayed=[False, False, True, False, False])
    assert stored == 3 and list(buf.buffers["t"]) == ["s2", "s3"]  # cap 2: s1 left first
    assert buf.stored("t") == 2 and buf.stored("other") == 0


def test_success_replay_plan():
    buf = replay.SuccessReplay(capacity=4)
    buf.add("t", "old")
    buf.add("t", "new")
    # g1 (task t): all 0 -> std 0 < .05, mean 0 < .2 -> its last row (2) gets t's newest; g2 (task t): mean .5 -> no;
    # g3 (task u): meets the rule but u has nothing stored -> no
    plan = buf.plan(["g1", "g2", "g1", "g2", "g3", "g3"], ["t", "t", "t", "t", "u", "u"], [0, 1, 0, 0, 0, 0])
    assert plan == [replay.Replacement(index=2, task="t", item="new")]


def test_replay_rule_boundaries_and_capacity():
    assert np.std([0.0, 0.1]) == 0.05  # precondition: population std exactly .05 (deviations +-.05)
    assert not replay.needs_replay([0.0, 0.1])  # std must be < .05
    assert replay.needs_replay([0.0, 0.09])  # std .045, mean .045
    assert not replay.needs_replay([0.2, 0.2])  # std 0 but mean exactly .2 (must be < .2)
    assert replay.needs_replay([0.1, 0.1]) and not replay.needs_replay([])
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="capacity"):
            replay.SuccessReplay(capacity=bad)


# ---------------------------------------------------------------- difficulty

def test_difficulty_filter_skips_then_clears_history():
    f = difficulty.DifficultyFilter(window=4, skip_steps=2)
    assert f.update(["t", "t"], [0, 0], step=2) == []  # 2 of 4 outcomes: not judged yet
    assert f.update(["t", "t", "m", "m", "m", "m"], [0, 0, 1, 0, 1, 1], step=3) == ["t"]  # t: 4 fails across 2 steps
    # back at step 3 + 1 + 2 = 6: skipped at 4 and 5
    assert [f.is_skipped("t", s) for s in (4, 5, 6)] == [True, True, False]
    assert f.active(["t", "m"], 4).tolist() == [False, True] and f.skipped_count(5) == 1 and f.skipped_count(6) == 0
    assert len(f.history["t"]) == 0
    assert f.update(["t"] * 3, [0] * 3, step=6) == []  # 3 fresh fails: not a full window
    for step in range(4, 10):  # m alternates: its pass rate stays in (0, 1)
        assert f.update(["m", "m"], [step % 2, 1 - step % 2], step) == [] and not f.is_skipped("m", step + 1)
    g = difficulty.DifficultyFilter(window=2, skip_steps=1)
    assert g.update(["a", "a"], [1, 1], step=0) == ["a"]  # all success is skipped too


def test_difficulty_filter_judges_fresh_rollouts_after_skip():
    f = difficulty.DifficultyFilter(window=4, skip_steps=2)
    assert f.update(["t"] * 8, [0] * 8, step=3) == ["t"]  # a group of 8 with window 4
    assert f.update(["t"], [0], step=6) == []  # one fresh rollout back: not a full window of fresh ones


@pytest.mark.parametrize("kw, name", [({"window": 0}, "window"), ({"skip_steps": -1}, "skip_steps"),
                                      ({"window": 2.5}, "window")])
def test_difficulty_filter_bad_options(kw, name):
    with pytest.raises(ValueError, match=name):
        difficulty.DifficultyFilter(**kw)


# ---------------------------------------------------------------- controls (shuffled rewards)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=0, max_size=30), st.integers(0, 2**40),
       st.integers(0, 10**6))
def test_shuffled_rewards_are_a_seeded_permutation(scores, seed, step):
    out, steps = controls.shuffled_rewards(scores, seed=seed, step=step)
    assert steps is None and sorted(out.tolist()) == sorted(scores)
    again, _ = controls.shuffled_rewards(scores, seed=seed, step=step)
    assert again.tolist() == out.tolist()


def test_shuffled_rewards_break_the_link_to_the_answer():
    """Over many steps a sample's shuffled reward is uncorrelated with its own (the control's point)."""
    own = np.arange(64, dtype=float) % 2  # half succeed
    corr = [np.corrcoef(own, controls.shuffled_rewards(own, seed=0, step=k)[0])[0, 1] for k in range(200)]
    assert abs(float(np.mean(corr))) < 0.03
    assert controls.reward_permutation(5, seed=1, step=2).tolist() != controls.reward_permutation(5, seed=2, step=2).tolist()


def test_shuffled_rewards_refuse_mismatched_step_rewards():
    with pytest.raises(ValueError, match="2 step-reward lists for 3 samples"):
        controls.shuffled_rewards([1, 2, 3], [[1], [2]], seed=0, step=0)
