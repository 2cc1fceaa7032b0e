"""Streaming JSONL scoring behind ``gui-agent score`` (atomic output, progress bar, bad rows reported).

The reward's parts are added under ``reward/<part>`` (``reward/format``, ``reward/accuracy``,
``reward/overall``, ...), so they never shadow an input column (r1gui has a part named ``completion``); scoring
an already scored file replaces its ``reward/...`` columns. One run per output at a time (an exclusive lock), an
existing output is replaced only with ``overwrite``, and model text is stored losslessly (a lone surrogate is
written as its JSON escape).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.data.summary import ConversionSummary
from core.io import atomic_write, output_lock
from core.outputs import refuse_existing
from core.rewards.registry import get_reward

#: Prefix of the reward's parts in a scored row.
PART_PREFIX = "reward/"


def score_row(row: Any, reward: str, options: Mapping[str, Any]) -> dict:
    """The row plus the reward's parts under ``reward/``; raises ValueError naming the field when the row is
    unusable."""
    if not isinstance(row, dict):
        raise ValueError(f"row is {type(row).__name__}, not a JSON object")
    if not isinstance(row.get("completion"), str):
        raise ValueError("field 'completion': missing or not a string")
    if "ground_truth" not in row:
        raise ValueError("field 'ground_truth': missing")
    extra = row.get("extra_info") or {}
    if not isinstance(extra, dict):
        raise ValueError("field 'extra_info': not a JSON object")
    parts = get_reward(reward)(row["completion"], row["ground_truth"], extra, **options)
    return {**row, **{PART_PREFIX + name: value for name, value in parts.items()}}


def score_file(src: Path, dst: Path, reward: str, options: Mapping[str, Any], *,
               overwrite: bool = False) -> ConversionSummary:
    """Score every line of ``src`` into ``dst`` (written atomically, under ``dst``'s lock). Unknown reward names
    raise KeyError; an existing ``dst`` without ``overwrite``, or ``dst`` being ``src``, raise ValueError."""
    from core.console import progress_bar

    get_reward(reward)
    src, dst = Path(src), Path(dst)
    if dst.exists() and dst.resolve() == src.resolve():
        raise ValueError(f"--output {dst} is the --input file; write the scores elsewhere")
    summary = ConversionSummary()
    with output_lock(dst):
        refuse_existing(dst, overwrite=overwrite)
        for stale in dst.parent.glob(f".{dst.name}.*.tmp"):  # core.io temp names of a killed run; we hold the lock
            stale.unlink(missing_ok=True)
        with atomic_write(dst, "wb") as out, src.open("rb") as lines:
            for lineno, raw in enumerate(progress_bar(lines, desc=f"score {reward}", unit="row"), start=1):
                if not raw.strip():
                    continue
                summary.read += 1
                try:
                    row = json.loads(raw.decode("utf-8"))
                except ValueError as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
                    summary.skip(f"invalid JSON line ({e.__class__.__name__})", f"line {lineno}")
                    continue
                try:
                    scored = score_row(row, reward, options)
                except ValueError as e:  # RewardInputError is a ValueError
                    summary.skip(str(e)[:160], f"line {lineno}")
                    continue
                out.write((json.dumps(scored, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace"))
                summary.written += 1
    return summary
