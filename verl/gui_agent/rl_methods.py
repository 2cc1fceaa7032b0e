"""The RL methods of :mod:`core.rl` as verl 0.9.1 options of this project's recipes: the config keys, their checks and
the step from verl's samples (one token sequence per trajectory) to per-token advantages. No verl import: the
registered trainer (:mod:`gui_agent_trainer`) reads TransferQueue and calls these functions.

Keys (``algorithm`` section of verl's config; every new option is off unless a recipe names it):

- ``adv_estimator: gigpo`` (:func:`core.rl.gigpo.advantages`) with ``gigpo.{gamma, step_weight, mode, episode_mean,
  epsilon}`` (defaults 0.95, 1.0, mean_norm, trajectory, 1e-6: the paper's and the authors' scripts'). Rows are the
  model turns of each trajectory: anchors and step rewards come from the ``gui_agent`` loop's
  ``extra_fields["anchors"]`` / ``["step_rewards"]``; the task group is verl's prompt ``uid`` (the rollout.n
  sessions of one row), the trajectory the session. Each turn's tokens (a run of ``response_mask`` 1) get that
  turn's advantage, tool and feedback tokens none (0).
- ``adv_estimator: grpo_nsr`` (:func:`core.rl.groups.negative_sample_advantages`): GRPO, but a group whose samples
  all failed gets ``-nsr_lambda`` (default 0.1) on every model token. ``norm_adv_by_std_in_grpo`` as for GRPO.
- ``success_metric``: the ``reward_extra_info`` key that is the binary success (``gui_agent/success`` for the agent
  recipe, ``accuracy`` for GUI-R1's); unset: the first of the two the samples carry. verl's own
  ``filter_groups.{enable, metric}`` (DAPO dynamic sampling) takes the same key as its metric.
- ``replay.{enable, capacity}``: ARPO's success replay (:mod:`core.rl.replay`), capacity default 4.
- ``difficulty_filter.{enable, window, skip_steps}``: the online difficulty filter (:mod:`core.rl.difficulty`),
  defaults 8 and 4.
- ``shuffle_rewards.{enable, seed}``: the shuffled-reward control (:mod:`core.rl.controls`): every sample of a
  step gets another sample's reward (and step rewards) before any advantage is computed; seed default 0.

A bad value is one ``ValueError`` line naming ``algorithm.<key>``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.console import quoted
from core.rl import controls, difficulty, gigpo, groups, replay

#: The estimators computed here (any other name is verl's own).
OWN_ESTIMATORS = ("gigpo", "grpo_nsr")
#: Success keys looked for, in order, when ``algorithm.success_metric`` is unset.
SUCCESS_METRICS = ("gui_agent/success", "accuracy")
GIGPO_KEYS = ("gamma", "step_weight", "mode", "episode_mean", "epsilon")


@dataclass(frozen=True)
class RLOptions:
    """The checked options (module docstring)."""

    estimator: str
    gigpo: dict[str, Any]
    nsr_lambda: float
    norm_by_std: bool
    success_metric: str | None
    replay_capacity: int | None  # None: replay off
    difficulty: tuple[int, int] | None  # (window, skip_steps); None: filter off
    shuffle_seed: int | None = None  # the shuffled-reward control's seed; None: off

    def replay(self) -> replay.SuccessReplay | None:
        return None if self.replay_capacity is None else replay.SuccessReplay(capacity=self.replay_capacity)

    def difficulty_filter(self) -> difficulty.DifficultyFilter | None:
        if self.difficulty is None:
            return None
        window, skip = self.difficulty
        return difficulty.DifficultyFilter(window=window, skip_steps=skip)


def _section(algorithm: Mapping[str, Any], key: str, known: Sequence[str]) -> dict[str, Any]:
    value = algorithm.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"algorithm.{key} must be a mapping of {', '.join(known)}, got {quoted(value)}")
    section = dict(value)
    unknown = sorted(set(section) - set(known))
    if unknown:
        raise ValueError(f"algorithm.{key}: unknown key(s) {quoted(unknown)}; known: {', '.join(known)}")
    return section


def _switch(section: Mapping[str, Any], name: str) -> bool:
    value = section.get("enable", False)
    if not isinstance(value, bool):
        raise ValueError(f"{name}.enable must be true or false, got {quoted(value)}")
    return value


def rl_options(algorithm: Mapping[str, Any]) -> RLOptions:
    """The options of verl's ``algorithm`` section (a mapping or DictConfig), checked."""
    algorithm = dict(algorithm or {})
    estimator = str(algorithm.get("adv_estimator", "grpo"))
    gigpo_section = _section(algorithm, "gigpo", GIGPO_KEYS)
    gigpo_opts = gigpo.check_options(**gigpo_section, prefix="algorithm.gigpo.")
    nsr_lambda = groups.checked_lambda(algorithm.get("nsr_lambda", groups.DEFAULT_NSR_LAMBDA))
    metric = algorithm.get("success_metric")
    if metric is not None and (not isinstance(metric, str) or not metric):
        raise ValueError(f"algorithm.success_metric must be a reward part's name, got {quoted(metric)}")
    replay_section = _section(algorithm, "replay", ("enable", "capacity"))
    capacity = (replay.checked_capacity(replay_section.get("capacity", replay.DEFAULT_CAPACITY))
                if _switch(replay_section, "algorithm.replay") else None)
    filter_section = _section(algorithm, "difficulty_filter", ("enable", "window", "skip_steps"))
    difficulty_opts = None
    if _switch(filter_section, "algorithm.difficulty_filter"):
        checked = difficulty.DifficultyFilter(window=filter_section.get("window", difficulty.DEFAULT_WINDOW),
                                              skip_steps=filter_section.get("skip_steps",
                                                                            difficulty.DEFAULT_SKIP_STEPS))
        difficulty_opts = (checked.window, checked.skip_steps)
    shuffle_section = _section(algorithm, "shuffle_rewards", ("enable", "seed"))
    shuffle_seed = None
    if _switch(shuffle_section, "algorithm.shuffle_rewards"):
        seed = shuffle_section.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"algorithm.shuffle_rewards.seed must be a whole number, got {quoted(seed)}")
        shuffle_seed = seed
    if estimator in OWN_ESTIMATORS and algorithm.get("use_kl_in_reward"):
        raise ValueError(f"algorithm.use_kl_in_reward must be false with adv_estimator {estimator} (use the actor's "
                         "KL loss, actor_rollout_ref.actor.use_kl_loss)")
    return RLOptions(estimator=estimator, gigpo=gigpo_opts, nsr_lambda=nsr_lambda,
                     norm_by_std=bool(algorithm.get("norm_adv_by_std_in_grpo", True)), success_metric=metric,
                     replay_capacity=capacity, difficulty=difficulty_opts, shuffle_seed=shuffle_seed)


def shuffle_step(options: RLOptions, scores: Sequence[float], extras: Sequence[Mapping[str, Any] | None],
                 step: int) -> tuple[list[float], list[dict[str, Any] | None]]:
    """The shuffled-reward control of one step (``options.shuffle_seed`` set): each sample's episode reward and
    ``extra_fields["step_rewards"]`` moved to another sample (:func:`core.rl.controls.shuffled_rewards`)."""
    steps = [list((e or {}).get("step_rewards") or []) for e in extras]
    new_scores, new_steps = controls.shuffled_rewards(scores, steps, seed=options.shuffle_seed, step=step)
    moved = [None if e is None and not s else {**(e or {}), "step_rewards": s}
             for e, s in zip(extras, new_steps, strict=True)]
    return [float(v) for v in new_scores], moved


def turn_spans(mask: Sequence[int]) -> list[tuple[int, int]]:
    """The runs of ``response_mask`` 1 (the model's turns) as [start, end) token spans, in order."""
    spans, start = [], None
    for i, m in enumerate(list(mask) + [0]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            spans.append((start, i))
            start = None
    return spans


def sample_groups(keys: Sequence[str]) -> tuple[list[str], list[str]]:
    """(task group, trajectory) of every TransferQueue key ``{uid}_{session}_{index}``: the prompt's uid and
    ``{uid}_{session}``."""
    return [k.split("_")[0] for k in keys], [k.rsplit("_", 1)[0] for k in keys]


def success_values(extras: Sequence[Mapping[str, Any] | None], metric: str | None) -> tuple[str, np.ndarray]:
    """(the success key used, 0/1 per sample) from each sample's ``reward_extra_info``; ``metric`` None: the first
    of :data:`SUCCESS_METRICS` the first sample carries. A sample without it is a ``ValueError`` naming the key."""
    infos = [dict((e or {}).get("reward_extra_info") or {}) for e in extras]
    if metric is None:
        metric = next((m for m in SUCCESS_METRICS if infos and m in infos[0]), None)
        if metric is None:
            raise ValueError("algorithm.success_metric is unset and the samples' reward parts have none of "
                             f"{', '.join(SUCCESS_METRICS)}: name the success part")
    missing = [i for i, info in enumerate(infos) if metric not in info]
    if missing:
        raise ValueError(f"algorithm.success_metric {metric!r} is not a reward part of sample {missing[0]}")
    return metric, np.array([float(info[metric]) > 0 for info in infos], dtype=bool)


def token_advantages(options: RLOptions, keys: Sequence[str], masks: Sequence[Sequence[int]],
                     scores: Sequence[float], extras: Sequence[Mapping[str, Any] | None]
                     ) -> tuple[list[np.ndarray], dict[str, float]]:
    """Per sample, the advantage of every response token (float32, 0 where ``response_mask`` is 0) under
    ``options.estimator`` (gigpo or grpo_nsr), and the step's metrics. ``scores``: each trajectory's reward (the
    sum of its ``rm_scores``)."""
    tasks, trajs = sample_groups(keys)
    masks = [np.asarray(m, dtype=np.float32) for m in masks]
    metrics: dict[str, float] = {}
    if options.estimator == "grpo_nsr":
        _, ok = success_values(extras, options.success_metric)
        adv = groups.negative_sample_advantages(tasks, scores, ok, lam=options.nsr_lambda,
                                                norm_by_std=options.norm_by_std)
        metrics["rl/nsr/pushed_down_samples"] = float(groups.all_fail_rows(tasks, ok).sum())
        return [(a * m).astype(np.float32) for a, m in zip(adv, masks, strict=True)], metrics
    if options.estimator != "gigpo":
        raise ValueError(f"token_advantages computes {', '.join(OWN_ESTIMATORS)}, not {options.estimator!r}")
    row_task, row_traj, row_step, row_episode, row_anchor, row_of = [], [], [], [], [], []
    for j, (extra, score) in enumerate(zip(extras, scores, strict=True)):
        extra = extra or {}
        anchors, step_rewards = list(extra.get("anchors") or []), list(extra.get("step_rewards") or [])
        if not anchors or len(anchors) != len(step_rewards):
            raise ValueError(f"adv_estimator gigpo needs per-turn extra_fields 'anchors' and 'step_rewards' of one "
                             f"length (the gui_agent loop's); sample {keys[j]} has {len(anchors)} and "
                             f"{len(step_rewards)}")
        for t, (anchor, reward) in enumerate(zip(anchors, step_rewards, strict=True)):
            row_task.append(tasks[j])
            row_traj.append(trajs[j])
            row_step.append(reward)
            row_episode.append(score)
            row_anchor.append(anchor)
            row_of.append((j, t))
    opts = options.gigpo
    row_adv = gigpo.advantages(row_task, row_traj, row_step, row_episode, row_anchor, gamma=opts["gamma"],
                               step_weight=opts["step_weight"], mode=opts["mode"],
                               episode_mean=opts["episode_mean"], epsilon=opts["epsilon"])
    out = [np.zeros_like(m) for m in masks]
    spans = [turn_spans(m) for m in masks]
    for (j, t), a in zip(row_of, row_adv, strict=True):
        if t < len(spans[j]):  # turns past the response budget have no tokens
            start, end = spans[j][t]
            out[j][start:end] = a
    turns_of = Counter(j for j, _ in row_of)
    for j, s in enumerate(spans):
        turns = turns_of[j]
        if len(s) > turns:
            raise ValueError(f"sample {keys[j]}: {len(s)} model-token runs in response_mask but {turns} turns")
    sizes = gigpo.step_group_sizes(row_task, row_anchor)
    metrics.update({"rl/gigpo/step_groups": float(len(sizes)), "rl/gigpo/step_group_size/mean": float(sizes.mean()),
                    "rl/gigpo/step_group_size/max": float(sizes.max()),
                    "rl/gigpo/rows_in_shared_groups": float(sizes[sizes > 1].sum() / sizes.sum())})
    return out, metrics


def group_metrics(keys: Sequence[str], extras: Sequence[Mapping[str, Any] | None], metric: str | None,
                  scores: Sequence[float]) -> dict[str, float]:
    """Per step: how many groups of the batch are mixed, all-fail and all-success (by the success part), and the
    share of groups whose reward has zero spread (the groups plain GRPO learns nothing from)."""
    tasks, _ = sample_groups(keys)
    _, ok = success_values(extras, metric)
    split = groups.success_groups(tasks, ok)
    zero = sum(1 for rows in groups.group_rows(tasks).values() if np.ptp(np.asarray(scores)[rows]) == 0)
    n = max(split.kept + split.dropped, 1)
    return {"rl/groups/mixed": float(split.kept), "rl/groups/all_fail": float(split.all_fail),
            "rl/groups/all_success": float(split.all_success), "rl/groups/zero_reward_std_frac": zero / n}


__all__ = ["GIGPO_KEYS", "OWN_ESTIMATORS", "RLOptions", "SUCCESS_METRICS", "group_metrics", "rl_options",
           "sample_groups", "shuffle_step", "success_values", "token_advantages", "turn_spans"]
