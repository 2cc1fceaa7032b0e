"""Online difficulty filter, framework-free: tasks the policy always or never solves lately are set aside for a while.

Practice of ARPO (arXiv 2505.16282: training tasks chosen by the base model's success, "valuable tasks" only) and
POLARIS (its online filtering of prompts whose pass rate is 0 or 1): a group of samples of one task teaches GRPO
nothing when they all agree, so the trainer stops spending rollouts on it.

Rule: every task keeps its last ``window`` outcomes (success or not, one per rollout). When a task has ``window``
outcomes and its pass rate over them is 0 or 1, it is skipped for the next ``skip_steps`` training steps and its
history is cleared (it is judged again on ``window`` fresh rollouts once it is back). Steps are the trainer's global
step numbers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.numbers import NumberError, checked_number
from core.rl.groups import successes
from core.rl.rows import anchor_key

#: Outcomes per task the pass rate is read from (a group of 8: one group decides).
DEFAULT_WINDOW = 8
#: Training steps a task is set aside.
DEFAULT_SKIP_STEPS = 4


def _whole(value: Any, name: str) -> int:
    try:
        return checked_number(value, name, minimum=1, integer=True)
    except NumberError as e:
        raise ValueError(str(e)) from None


@dataclass
class DifficultyFilter:
    """The filter's state: recent outcomes and the step each skipped task comes back (module docstring)."""

    window: int = DEFAULT_WINDOW
    skip_steps: int = DEFAULT_SKIP_STEPS
    history: dict[Hashable, deque] = field(default_factory=dict)
    skipped_until: dict[Hashable, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.window = _whole(self.window, "algorithm.difficulty_filter.window")
        self.skip_steps = _whole(self.skip_steps, "algorithm.difficulty_filter.skip_steps")

    def is_skipped(self, task: Any, step: int) -> bool:
        """Whether ``task`` is set aside at training step ``step``."""
        return step < self.skipped_until.get(anchor_key(task), step)

    def active(self, task_ids: Sequence[Any], step: int) -> np.ndarray:
        """Bool per task: not set aside at ``step``."""
        return np.array([not self.is_skipped(t, step) for t in task_ids], dtype=bool)

    def update(self, task_ids: Sequence[Any], success: Sequence[Any], step: int) -> list[Hashable]:
        """Record a step's outcomes (one per rollout); returns the tasks set aside from the next step on."""
        ok = successes(success, len(task_ids))
        newly: list[Hashable] = []
        for task, s in zip(task_ids, ok, strict=True):
            key = anchor_key(task)
            if key in newly:  # set aside by this step's earlier outcomes: judged on fresh rollouts when back
                continue
            recent = self.history.setdefault(key, deque(maxlen=self.window))
            recent.append(bool(s))
            if len(recent) == self.window and (all(recent) or not any(recent)):
                self.skipped_until[key] = step + 1 + self.skip_steps
                recent.clear()
                newly.append(key)
        return newly

    def skipped_count(self, step: int) -> int:
        return sum(step < until for until in self.skipped_until.values())


__all__ = ["DEFAULT_SKIP_STEPS", "DEFAULT_WINDOW", "DifficultyFilter"]
