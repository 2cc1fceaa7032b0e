"""GiGPO: Group-in-Group Policy Optimization (Feng et al., arXiv 2505.10978, Eqs. 3-8), framework-free.

Rows are environment steps (turns): one row per step, the rows of one trajectory in step order (they need not be
next to each other). Every row carries its task group (``task_ids``: the rollouts of one prompt/task, verl's
``uid``), its trajectory (``traj_ids``), its step reward, its episode's reward and its anchor (the state the step
acted on). The advantage of a row is

    A = A^E + step_weight * A^S                                                     (Eq. 8)

- A^E, the episode advantage (Eq. 3): the row's episode reward minus the mean of its task group (``mode=mean_norm``)
  or divided by the group's standard deviation too (``mean_std_norm``: (R - mean) / (std + epsilon), std unbiased).
  ``episode_mean="trajectory"`` takes one entry per trajectory (the paper's Eq. 3); ``episode_mean="step_rows"`` one
  entry per step row, as the authors' published code does (``episode_norm_reward`` with its default
  ``compute_mean_std_cross_steps=True``: a trajectory of k steps counts k times). A task group of ONE entry gets mean
  0 and std 1 (the authors' rule): its advantage is the raw reward.
- A^S, the step advantage (Eqs. 5-7): discounted returns R_t = r_t + gamma R_{t+1} within each trajectory (Eq. 5);
  step groups = the rows of one task group whose anchors are equal (Eq. 6); A^S = R_t - mean of the step group, or
  divided by its std + epsilon (Eq. 7). A step group of one row gets 0.

Reference: the authors' implementation, verl-agent ``gigpo/core_gigpo.py`` (read at zhengxuyu/verl-agent@3d91c9b;
line numbers of the same code in ZJU-REAL/ClawGUI@d990d3e ``clawgui-rl/gigpo/core_gigpo.py``, a copy of it):
``compute_step_discounted_returns`` (L87-132, Eq. 5: per ``traj_uid`` in batch order, ``R_t = r_t + gamma R_{t+1}``),
``compute_gigpo_outcome_advantage`` (L138-171: ``mean_norm`` removes the std, ``mean_std_norm`` keeps it; L170 the
sum of Eq. 8), ``episode_norm_reward`` (L174-240: ``compute_mean_std_cross_steps=True`` by default, L180, i.e. our
``step_rows``; a group of one gets mean 0 and std 1, L225-227; ``torch.std`` unbiased, L230; ``(s - mean) / (std +
eps)``), ``build_step_group`` (L243-331: clusters of ``to_hashable(anchor)`` within one ``index``), ``step_norm_reward``
(L334-384: a group of one gets its own value as mean and std 1, L367-369, so 0). Everything here is float64 (the authors' torch tensors are float32), and anchors are
compared exactly (the authors' optional text-similarity clustering is not used: anchors here are state hashes).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from core.console import quoted
from core.numbers import NumberError, checked_number
from core.rl.rows import checked_values, hashable_rows

#: ``mode``: ``mean_norm`` subtracts the group mean; ``mean_std_norm`` also divides by the group std + epsilon.
MODES = ("mean_norm", "mean_std_norm")
#: ``episode_mean``: one entry per trajectory (the paper's Eq. 3) or per step row (the authors' code).
EPISODE_MEANS = ("trajectory", "step_rows")


def check_options(*, gamma: float = 0.95, step_weight: float = 1.0, mode: str = "mean_norm",
                  episode_mean: str = "trajectory", epsilon: float = 1e-6, prefix: str = "") -> dict[str, Any]:
    """The options checked; a bad one is a ``ValueError`` naming ``<prefix><key>`` (e.g. ``algorithm.gigpo.mode``)."""
    if mode not in MODES:
        raise ValueError(f"{prefix}mode must be one of {', '.join(MODES)}, got {quoted(mode)}")
    if episode_mean not in EPISODE_MEANS:
        raise ValueError(f"{prefix}episode_mean must be one of {', '.join(EPISODE_MEANS)}, got {quoted(episode_mean)}")
    try:
        return {"gamma": checked_number(gamma, f"{prefix}gamma", minimum=0, maximum=1),
                "step_weight": checked_number(step_weight, f"{prefix}step_weight"),
                "epsilon": checked_number(epsilon, f"{prefix}epsilon", minimum=0),
                "mode": mode, "episode_mean": episode_mean}
    except NumberError as e:
        raise ValueError(str(e)) from None


def discounted_returns(traj_ids: Sequence[Any], step_rewards: Sequence[float], gamma: float = 0.95) -> np.ndarray:
    """R_t = r_t + gamma * R_{t+1} within each trajectory (Eq. 5), rows of a trajectory in step order wherever they
    stand; float64, one per row."""
    n = len(traj_ids)
    rewards = checked_values(step_rewards, "step_rewards", n)
    gamma = check_options(gamma=gamma)["gamma"]
    rows: dict[Hashable, list[int]] = {}
    for i, traj in enumerate(hashable_rows(traj_ids, "traj_ids", n)):
        rows.setdefault(traj, []).append(i)
    out = np.zeros(n, dtype=np.float64)
    for members in rows.values():
        running = 0.0
        for i in reversed(members):
            running = rewards[i] + gamma * running
            out[i] = running
    return out


def _normalized(values: np.ndarray, groups: Sequence[Hashable], members_of: dict[Hashable, list[int]], *,
                std_norm: bool, epsilon: float, singleton_mean_zero: bool) -> np.ndarray:
    """values[i] - mean(group of i) (/ (std + epsilon)); the group statistics over ``members_of[g]`` rows.
    A group of one: mean 0 (episode level) or its own value (step level), std 1."""
    stats: dict[Hashable, tuple[float, float]] = {}
    for g, members in members_of.items():
        entries = values[members]
        if len(entries) == 1:
            stats[g] = (0.0 if singleton_mean_zero else float(entries[0]), 1.0)
        elif np.all(entries == entries[0]):  # all equal: exactly 0 (a float mean may miss the value by an ulp)
            stats[g] = (float(entries[0]), 0.0)
        else:
            stats[g] = (float(entries.mean()), float(entries.std(ddof=1)))
    out = np.empty(len(values), dtype=np.float64)
    for i, g in enumerate(groups):
        mean, std = stats[g]
        out[i] = (values[i] - mean) / (std + epsilon) if std_norm else values[i] - mean
    return out


def step_groups(task_ids: Sequence[Any], anchors: Sequence[Any]) -> np.ndarray:
    """The step group of every row (Eq. 6): rows of one task group with equal anchors share a group. Returns one
    integer per row, numbered in order of first appearance."""
    n = len(task_ids)
    keys = list(zip(hashable_rows(task_ids, "task_ids", n), hashable_rows(anchors, "anchors", n), strict=True))
    numbers: dict[tuple, int] = {}
    return np.array([numbers.setdefault(k, len(numbers)) for k in keys], dtype=np.int64)


def step_group_sizes(task_ids: Sequence[Any], anchors: Sequence[Any]) -> np.ndarray:
    """The size of every step group (for logging: how often anchors repeat), in group order."""
    return np.bincount(step_groups(task_ids, anchors)) if len(task_ids) else np.zeros(0, dtype=np.int64)


def advantages(task_ids: Sequence[Any], traj_ids: Sequence[Any], step_rewards: Sequence[float],
               episode_rewards: Sequence[float], anchors: Sequence[Any], *, gamma: float = 0.95,
               step_weight: float = 1.0, mode: str = "mean_norm", episode_mean: str = "trajectory",
               epsilon: float = 1e-6) -> np.ndarray:
    """GiGPO advantage of every step row: episode advantage + ``step_weight`` x step advantage (module docstring).

    ``step_rewards[i]``: the reward of step i alone (discounted here, Eq. 5); ``episode_rewards[i]``: the reward of
    row i's whole episode (the same on every row of a trajectory; ``episode_mean="trajectory"`` reads a trajectory's
    first row in batch order, as the authors' code does with ``compute_mean_std_cross_steps=False``). A trajectory
    must lie within one task group. Returns float64, one per row; a ``ValueError`` names the bad argument or row.
    """
    opts = check_options(gamma=gamma, step_weight=step_weight, mode=mode, episode_mean=episode_mean,
                         epsilon=epsilon)
    n = len(task_ids)
    tasks = hashable_rows(task_ids, "task_ids", n)
    trajs = hashable_rows(traj_ids, "traj_ids", n)
    episode = checked_values(episode_rewards, "episode_rewards", n)
    returns = discounted_returns(traj_ids, step_rewards, opts["gamma"])
    std_norm = opts["mode"] == "mean_std_norm"

    task_of: dict[Hashable, Hashable] = {}
    episode_entries: dict[Hashable, list[int]] = {}
    per_row = opts["episode_mean"] == "step_rows"
    for i, (task, traj) in enumerate(zip(tasks, trajs, strict=True)):
        first_row = traj not in task_of
        if task_of.setdefault(traj, task) != task:
            raise ValueError(f"row {i}: trajectory {traj!r} is in task groups {task_of[traj]!r} and {task!r}")
        if first_row or per_row:
            episode_entries.setdefault(task, []).append(i)
    episode_adv = _normalized(episode, tasks, episode_entries, std_norm=std_norm, epsilon=opts["epsilon"],
                              singleton_mean_zero=True)

    groups = step_groups(task_ids, anchors).tolist()
    step_members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        step_members.setdefault(g, []).append(i)
    step_adv = _normalized(returns, groups, step_members, std_norm=std_norm, epsilon=opts["epsilon"],
                           singleton_mean_zero=False)
    return episode_adv + opts["step_weight"] * step_adv


__all__ = ["EPISODE_MEANS", "MODES", "advantages", "check_options", "discounted_returns",
           "step_group_sizes", "step_groups"]
