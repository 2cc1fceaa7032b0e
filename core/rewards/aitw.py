"""AITW-style reward / metric pair (R1-V-GUI-agent): action-type match and parameter match.

Parameter match comes in two strengths:

* strict: identical parameters: the point equals the ground-truth point (to 1e-6 of the screen, in the ground truth's
  frame) or lies inside the ground-truth box; typed text identical after stripping; same scroll direction;
* tolerant: the point lies in the box or within ``screen_radius`` (14 %) of the screen from the ground-truth
  point / box centre, measured in the normalized frame; text F1 >= 0.5 (:func:`core.text_match.text_match`);
  same scroll direction (case-insensitive).

Actions without parameters (press_back, press_home, press_enter, complete, impossible, wait ...) match on the
type alone. The completion may be in any format :func:`core.parsers.parse_action` reads.

``overall = type_weight * type_match + (1 - type_weight) * accuracy`` where ``accuracy`` is the step
success (type match and parameter match of the chosen strength).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from core.actions import FREE_TEXT_ACTIONS, POINT_ACTIONS
from core.matching import POINT_RADIUS, match
from core.parsers import parse_action
from core.records import from_reward_inputs
from core.rewards.common import RewardInputError, predicted

KEYS = ("overall", "format", "accuracy", "type_match", "param_strict", "param_tolerant")


def aitw_score(completion: str, ground_truth: Any, extra_info: Mapping | None = None, *, strict: bool = False,
               type_weight: float = 0.5, screen_radius: float = POINT_RADIUS) -> dict[str, float]:
    """Score one step; returns :data:`KEYS`. Raises :class:`RewardInputError` on bad ground truth."""
    gold = from_reward_inputs(ground_truth, extra_info)
    if gold.action in POINT_ACTIONS and not gold.has_target:
        raise RewardInputError("gt_bbox", "a point action needs gt_bbox (or extra_info.bbox_original)")
    out = dict.fromkeys(KEYS, 0.0)
    res = parse_action(completion) if isinstance(completion, str) else None
    if res is None or not res.ok or res.action is None:
        return out
    try:
        pred = predicted(res.action, extra_info)
    except ValueError:  # a tool call whose arguments are no action
        return out
    out["format"] = 1.0
    m = match(pred, gold, radius=screen_radius)
    if m.type_ok:
        out["type_match"] = 1.0
        if gold.action in POINT_ACTIONS:
            s = bool(m.in_box) or (gold.box is None and m.distance is not None and m.distance <= 1e-6)
            t = s or (m.centre_distance is not None and m.centre_distance < screen_radius)
        elif gold.action in FREE_TEXT_ACTIONS:
            s = (res.action.text or "").strip() == (gold.text or "").strip()
            t = bool(m.text_ok)
        else:
            s = t = m.ok
        out["param_strict"], out["param_tolerant"] = float(s), float(t)
    out["accuracy"] = out["type_match"] * (out["param_strict"] if strict else out["param_tolerant"])
    out["overall"] = type_weight * out["type_match"] + (1 - type_weight) * out["accuracy"]
    return out


def aitw_metrics(results: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Aggregate per-step :func:`aitw_score` results: type accuracy and strict / tolerant step accuracy (%)."""
    n = type_ok = strict_ok = tol_ok = 0
    for r in results:
        n += 1
        type_ok += r["type_match"] > 0
        strict_ok += r["type_match"] > 0 and r["param_strict"] > 0
        tol_ok += r["type_match"] > 0 and r["param_tolerant"] > 0
    if n == 0:
        return {"n": 0, "type_acc": 0.0, "step_acc_strict": 0.0, "step_acc_tolerant": 0.0}
    return {"n": n, "type_acc": 100.0 * type_ok / n, "step_acc_strict": 100.0 * strict_ok / n,
            "step_acc_tolerant": 100.0 * tol_ok / n}


__all__ = ["KEYS", "aitw_metrics", "aitw_score"]
