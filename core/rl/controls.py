"""The shuffled-reward control of an RL run, framework-free.

A run that learns only because of its rewards must stop learning when the rewards carry no information about the
actions taken. The control keeps everything else of the run (samples, groups, advantages' formula, optimizer) and
gives every sample of a step the reward of another sample of the same step: a seeded permutation of the step's
samples, drawn afresh each step (``numpy.random.default_rng([seed, step])``), so the reward distribution of the
batch is unchanged but no longer belongs to the answer it is credited to. Per-turn rewards (GiGPO's step
rewards) travel with the episode reward of their sample; they are cut or padded with 0 to the turn count of the
sample that receives them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def reward_permutation(n: int, *, seed: int, step: int) -> np.ndarray:
    """The permutation of ``n`` samples used at training ``step`` (same ``seed`` and ``step``: same order)."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, int(step) & 0xFFFFFFFF]).permutation(n)


def shuffled_rewards(scores: Sequence[float], step_rewards: Sequence[Sequence[float]] | None = None, *, seed: int,
                     step: int) -> tuple[np.ndarray, list[list[float]] | None]:
    """``scores`` (one per sample) permuted by :func:`reward_permutation`; ``step_rewards`` (per sample, one per
    turn) moved with them, each cut or padded with 0 to the receiving sample's own turn count."""
    scores = np.asarray(scores, dtype=np.float64)
    order = reward_permutation(len(scores), seed=seed, step=step)
    if step_rewards is None:
        return scores[order], None
    if len(step_rewards) != len(scores):
        raise ValueError(f"{len(step_rewards)} step-reward lists for {len(scores)} samples")
    moved = []
    for own, src in zip(step_rewards, order, strict=True):
        given = [float(v) for v in step_rewards[src]][:len(own)]
        moved.append(given + [0.0] * (len(own) - len(given)))
    return scores[order], moved


__all__ = ["reward_permutation", "shuffled_rewards"]
