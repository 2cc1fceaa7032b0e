"""Row-level helpers every method of :mod:`core.rl` shares: checked numbers and exactly comparable labels (task,
trajectory and group ids, anchors), with errors naming the argument and row."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from core.numbers import NumberError, checked_number


def anchor_key(anchor: Any) -> Hashable:
    """A hashable, exactly comparable form of an anchor (the authors' ``to_hashable``): strings and numbers as they
    are, numpy scalars as Python numbers, arrays and sequences as tuples, mappings as sorted item tuples.
    ``ValueError`` for anything else."""
    if anchor is None or isinstance(anchor, (str, bytes, bool, int, float)):
        return anchor
    if isinstance(anchor, (np.integer, np.floating, np.bool_)):
        return anchor.item()
    if isinstance(anchor, np.ndarray):
        return tuple(anchor_key(v) for v in anchor.ravel().tolist())
    if isinstance(anchor, (list, tuple)):
        return tuple(anchor_key(v) for v in anchor)
    if isinstance(anchor, dict):
        return tuple(sorted(((anchor_key(k), anchor_key(v)) for k, v in anchor.items()), key=repr))
    raise ValueError(f"an anchor must be a string, number, sequence, array or mapping, got {type(anchor).__name__}")


def hashable_rows(values: Sequence[Any], name: str, n: int) -> list[Hashable]:
    """:func:`anchor_key` of every row; ``ValueError`` naming ``name`` when a value is not one, or the row count
    differs from ``n``."""
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} rows, expected {n}")
    out = []
    for i, v in enumerate(values):
        try:
            out.append(anchor_key(v))
        except ValueError as e:
            raise ValueError(f"{name}[{i}]: {e}") from None
    return out


def checked_values(values: Sequence[Any], name: str, n: int) -> np.ndarray:
    """``values`` as float64, one per row (``n`` rows); a non-finite or non-number value is a ``ValueError`` naming
    ``name[row]``."""
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} rows, expected {n}")
    out = np.empty(n, dtype=np.float64)
    for i, v in enumerate(values):
        try:
            out[i] = checked_number(v, f"{name}[{i}]")
        except NumberError as e:
            raise ValueError(str(e)) from None
    return out


def group_rows(group_ids: Sequence[Any]) -> dict[Hashable, list[int]]:
    """The row indices of every group, groups in order of first appearance."""
    rows: dict[Hashable, list[int]] = {}
    for i, g in enumerate(group_ids):
        try:
            key = anchor_key(g)
        except ValueError as e:
            raise ValueError(f"group_ids[{i}]: {e}") from None
        rows.setdefault(key, []).append(i)
    return rows


def task_key(extra_info: Mapping[str, Any] | None, fallback: str) -> str:
    """The task a row stands for (difficulty filter, replay): ``task_id`` (+ ``seed``) of an agent row, ``index`` of a
    GUI-R1 row, else ``fallback`` (then the row is its own task)."""
    info = dict(extra_info or {})
    if info.get("task_id") is not None:
        return f"{info['task_id']}#{info.get('seed')}" if info.get("seed") is not None else str(info["task_id"])
    if info.get("index") is not None:
        return f"index:{info['index']}"
    return fallback


__all__ = ["anchor_key", "checked_values", "group_rows", "hashable_rows", "task_key"]
