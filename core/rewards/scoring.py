"""Streaming JSONL scoring behind ``gui-agent score`` (atomic output, progress bar, bad rows reported)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.data.summary import ConversionSummary
from core.io import atomic_write
from core.rewards.registry import get_reward


def score_row(row: Any, reward: str, options: Mapping[str, Any]) -> dict:
    """The row plus the reward's parts; raises ValueError naming the field when the row is unusable."""
    if not isinstance(row, dict):
        raise ValueError(f"row is {type(row).__name__}, not a JSON object")
    if not isinstance(row.get("completion"), str):
        raise ValueError("field 'completion': missing or not a string")
    if "ground_truth" not in row:
        raise ValueError("field 'ground_truth': missing")
    extra = row.get("extra_info") or {}
    if not isinstance(extra, dict):
        raise ValueError("field 'extra_info': not a JSON object")
    return {**row, **get_reward(reward)(row["completion"], row["ground_truth"], extra, **options)}


def score_file(src: Path, dst: Path, reward: str, options: Mapping[str, Any]) -> ConversionSummary:
    """Score every line of ``src`` into ``dst`` (written atomically). Unknown reward names raise KeyError."""
    from tqdm import tqdm

    get_reward(reward)
    summary = ConversionSummary()
    with atomic_write(dst, "w") as out, src.open(encoding="utf-8") as lines:
        for lineno, line in enumerate(tqdm(lines, desc=f"score {reward}", unit="row"), start=1):
            if not line.strip():
                continue
            summary.read += 1
            try:
                row = json.loads(line)
            except ValueError as e:
                summary.skip(f"invalid JSON line ({e.__class__.__name__})", f"line {lineno}")
                continue
            try:
                scored = score_row(row, reward, options)
            except ValueError as e:  # RewardInputError is a ValueError
                summary.skip(str(e)[:160], f"line {lineno}")
                continue
            out.write(json.dumps(scored, ensure_ascii=False) + "\n")
            summary.written += 1
    return summary
