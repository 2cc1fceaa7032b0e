"""The RL methods as verl options (verl/gui_agent/rl_methods.py: keys, checks, per-token advantages) and what the
simulated phone gives them (anchors: ``info["state_hash"]``). Real verl launches: tests/test_verl_cpu_training.py."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from core.actions import Action
from core.rl import controls, gigpo, groups
from core.rl.rows import task_key
from core.world.env import SimPhoneEnv
from core.world.tasks import list_tasks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "verl" / "gui_agent"))

import rl_methods as rm  # noqa: E402


# ------------------------------------------------------------------ anchors from the simulated phone


def _task(family: str):
    return next(t for t in list_tasks("train") if t.family == family)


def test_state_hash_is_the_state_not_the_path_or_the_pixels():
    env = SimPhoneEnv()
    task = _task("settings_toggle")
    _, first = env.reset(seed=0, options={"task": task})
    _, again = env.reset(seed=5, options={"task": task})
    assert first["state_hash"] == again["state_hash"]  # same state of the same task: same anchor
    gold = first["gold_action"]
    _, _, _, _, moved = env.step(gold)
    assert moved["state_hash"] != first["state_hash"]  # the gold step changed the state
    # a tap on nothing is ignored: the state and its anchor stay, though the step count grew
    env.reset(seed=0, options={"task": task})
    _, _, _, _, ignored = env.step(Action(type="press_home"))
    _, _, _, _, ignored_again = env.step(Action(type="press_home"))
    assert ignored["state_hash"] == ignored_again["state_hash"]
    other = next(t for t in list_tasks("train") if t.family == "settings_toggle" and t.id != task.id)
    _, other_info = env.reset(seed=0, options={"task": other})
    assert other_info["state_hash"] != first["state_hash"]  # another task: another anchor


def test_phone_state_key_ignores_dict_order():
    env = SimPhoneEnv()
    env.reset(seed=0, options={"task": _task("settings_toggle")})
    phone = env.phone
    before = phone.state_key()
    phone.fields = {"b": "2", "a": "1"}
    one = phone.state_key()
    phone.fields = {"a": "1", "b": "2"}
    assert phone.state_key() == one != before


# ------------------------------------------------------------------ options and their errors


def test_options_defaults_are_off_and_published():
    opts = rm.rl_options({"adv_estimator": "grpo"})
    assert opts.estimator == "grpo" and opts.replay_capacity is None and opts.difficulty is None
    assert opts.gigpo == {"gamma": 0.95, "step_weight": 1.0, "epsilon": 1e-6, "mode": "mean_norm",
                          "episode_mean": "trajectory"}
    assert opts.nsr_lambda == groups.DEFAULT_NSR_LAMBDA == 0.1
    on = rm.rl_options({"adv_estimator": "gigpo", "gigpo": {"gamma": 0.9, "mode": "mean_std_norm"},
                        "replay": {"enable": True, "capacity": 2},
                        "difficulty_filter": {"enable": True, "window": 4, "skip_steps": 3}})
    assert on.gigpo["gamma"] == 0.9 and on.gigpo["mode"] == "mean_std_norm"
    assert on.replay_capacity == 2 and on.difficulty == (4, 3)
    assert opts.shuffle_seed is None
    assert rm.rl_options({"shuffle_rewards": {"enable": True}}).shuffle_seed == 0
    assert rm.rl_options({"shuffle_rewards": {"enable": True, "seed": 7}}).shuffle_seed == 7
    assert rm.rl_options({"shuffle_rewards": {"enable": False, "seed": 7}}).shuffle_seed is None


def test_shuffle_step_moves_episode_and_step_rewards_together():
    """The control: every sample gets another sample's episode reward and its step rewards (cut or padded to its
    own turns); the multiset of rewards is unchanged, the same step and seed give the same order, and GiGPO's
    advantages are then computed from the moved rewards."""
    opts = rm.rl_options({"adv_estimator": "gigpo", "shuffle_rewards": {"enable": True, "seed": 3}})
    scores = [2.0, 0.0, 0.5, 1.0, 0.0, 1.5]
    extras = [{"step_rewards": [1.0] * (i % 3 + 1), "anchors": ["a"] * (i % 3 + 1), "other": i} for i in range(6)]
    moved_scores, moved = rm.shuffle_step(opts, scores, extras, step=4)
    order = controls.reward_permutation(6, seed=3, step=4)
    assert moved_scores == [scores[k] for k in order] and sorted(moved_scores) == sorted(scores)
    for i, k in enumerate(order):
        own = len(extras[i]["step_rewards"])
        src = extras[k]["step_rewards"][:own]
        assert moved[i]["step_rewards"] == src + [0.0] * (own - len(src))
        assert moved[i]["anchors"] == extras[i]["anchors"] and moved[i]["other"] == i  # only rewards move
    assert rm.shuffle_step(opts, scores, extras, step=4) == (moved_scores, moved)
    assert rm.shuffle_step(opts, scores, extras, step=5)[0] != moved_scores  # a fresh order each step


@pytest.mark.parametrize(("algorithm", "named"), [
    ({"nsr_lambda": -0.5}, "algorithm.nsr_lambda"),
    ({"gigpo": {"gamma": 1.5}}, "algorithm.gigpo.gamma"),
    ({"gigpo": {"gamma": -0.1}}, "algorithm.gigpo.gamma"),
    ({"gigpo": {"mode": "mean"}}, "algorithm.gigpo.mode"),
    ({"gigpo": {"episode_mean": "rows"}}, "algorithm.gigpo.episode_mean"),
    ({"gigpo": {"gama": 0.9}}, "algorithm.gigpo: unknown key(s) ['gama']"),
    ({"replay": {"enable": True, "capacity": 0}}, "algorithm.replay.capacity"),
    ({"replay": {"enable": "yes"}}, "algorithm.replay.enable"),
    ({"difficulty_filter": {"enable": True, "window": 0}}, "algorithm.difficulty_filter.window"),
    ({"difficulty_filter": {"enable": True, "skip_steps": -1}}, "algorithm.difficulty_filter.skip_steps"),
    ({"adv_estimator": "gigpo", "use_kl_in_reward": True}, "algorithm.use_kl_in_reward"),
    ({"success_metric": ""}, "algorithm.success_metric"),
    ({"shuffle_rewards": {"enable": True, "seed": "x"}}, "algorithm.shuffle_rewards.seed"),
    ({"shuffle_rewards": {"enable": 1}}, "algorithm.shuffle_rewards.enable"),
    ({"shuffle_rewards": {"enable": True, "sede": 1}}, "algorithm.shuffle_rewards: unknown key(s) ['sede']"),
])
def test_bad_values_are_one_line_naming_the_key(algorithm, named):
    with pytest.raises(ValueError) as err:
        rm.rl_options(algorithm)
    assert named in str(err.value) and "\n" not in str(err.value)


# ------------------------------------------------------------------ per-token advantages


def test_turn_spans_are_the_model_turns():
    assert rm.turn_spans([1, 1, 0, 0, 1, 0, 1, 1]) == [(0, 2), (4, 5), (6, 8)]
    assert rm.turn_spans([0, 0]) == [] and rm.turn_spans([]) == []


def _extra(anchors, step_rewards, success):
    return {"anchors": anchors, "step_rewards": step_rewards, "reward_extra_info": {"gui_agent/success": success}}


def test_gigpo_tokens_carry_their_turns_advantage_and_tool_tokens_none():
    keys = ["u1_0_0", "u1_1_0", "u2_0_0", "u2_1_0"]  # two prompts (uid) x two sessions
    masks = [[1, 1, 0, 0, 1, 1, 1], [1, 0, 1], [1, 1], [1]]
    extras = [_extra(["s0", "s1"], [0.2, 1.5], 1.0), _extra(["s0", "s2"], [0.1, 0.0], 0.0),
              _extra(["t0"], [0.3], 0.0), _extra(["t0"], [0.3], 0.0)]
    scores = [1.5, 0.05, 0.3, 0.3]
    opts = rm.rl_options({"adv_estimator": "gigpo"})
    adv, metrics = rm.token_advantages(opts, keys, masks, scores, extras)
    rows = gigpo.advantages(["u1", "u1", "u1", "u1", "u2", "u2"], ["u1_0", "u1_0", "u1_1", "u1_1", "u2_0", "u2_1"],
                            [0.2, 1.5, 0.1, 0.0, 0.3, 0.3], [1.5, 1.5, 0.05, 0.05, 0.3, 0.3],
                            ["s0", "s1", "s0", "s2", "t0", "t0"])
    np.testing.assert_allclose(adv[0], [rows[0], rows[0], 0, 0, rows[1], rows[1], rows[1]], rtol=1e-6)
    np.testing.assert_allclose(adv[1], [rows[2], 0, rows[3]], rtol=1e-6)
    assert rows[0] > rows[2]  # the first turn of the success beats the failure's first turn at the same anchor
    np.testing.assert_allclose(np.concatenate([adv[2], adv[3]]), [0.0, 0.0, 0.0], atol=1e-7)  # equal group: nothing
    assert metrics["rl/gigpo/step_groups"] == 4  # {u1 s0}, {u1 s1}, {u1 s2}, {u2 t0}
    assert metrics["rl/gigpo/step_group_size/max"] == 2


def test_gigpo_turns_past_the_budget_have_no_tokens_and_extra_runs_are_refused():
    opts = rm.rl_options({"adv_estimator": "gigpo"})
    adv, _ = rm.token_advantages(opts, ["u_0_0", "u_1_0"], [[1, 1], [1]], [1.0, 0.0],
                                 [_extra(["a", "b"], [0.0, 1.0], 1), _extra(["a"], [0.0], 0)])
    assert len(adv[0]) == 2 and adv[0][0] == adv[0][1]  # turn 2 was cut at the budget: only turn 1's tokens
    with pytest.raises(ValueError, match="3 model-token runs"):
        rm.token_advantages(opts, ["u_0_0"], [[1, 0, 1, 0, 1]], [0.0], [_extra(["a", "b"], [0.0, 0.0], 0)])
    with pytest.raises(ValueError, match="needs per-turn extra_fields"):
        rm.token_advantages(opts, ["u_0_0"], [[1]], [0.0], [{"reward_extra_info": {"gui_agent/success": 0}}])


def test_grpo_nsr_pushes_down_an_all_fail_group_only():
    keys = ["a_0_0", "a_1_0", "b_0_0", "b_1_0"]
    masks = [[1, 0, 1], [1], [1, 1], [1]]
    extras = [{"reward_extra_info": {"accuracy": a}} for a in (0, 0, 1, 0)]
    opts = rm.rl_options({"adv_estimator": "grpo_nsr", "nsr_lambda": 0.3})
    adv, metrics = rm.token_advantages(opts, keys, masks, [0.2, 0.1, 1.0, 0.2], extras)
    assert metrics == {"rl/nsr/pushed_down_samples": 2.0}
    np.testing.assert_allclose(adv[0], [-0.3, 0.0, -0.3])  # all-fail group a: -lambda on model tokens, shaping ignored
    np.testing.assert_allclose(adv[1], [-0.3])
    expected = groups.grpo_advantages(["b", "b"], [1.0, 0.2])
    np.testing.assert_allclose([adv[2][0], adv[3][0]], expected, rtol=1e-6)


def test_group_metrics_count_by_success_not_by_shaped_reward():
    keys = ["a_0_0", "a_1_0", "b_0_0", "b_1_0", "c_0_0", "c_1_0"]
    extras = [{"reward_extra_info": {"gui_agent/success": s}} for s in (0, 0, 1, 0, 1, 1)]
    metrics = rm.group_metrics(keys, extras, None, [0.1, 0.3, 1.2, 0.2, 1.5, 1.5])
    assert metrics == {"rl/groups/mixed": 1.0, "rl/groups/all_fail": 1.0, "rl/groups/all_success": 1.0,
                       "rl/groups/zero_reward_std_frac": pytest.approx(1 / 3)}
    with pytest.raises(ValueError, match="success_metric"):
        rm.group_metrics(keys, [{"reward_extra_info": {"other": 1}}] * 6, None, [0.0] * 6)


def test_task_key_names_the_task_not_the_draw():
    assert task_key({"task_id": "scroll-3", "seed": 7}, "uid") == "scroll-3#7"
    assert task_key({"index": 12}, "uid") == "index:12"
    assert task_key(None, "uid") == "uid"


# ------------------------------------------------------------------ dynamic sampling's cap on generation rounds


class FakeBuffer:
    """What cap_dynamic_sampling wraps of verl's v1 ReplayBuffer: ``_dapo_filtered_keys`` (the uids whose success
    agrees, every poll) and ``sample`` (polls until enough groups are kept; here: evicted uids are cleared, fresh
    all-fail groups keep arriving, as a random start's do)."""

    def __init__(self, arriving: int):
        self.finished: set[str] = set()
        self.arriving, self.next = arriving, 0
        self._dapo_classification_cache = {"train": {}}

    def _dapo_filtered_keys(self, partition_id):
        return set(self.finished), None

    def sample(self, global_steps, partition_id, batch_size):
        kept = []
        for _ in range(100):  # verl polls until the batch is full
            for _ in range(self.arriving):  # new groups finish, every one all-fail (value 0.0)
                uid = f"g{self.next}"
                self.next += 1
                self.finished.add(uid)
                self._dapo_classification_cache[partition_id][uid] = 0.0
            dropped, counts = self._dapo_filtered_keys(partition_id)
            assert counts is None or sum(counts.values()) == len(dropped)
            self.finished -= dropped
            for uid in dropped:
                del self._dapo_classification_cache[partition_id][uid]
            kept = sorted(self.finished)[:batch_size]
            if len(kept) == batch_size:  # taken out of the buffer, as verl's batch is
                self.finished -= set(kept)
                return kept, {}
        raise RuntimeError("never filled: no cap")


def test_dynamic_sampling_cap_lets_groups_through_after_the_budget():
    from gui_agent_trainer import cap_dynamic_sampling

    with pytest.raises(RuntimeError, match="never filled"):
        FakeBuffer(arriving=2).sample(1, "train", 2)  # verl's own behaviour on an all-fail start
    buffer = cap_dynamic_sampling(FakeBuffer(arriving=2), max_groups=4)
    batch, metrics = buffer.sample(1, "train", 2)
    assert len(batch) == 2 and metrics == {"rl/dynamic_sampling/let_through": 2.0}
    assert buffer.next == 6  # 4 dropped (the cap), then the next 2 let through
    batch, metrics = buffer.sample(2, "train", 2)  # the count starts again every step
    assert buffer.next == 12 and metrics["rl/dynamic_sampling/let_through"] == 2.0
