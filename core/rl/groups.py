"""Group-level RL methods for GRPO-style training, framework-free (NumPy): the group-relative advantage, a signal
for groups where every sample fails, and the success-based group filter of dynamic sampling.

A *group* is the samples of one prompt/task (verl's ``uid``); ``rewards`` are the (possibly shaped) scalar rewards
the advantage reads; ``success`` is the binary outcome (GUI-R1's accuracy part, the agent's task success).

- :func:`grpo_advantages`: (r - mean) / (std + epsilon) within each group (``norm_by_std``; else r - mean, Dr.GRPO),
  std unbiased; a group of one gets mean 0 and std 1. The same rule as verl 0.9.1's
  ``compute_grpo_outcome_advantage`` (``verl/trainer/ppo/core_algos.py``), in float64.
- :func:`negative_sample_advantages` (``adv_estimator: grpo_nsr``): groups where every sample fails get the fixed
  advantage ``-lambda`` on every sample; every other group gets :func:`grpo_advantages`. Source: negative-sample
  reinforcement, Zhu et al., "The Surprising Effectiveness of Negative Reinforcement in LLM Reasoning"
  (arXiv 2506.01347): pushing down the probability of failed samples alone (NSR) keeps and sharpens what the model
  already knows, where GRPO's group baseline gives an all-fail group a zero gradient. Default ``lambda = 0.1``:
  the number the paper's Weighted-REINFORCE uses (it weighs the positive term by 0.1 against the negative term's 1;
  its Sec. 5); here it is the size of the push on an all-fail group, kept small against the group-relative advantage
  of a mixed group (of order 1) so that many all-fail groups cannot drown the mixed groups' signal.
- :func:`success_groups` (dynamic sampling, DAPO, arXiv 2503.14476 Sec. 3.2 / Eq. 11 "0 < |{o_i | is_equivalent(a,
  o_i)}| < G"): a group is kept when its *success* differs within it; groups where every sample succeeds or every
  sample fails are dropped (and replaced by the trainer). The success, never the shaped reward: a shaped reward
  varies inside an all-fail group and would let it through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.numbers import NumberError, checked_number
from core.rl.rows import checked_values, group_rows

#: ``negative_sample_advantages``' default lambda (arXiv 2506.01347: Weighted-REINFORCE's lambda, 0.1).
DEFAULT_NSR_LAMBDA = 0.1


def successes(success: Sequence[Any], n: int) -> np.ndarray:
    """``success`` as booleans: a value > 0 is a success (1.0 / True), 0 a failure; NaN or a non-number is a
    ``ValueError`` naming the row."""
    return checked_values([float(v) if isinstance(v, (bool, np.bool_)) else v for v in success], "success", n) > 0


def checked_lambda(value: Any, name: str = "algorithm.nsr_lambda") -> float:
    """The NSR lambda: a finite number >= 0, else a ``ValueError`` naming ``name``."""
    try:
        return checked_number(value, name, minimum=0)
    except NumberError as e:
        raise ValueError(str(e)) from None


def grpo_advantages(group_ids: Sequence[Any], rewards: Sequence[float], *, norm_by_std: bool = True,
                    epsilon: float = 1e-6) -> np.ndarray:
    """Group-relative advantage of every sample (module docstring); float64."""
    n = len(group_ids)
    r = checked_values(rewards, "rewards", n)
    out = np.empty(n, dtype=np.float64)
    for members in group_rows(group_ids).values():
        values = r[members]
        if len(values) == 1:
            mean, std = 0.0, 1.0
        elif np.all(values == values[0]):  # all equal: exactly 0 (a float mean may miss the value by an ulp)
            mean, std = values[0], 0.0
        else:
            mean, std = values.mean(), values.std(ddof=1)
        out[members] = (values - mean) / (std + epsilon) if norm_by_std else values - mean
    return out


def negative_sample_advantages(group_ids: Sequence[Any], rewards: Sequence[float], success: Sequence[Any], *,
                               lam: float = DEFAULT_NSR_LAMBDA, norm_by_std: bool = True,
                               epsilon: float = 1e-6) -> np.ndarray:
    """:func:`grpo_advantages`, except that every sample of a group where every sample failed gets ``-lam``."""
    lam = checked_lambda(lam)
    out = grpo_advantages(group_ids, rewards, norm_by_std=norm_by_std, epsilon=epsilon)
    out[all_fail_rows(group_ids, success)] = -lam
    return out


def all_fail_rows(group_ids: Sequence[Any], success: Sequence[Any]) -> np.ndarray:
    """Bool per sample: every sample of its group failed (the rows negative-sample reinforcement pushes down)."""
    ok = successes(success, len(group_ids))
    out = np.zeros(len(group_ids), dtype=bool)
    for members in group_rows(group_ids).values():
        out[members] = not ok[members].any()
    return out


@dataclass(frozen=True)
class GroupFilter:
    """Which samples dynamic sampling keeps, and the counts it logs."""

    keep: np.ndarray  # bool per sample: its group's success is mixed
    kept: int  # groups kept
    all_success: int  # groups dropped because every sample succeeded
    all_fail: int  # groups dropped because every sample failed

    @property
    def dropped(self) -> int:
        return self.all_success + self.all_fail


def success_groups(group_ids: Sequence[Any], success: Sequence[Any]) -> GroupFilter:
    """Keep the groups whose success is mixed (DAPO's dynamic sampling on the success, module docstring)."""
    n = len(group_ids)
    ok = successes(success, n)
    keep = np.zeros(n, dtype=bool)
    kept = all_success = all_fail = 0
    for members in group_rows(group_ids).values():
        if ok[members].all():
            all_success += 1
        elif not ok[members].any():
            all_fail += 1
        else:
            keep[members] = True
            kept += 1
    return GroupFilter(keep=keep, kept=kept, all_success=all_success, all_fail=all_fail)


__all__ = ["DEFAULT_NSR_LAMBDA", "GroupFilter", "all_fail_rows", "checked_lambda", "grpo_advantages",
           "negative_sample_advantages", "success_groups", "successes"]
