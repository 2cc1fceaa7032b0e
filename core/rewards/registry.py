"""Rewards by name, so every trainer adapter and the CLI pick them the same way.

``score(name, completion, ground_truth, extra_info, **options)`` returns the reward's dict (its
``keys``, the same for every sample); ``spec.value_key`` names the single float a trainer that wants one
number per sample uses (``overall`` for full rewards, ``format`` / ``accuracy`` for the split ones).

Options (all optional): ``mode`` ('default' | 'guir1'; r1gui, and gaussian's format part), ``format_weight``,
``accuracy_weight``, ``gate_format`` (format counts only when accuracy > 0), ``point_radius`` (r1gui and
gaussian, 2-number ground truths), ``alpha`` (gaussian: sigma / box size, default 0.5), ``weights`` (dict for gui_agent), ``coord_radius`` (gui_agent), ``strict``,
``type_weight``, ``screen_radius`` (aitw). Radii are fractions of the screen (default
:data:`core.matching.POINT_RADIUS`, 0.14).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.rewards import aitw, gaussian, gui_agent, r1gui, r1v
from core.matching import POINT_RADIUS
from core.rewards.common import Knobs


@dataclass(frozen=True)
class RewardSpec:
    name: str
    fn: Callable[..., dict[str, float]]
    keys: tuple[str, ...]
    value_key: str
    description: str
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, completion: str, ground_truth: Any, extra_info: Mapping | None = None,
                 **options: Any) -> dict[str, float]:
        return self.fn(completion, ground_truth, extra_info, **{**self.defaults, **options})

    def value(self, completion: str, ground_truth: Any, extra_info: Mapping | None = None, **options: Any) -> float:
        return self(completion, ground_truth, extra_info, **options)[self.value_key]


def _knobs(accuracy_weight: float, format_weight: float, gate_format: bool) -> Knobs:
    return Knobs(accuracy_weight=float(accuracy_weight), format_weight=float(format_weight),
                 gate_format=bool(gate_format))


def _r1gui(completion: str, ground_truth: Any, extra_info: Mapping | None = None, *, mode: str = "default",
           accuracy_weight: float = 0.8, format_weight: float = 0.2, gate_format: bool = False,
           point_radius: float | None = None) -> dict[str, float]:
    return r1gui.r1gui_score(completion, ground_truth, extra_info, mode=mode,
                             knobs=_knobs(accuracy_weight, format_weight, gate_format),
                             point_radius=point_radius)


def _gaussian(completion: str, ground_truth: Any, extra_info: Mapping | None = None, *,
              alpha: float = gaussian.DEFAULT_ALPHA, mode: str = "default", accuracy_weight: float = 0.8,
              format_weight: float = 0.2, gate_format: bool = False,
              point_radius: float | None = None) -> dict[str, float]:
    return gaussian.gaussian_score(completion, ground_truth, extra_info, alpha=alpha, mode=mode,
                                   knobs=_knobs(accuracy_weight, format_weight, gate_format),
                                   point_radius=point_radius)


def _gui_agent(completion: str, ground_truth: Any, extra_info: Mapping | None = None, *,
               weights: Mapping[str, float] | None = None, coord_radius: float = POINT_RADIUS) -> dict[str, float]:
    w = gui_agent.DenseWeights(**{k: float(v) for k, v in (weights or {}).items()})
    return gui_agent.gui_agent_score(completion, ground_truth, extra_info, weights=w, coord_radius=coord_radius)


def _aitw(completion: str, ground_truth: Any, extra_info: Mapping | None = None, **options: Any) -> dict[str, float]:
    return aitw.aitw_score(completion, ground_truth, extra_info, **options)


_SPECS = (
    RewardSpec("r1gui", _r1gui, r1gui.KEYS, "overall", "GUI-R1 r1gui, corrected (mode=guir1: the published one)"),
    RewardSpec("r1gui_guir1", _r1gui, r1gui.KEYS, "overall", "GUI-R1 r1gui exactly as published",
               {"mode": "guir1"}),
    RewardSpec("r1gui_format", _r1gui, r1gui.KEYS, "format", "r1gui format part only (0/1)"),
    RewardSpec("r1gui_accuracy", _r1gui, r1gui.KEYS, "accuracy", "r1gui accuracy part only (0/1)"),
    RewardSpec("gaussian", _gaussian, gaussian.KEYS, "overall", "GUI-G2 Gaussian point reward, r1gui's format"),
    RewardSpec("gaussian_accuracy", _gaussian, gaussian.KEYS, "accuracy", "GUI-G2 Gaussian accuracy part only (0..1)"),
    RewardSpec("gui_agent", _gui_agent, gui_agent.KEYS, "overall", "dense Qwen3-VL tool-call agent reward"),
    RewardSpec("aitw", _aitw, aitw.KEYS, "overall", "AITW type + tolerant parameter match"),
    RewardSpec("aitw_strict", _aitw, aitw.KEYS, "overall", "AITW type + strict parameter match", {"strict": True}),
    RewardSpec("r1v", r1v.r1v_score, r1v.KEYS, "overall", "R1-V-GUI-agent accuracy + think format, as published"),
    RewardSpec("r1v_accuracy", r1v.r1v_score, r1v.KEYS, "accuracy", "R1-V-GUI-agent accuracy_reward (0, 0.5, 1)"),
    RewardSpec("r1v_format", r1v.r1v_score, r1v.KEYS, "format", "R1-V-GUI-agent format_reward (0 or 0.5)"),
)
REWARDS: dict[str, RewardSpec] = {s.name: s for s in _SPECS}


def reward_names() -> list[str]:
    return list(REWARDS)


def get_reward(name: str) -> RewardSpec:
    try:
        return REWARDS[name]
    except KeyError:
        raise KeyError(f"unknown reward {name!r}; known: {reward_names()}") from None


def score(name: str, completion: str, ground_truth: Any, extra_info: Mapping | None = None,
          **options: Any) -> dict[str, float]:
    """Score one completion with the named reward."""
    return get_reward(name)(completion, ground_truth, extra_info, **options)


def score_batch(name: str, completions: Sequence[str], ground_truths: Sequence[Any],
                extra_infos: Sequence[Mapping | None] | None = None, **options: Any) -> list[dict[str, float]]:
    """Score a batch; the lists must have the same length."""
    if len(completions) != len(ground_truths) or (extra_infos is not None and len(extra_infos) != len(completions)):
        raise ValueError(f"batch lengths differ: {len(completions)} completions, {len(ground_truths)} ground truths"
                         + ("" if extra_infos is None else f", {len(extra_infos)} extra_infos"))
    spec = get_reward(name)
    extras = extra_infos if extra_infos is not None else [None] * len(completions)
    return [spec(c, g, e, **options) for c, g, e in zip(completions, ground_truths, extras, strict=False)]


__all__ = ["REWARDS", "RewardSpec", "get_reward", "reward_names", "score", "score_batch"]
