"""The GUI-agent recipe's episode reward: the ``gui_agent`` dense reward per step plus a task-completion bonus.

Per turn, :func:`core.rewards.gui_agent.gui_agent_score` scores the model's text against the gold action of the
state it saw (action type, coordinate proximity, text similarity, strict format). Coordinates are compared on the
tool's :class:`~mobile_use_tool.CoordinateGrid`: the grid is the answer frame, so a 0-999 answer is read on a
999x999 "screen". The completion bonus is the episode's goal check (the simulated phone's own check online; every
expected action matched in order on a replayed trajectory offline).

GRPO needs one scalar per trajectory (``aggregation``):

- ``mean`` (default): mean of the per-turn ``overall`` scores + ``completion_bonus`` x success;
- ``last``: the last turn's ``overall`` + ``completion_bonus`` x success.

A turn without a gold action (the replayed trajectory went off its log, or the task was already done) scores 0.
Every part is returned for logging (``gui_agent/<part>``: mean over turns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.actions import Action, canonical_action_name
from core.agent_recipe import AGGREGATIONS
from core.numbers import NumberError, checked_number
from core.rewards.common import RewardInputError
from core.rewards.gui_agent import KEYS, gui_agent_score
from mobile_use_tool import CoordinateGrid, screen_size


@dataclass(frozen=True)
class TurnScore:
    """The dense parts of one turn (:data:`core.rewards.gui_agent.KEYS`); ``gold`` False when it had no gold."""

    parts: dict[str, float]
    gold: bool


def gold_ground_truth(gold: Action, gold_box: Sequence[float] | None, grid: CoordinateGrid,
                      screen: Sequence[float]) -> dict[str, Any]:
    """``gui_agent`` ground truth for a gold action in screen pixels: canonical name, target box (or point) and
    text/direction, coordinates on ``grid``."""
    gt: dict[str, Any] = {"action": canonical_action_name(gold.type)}
    if gold_box is not None:
        gt["gt_bbox"] = grid.box_from_screen(gold_box, screen)
    elif gold.point is not None:
        gt["gt_bbox"] = grid.from_screen(gold.point, screen, rounded=False)
    text = gold.direction if gold.type == "scroll" else gold.text
    if text is not None:
        gt["input_text"] = text
    return gt


def score_turn(text: str, gold: Action | None, gold_box: Sequence[float] | None, grid: CoordinateGrid,
               screen: Sequence[float]) -> TurnScore:
    """Dense score of one turn's model ``text`` (answer on ``grid``) against the state's gold action."""
    if gold is None:
        return TurnScore(dict.fromkeys(KEYS, 0.0), gold=False)
    try:
        screen = screen_size(screen)
    except NumberError as e:
        raise RewardInputError("screen_size", str(e)) from None
    extra = {"frame": "original", "image_size": list(grid.extent(screen))}
    return TurnScore(gui_agent_score(text, gold_ground_truth(gold, gold_box, grid, screen), extra), gold=True)


def episode_reward(turns: Sequence[TurnScore], success: bool, *, aggregation: str = "mean",
                   completion_bonus: float = 1.0) -> tuple[float, dict[str, float]]:
    """(scalar reward, logged parts) of an episode: see the module docstring."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"gui_agent.aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    completion_bonus = checked_number(completion_bonus, "gui_agent.completion_bonus", minimum=0)
    overall = [t.parts["overall"] for t in turns]
    dense = (sum(overall) / len(overall) if aggregation == "mean" else overall[-1]) if overall else 0.0
    bonus = completion_bonus * float(success)
    n = max(len(turns), 1)
    parts = {f"gui_agent/{k}": sum(t.parts[k] for t in turns) / n for k in KEYS}
    parts.update({"gui_agent/dense": dense, "gui_agent/completion_bonus": bonus, "gui_agent/success": float(success),
                  "gui_agent/turns": float(len(turns)), "gui_agent/score": dense + bonus})
    return dense + bonus, parts


__all__ = ["AGGREGATIONS", "KEYS", "TurnScore", "episode_reward", "gold_ground_truth", "score_turn"]
