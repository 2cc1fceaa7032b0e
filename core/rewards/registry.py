"""Rewards by name, so every trainer adapter and the CLI pick them the same way.

``score(name, completion, ground_truth, extra_info, **options)`` returns the reward's dict (its
``keys``, the same for every sample); ``spec.value_key`` names the single float a trainer that wants one
number per sample uses (``overall`` for full rewards, ``format`` / ``accuracy`` for the split ones).

Options (all optional): ``mode`` ('default' | 'guir1'; r1gui, and gaussian's format part), ``format_weight``,
``accuracy_weight``, ``gate_format`` (format counts only when accuracy > 0), ``point_radius`` (r1gui and
gaussian, 2-number ground truths), ``alpha`` (gaussian: sigma / box size, default 0.5), ``weights`` (dict for gui_agent), ``coord_radius`` (gui_agent), ``strict``,
``type_weight``, ``screen_radius`` (aitw). Radii are fractions of the screen (default
:data:`core.matching.POINT_RADIUS`, 0.14). Every call checks its options with :func:`check_options` (names the
reward takes; numbers finite and in range: weights >= 0, ``type_weight`` in [0, 1], radii > 0; flags true/false);
the adapters call it once more when a trainer builds the reward, so a typo fails at config load.
"""

from __future__ import annotations

import inspect
import math
from functools import cache
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.console import quoted
from core.geometry import Frame
from core.rewards import aitw, gaussian, gui_agent, r1gui, r1v
from core.matching import POINT_RADIUS
from core.numbers import NumberError, checked_number
from core.records import load_json_object
from core.rewards.common import Knobs


@dataclass(frozen=True)
class RewardSpec:
    name: str
    fn: Callable[..., dict[str, float]]
    keys: tuple[str, ...]
    value_key: str
    description: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    #: The template answer formats (``PromptTemplate.answer_format``) whose answers it scores; for a reward of one
    #: tool only, ``tool`` is the tool the answers must call (``PromptTemplate.answer_tool``).
    formats: frozenset[str] = frozenset()
    tool: str | None = None

    def reads(self, template: Any) -> bool:
        """Whether this reward scores the answers of ``template`` (a :class:`core.prompt_base.PromptTemplate`):
        its gold answer scores the maximum. A template it does not read is no training target for it. No reward
        reads a ``grid999`` template (``qwen3vl-mobile-agent``, the Qwen3-VL cookbook's 999 x 999 screen): an
        evaluation prompt, whose gold points are fractional on that grid where answers write integers."""
        if getattr(template, "frame", None) is Frame.GRID999:
            return False
        return template.answer_format in self.formats and self.tool in (None, template.answer_tool)

    def __call__(self, completion: str, ground_truth: Any, extra_info: Mapping | None = None,
                 **options: Any) -> dict[str, float]:
        extra = None if extra_info is None else load_json_object(extra_info, "extra_info")  # named error if no object
        parts = self.fn(completion, ground_truth, extra, **check_options(self.name, {**self.defaults, **options}))
        return finite_parts(self.name, parts)

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


#: r1gui / gaussian read GUI-R1's <think>/<answer>; gui_agent one mobile_use call in the agent recipe's layout (a
#: computer_use answer, GUI-Owl-1.5's grounding format, is no call its agent loop executes); aitw every format
#: parse_action reads, of which the training templates write these two; r1v R1-V's "content: ... assistantos"
#: layout, which no template writes.
_GUIR1 = {"formats": frozenset({"guir1"})}
_ANY = {"formats": frozenset({"guir1", "tool_call"})}
_SPECS = (
    RewardSpec("r1gui", _r1gui, r1gui.KEYS, "overall", "GUI-R1 r1gui, corrected (mode=guir1: the published one)",
               **_GUIR1),
    RewardSpec("r1gui_guir1", _r1gui, r1gui.KEYS, "overall", "GUI-R1 r1gui exactly as published",
               {"mode": "guir1"}, **_GUIR1),
    RewardSpec("r1gui_format", _r1gui, r1gui.KEYS, "format", "r1gui format part only (0/1)", **_GUIR1),
    RewardSpec("r1gui_accuracy", _r1gui, r1gui.KEYS, "accuracy", "r1gui accuracy part only (0/1)", **_GUIR1),
    RewardSpec("gaussian", _gaussian, gaussian.KEYS, "overall", "GUI-G2 Gaussian point reward, r1gui's format",
               **_GUIR1),
    RewardSpec("gaussian_accuracy", _gaussian, gaussian.KEYS, "accuracy", "GUI-G2 Gaussian accuracy part only (0..1)",
               **_GUIR1),
    RewardSpec("gui_agent", _gui_agent, gui_agent.KEYS, "overall", "dense Qwen3-VL tool-call agent reward",
               formats=frozenset({"tool_call"}), tool=gui_agent.TOOL_NAME),
    RewardSpec("aitw", aitw.aitw_score, aitw.KEYS, "overall", "AITW type + tolerant parameter match", **_ANY),
    RewardSpec("aitw_strict", aitw.aitw_score, aitw.KEYS, "overall", "AITW type + strict parameter match",
               {"strict": True}, **_ANY),
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
        raise KeyError(f"unknown reward {quoted(name)}; known: {reward_names()}") from None


class RewardValueError(ValueError):
    """A reward part that came out as no finite number (weights whose products or sum overflow the float range);
    the sample fails with this reason instead of giving a trainer ``inf`` or ``nan``."""

    def __init__(self, reward: str, part: str, reason: str):
        super().__init__(f"reward {reward!r}: part {part!r} {reason}")
        self.reward, self.part, self.reason = reward, part, reason


def finite_parts(reward: str, parts: Mapping[str, Any]) -> dict[str, float]:
    """``parts`` when every one is a finite number (:func:`core.numbers.checked_number`), else
    :class:`RewardValueError` naming the first that is not. Every reward's result passes here."""
    for part, value in parts.items():
        try:
            checked_number(value, part)
        except NumberError as e:
            raise RewardValueError(reward, part, f"{e.reason} (check the reward's weights)") from None
    return dict(parts)


class RewardOptionError(ValueError):
    """A reward option that cannot be used; ``option`` names it."""

    def __init__(self, reward: str, option: str, reason: str):
        super().__init__(f"reward {reward!r}: option {option!r}: {reason}")
        self.reward, self.option, self.reason = reward, option, reason


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {value!r:.60}")
    return value


def _choice(*choices: str) -> Callable[[Any, str], str]:
    def check(value: Any, name: str) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}, got {value!r:.60}")
        return value
    return check


def _weights(value: Any, name: str) -> dict[str, float]:
    """``gui_agent``'s part weights: a mapping of :class:`gui_agent.DenseWeights` names to finite weights >= 0."""
    if not isinstance(value, Mapping):
        raise ValueError(f"must be a mapping of part weights, got {value!r:.60}")
    known = list(gui_agent.DenseWeights.__dataclass_fields__)
    unknown = [k for k in value if k not in known]
    if unknown:
        raise ValueError(f"unknown part {quoted(unknown[0])}; known: {', '.join(known)}")
    return {k: checked_number(v, f"{name}.{k}", minimum=0) for k, v in value.items()}


def _in_range(**bounds: float) -> Callable[[Any, str], float]:
    return lambda value, name: checked_number(value, name, **bounds)


#: Rules of the options, by name (shared by every reward that takes the option): ``rule(value, name)`` returns the
#: value or raises ``ValueError`` saying why. A reward's new option adds its rule here; an option without one
#: still has to be a finite number when it is a number.
OPTION_RULES: dict[str, Callable[[Any, str], Any]] = {
    "mode": _choice(*r1gui.MODES),
    "accuracy_weight": _in_range(minimum=0), "format_weight": _in_range(minimum=0),
    "type_weight": _in_range(minimum=0, maximum=1),
    "gate_format": _flag, "strict": _flag,
    "point_radius": lambda v, n: None if v is None else checked_number(v, n, above=0),
    "coord_radius": _in_range(above=0), "screen_radius": _in_range(above=0), "alpha": _in_range(above=0),
    "weights": lambda v, n: None if v is None else _weights(v, n),
}


@cache
def reward_options(reward: str) -> tuple[str, ...]:
    """The option names reward ``reward`` takes (its function's keyword parameters)."""
    params = inspect.signature(get_reward(reward).fn).parameters
    return tuple(n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY)


def check_options(reward: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` of ``reward`` checked before any sample is scored: every name is one the reward takes, every
    value passes its rule in :data:`OPTION_RULES` (numbers finite and in range); :class:`RewardOptionError` naming
    the option otherwise. Returns the options as the reward will get them."""
    known = reward_options(reward)
    out = {}
    for name, value in options.items():
        if name not in known:
            raise RewardOptionError(reward, name, f"unknown option; {reward} takes "
                                                  f"{', '.join(known) if known else 'no options'}")
        rule = OPTION_RULES.get(name)
        try:
            if rule is not None:
                out[name] = rule(value, name)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                out[name] = checked_number(value, name)
            else:
                out[name] = value
        except NumberError as e:  # a number inside the option (weights.coord) keeps its own name
            raise RewardOptionError(reward, name, e.reason if e.name == name else str(e)) from None
        except ValueError as e:
            raise RewardOptionError(reward, name, str(e)) from None
    _check_weight_total(reward, out)
    return out


#: Options whose values weigh the parts of ``overall`` (``weights`` is a mapping of them).
_WEIGHT_OPTIONS = ("accuracy_weight", "format_weight", "weights")


@cache
def _weight_defaults(reward: str) -> dict[str, Any]:
    """The weight options ``reward`` takes, with their defaults."""
    params = inspect.signature(get_reward(reward).fn).parameters
    return {n: params[n].default for n in _WEIGHT_OPTIONS if n in params}


def _check_weight_total(reward: str, options: Mapping[str, Any]) -> None:
    """The weights of ``reward`` (given or default) add up to a finite number, so no ``overall`` can overflow;
    :class:`RewardOptionError` naming the weights otherwise."""
    total = 0.0
    for name, default in _weight_defaults(reward).items():
        value = options.get(name, default)
        total += sum((value or {}).values()) if name == "weights" else float(value)
    if not math.isfinite(total):
        given = [n for n in _WEIGHT_OPTIONS if n in options]
        raise RewardOptionError(reward, given[0] if given else "weights",
                                "the weights add up beyond the float range; every overall would be inf")


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


__all__ = ["OPTION_RULES", "REWARDS", "RewardOptionError", "RewardSpec", "RewardValueError", "check_options",
           "finite_parts", "get_reward",
           "reward_options", "reward_names", "score", "score_batch"]
