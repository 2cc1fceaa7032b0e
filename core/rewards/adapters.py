"""Calling conventions of each trainer, on top of :mod:`core.rewards.registry`.

The backend files (``verl/reward_fn.py``, ``verl/easyr1_reward.py``, ``VLM-R1/rewards.py``,
``ms-swift/plugin/gui_rewards.py``) are loaded by path by the trainers and only re-export from here.

* verl: ``compute_score(data_source, solution_str, ground_truth, extra_info=None, **reward_kwargs)`` ->
  ``{"score": value, **parts}``; ``reward_kwargs`` (``custom_reward_function.reward_kwargs``) pick the
  reward (``reward=r1gui``) and its options.
* EasyR1: ``compute_score(reward_inputs: list[dict], **kwargs) -> list[dict]`` (``reward_type=batch``) or
  one dict -> one dict (``sequential``); each output has ``overall`` and the parts.
* trl (VLM-R1): ``f(prompts, completions, **columns) -> list[float]``; completions are strings or
  conversations (lists of ``{"role", "content"}`` messages, content a string or a list of parts).
* ms-swift: ORM classes called as ``orm(completions, **batched_columns)``.

Ground truth columns: ``ground_truth``, else ``solution`` (GUI-R1 / VLM-R1 datasets); ``extra_info``
optional. Options may also come from the ``GUI_REWARD_OPTIONS`` environment variable (a JSON object),
which ms-swift and trl users can set without code; explicit options win.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.rewards.registry import check_options, get_reward

OPTIONS_ENV = "GUI_REWARD_OPTIONS"


def env_options() -> dict[str, Any]:
    """Options from ``$GUI_REWARD_OPTIONS`` (JSON object); empty when unset."""
    raw = os.environ.get(OPTIONS_ENV, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as e:
        raise ValueError(f"${OPTIONS_ENV} is not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise TypeError(f"${OPTIONS_ENV} must be a JSON object, got {type(value).__name__}")
    return value


def checked_options(reward: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``$GUI_REWARD_OPTIONS`` merged with ``options`` (explicit wins), checked for ``reward`` by
    :func:`core.rewards.registry.check_options`; what every trainer adapter calls when it builds a reward."""
    return check_options(reward, {**env_options(), **(options or {})})


def _plain(value: Any) -> Any:
    """numpy arrays / scalars (verl's non_tensor_batch, parquet rows) -> Python lists / numbers."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def completion_text(completion: Any) -> str:
    """The assistant text of a trl completion: a string, or the last assistant message of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        content = completion[-1].get("content", "")
        if isinstance(content, str):
            return content
        if isinstance(content, Sequence):
            return "".join(p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    raise TypeError(f"completion must be a string or a list of messages, got {type(completion).__name__}")


# --------------------------------------------------------------------------------------------- verl


def verl_compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                       reward: str = "r1gui", **options: Any) -> dict[str, float]:
    """verl ``custom_reward_function``: ``{"score": <the reward's value>, **all parts}`` (fixed keys)."""
    spec = get_reward(reward)
    opts = {k: v for k, v in options.items() if k not in ("reward_router_address", "reward_model_tokenizer")}
    result = spec(solution_str, _plain(ground_truth), _plain(extra_info or {}), **{**env_options(), **opts})
    return {"score": result[spec.value_key], **result}


# --------------------------------------------------------------------------------------------- EasyR1


def easyr1_compute_score(reward_inputs: Any, reward: str = "r1gui", **options: Any) -> Any:
    """EasyR1 reward function: a list of ``{"response", "ground_truth", ...}`` -> list of score dicts
    (``overall`` + parts); a single dict -> a single score dict."""
    spec = get_reward(reward)
    opts = {**env_options(), **options}

    def one(inp: Mapping) -> dict[str, float]:
        result = spec(inp["response"], _plain(inp["ground_truth"]), _plain(inp.get("extra_info") or {}), **opts)
        return {**result, "overall": result[spec.value_key]}

    if isinstance(reward_inputs, Mapping):
        return one(reward_inputs)
    return [one(inp) for inp in reward_inputs]


# --------------------------------------------------------------------------------------------- trl / ms-swift


def _column(columns: Mapping[str, Any], n: int) -> list[Any]:
    for key in ("ground_truth", "solution"):
        if columns.get(key) is not None:
            values = list(columns[key])
            if len(values) != n:
                raise ValueError(f"column '{key}' has {len(values)} rows for {n} completions")
            return values
    raise KeyError("the dataset needs a 'ground_truth' or 'solution' column for GUI rewards; "
                   f"got columns {sorted(columns)}")


def score_columns(reward: str, completions: Sequence[Any], columns: Mapping[str, Any],
                  options: Mapping[str, Any] | None = None, value_key: str | None = None) -> list[float]:
    """One float per completion, ground truth from the batched dataset columns."""
    spec = get_reward(reward)
    key = value_key or spec.value_key
    truths = _column(columns, len(completions))
    extras = columns.get("extra_info")
    extras = list(extras) if extras is not None else [None] * len(completions)
    opts = {**env_options(), **(options or {})}
    return [float(spec(completion_text(c), _plain(g), _plain(e or {}), **opts)[key])
            for c, g, e in zip(completions, truths, extras, strict=False)]


def trl_reward_func(reward: str, **options: Any) -> Callable[..., list[float]]:
    """A trl ``GRPOTrainer`` reward function ``f(prompts, completions, **columns) -> list[float]``; ``options`` are
    checked now (the script that picks the rewards checks ``$GUI_REWARD_OPTIONS`` with :func:`checked_options`)."""
    check_options(reward, options)

    def reward_func(prompts: Any = None, completions: Sequence[Any] = (), **columns: Any) -> list[float]:
        return score_columns(reward, completions, columns, options)

    reward_func.__name__ = reward
    reward_func.__qualname__ = reward
    return reward_func


# --------------------------------------------------------------------------------------------- control runs


def shuffled_within_batch(reward_funcs: Sequence[Callable[..., list]], seed: int) -> list[Callable[..., list]]:
    """A shuffled-reward control of trl reward functions: each wrapper computes its function's real values for the
    batch, then returns them permuted within the batch (same values, assigned to the wrong completions).

    Batch ``k`` (the k-th call of each wrapper) is permuted with ``random.Random(f"{seed}:{k}")``, so every
    reward function of one batch gets the SAME permutation (the per-completion total is permuted as a whole)
    and a run is repeatable. trl calls each reward function once per generation batch, in order.


    An ``async`` reward stays ``async`` (trl awaits the functions ``inspect.iscoroutinefunction`` names and calls
    the others): its wrapper awaits it, then permutes.
    """

    def wrap(func: Callable[..., list]) -> Callable[..., list]:
        calls = 0

        def permuted(values: Any) -> list:
            nonlocal calls
            values = list(values)
            order = list(range(len(values)))
            random.Random(f"{seed}:{calls}").shuffle(order)
            calls += 1
            return [values[i] for i in order]

        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def shuffled_async(*args: Any, **kwargs: Any) -> list:
                return permuted(await func(*args, **kwargs))

            return shuffled_async

        @functools.wraps(func)
        def shuffled(*args: Any, **kwargs: Any) -> list:
            return permuted(func(*args, **kwargs))

        return shuffled

    return [wrap(f) for f in reward_funcs]


__all__ = ["OPTIONS_ENV", "checked_options", "completion_text", "easyr1_compute_score", "env_options", "score_columns",
           "shuffled_within_batch", "trl_reward_func", "verl_compute_score"]
