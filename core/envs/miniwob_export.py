"""MiniWoB++ gold episodes -> the unified parquet (``gui-agent world export --env miniwob``): real Chromium renderings
for every converter, trainer recipe and benchmark path.

Episode k of ``n`` runs task ``tasks[k % len(tasks)]`` with MiniWoB seed ``seed + k // len(tasks)`` (so every task
appears, each with new instances). Its gold episode (:func:`core.envs.miniwob.plan_gold`: actions read from the
live DOM) becomes, per step, the same rows as the simulated phone's export: ``high`` (the task's utterance + the
history of gold actions), ``low`` (the step in words, e.g. ``Click the "Ok" button``) and, for clicks, ``grounding``
(the element's description and its DOM box). Coordinates are screen pixels = ORIGINAL pixels of the stored PNG
(160x210). ``extra``: ``episode_id`` (``<task>@<seed>``), ``step_index``, ``task``, ``seed``, ``n_steps``. Only
episodes the gold plan solves by MiniWoB's own reward are written; others are counted as skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from core.envs.miniwob import GoldStep, MiniWoBEnv
from core.schema import HistoryItem, Step
from core.world.export import LEVELS, png_bytes

SOURCE = "miniwob"
MAX_GOLD_STEPS = 20


def episodes(tasks: Sequence[str], n: int | None = None, seed: int = 0) -> list[tuple[str, int]]:
    """(task, MiniWoB seed) of each of the ``n`` episodes (default: each task once)."""
    if not tasks:
        raise ValueError("no MiniWoB++ tasks to export")
    return [(tasks[k % len(tasks)], seed + k // len(tasks)) for k in range(len(tasks) if n is None else n)]


def episode_steps(env: MiniWoBEnv, task: str, seed: int, levels: Sequence[str] = LEVELS) -> list[Step] | str:
    """The unified Steps of ``task``'s gold episode at ``seed``, or why it has none (no gold plan, not solved)."""
    obs, info = env.reset(seed=seed, options={"task": task, "max_steps": MAX_GOLD_STEPS})
    states: list[tuple[bytes, GoldStep]] = []
    done = False
    while not done and len(states) < MAX_GOLD_STEPS:
        gold: GoldStep | None = env.gold
        if gold is None:
            return f"{task}: no gold plan in this state"
        states.append((png_bytes(obs), gold))
        obs, _, done, _, info = env.step(gold.action)
    if not info["success"]:
        return f"{task}: the gold plan did not solve it ({info['reason']})"
    w, h = info["screen_size"]
    episode_id = f"{task}@{seed}"
    extra = {"episode_id": episode_id, "task": task, "seed": seed, "n_steps": len(states)}
    out: list[Step] = []
    history: list[HistoryItem] = []
    for k, (png, gold) in enumerate(states):
        common = dict(image=png, image_size=(w, h), action=gold.action, source=SOURCE, group="web",
                      extra={**extra, "step_index": k}, bbox=gold.box)
        for level in levels:
            if level == "grounding" and gold.action.type != "click":
                continue
            instruction = {"high": info["instruction"], "low": gold.instruction,
                           "grounding": gold.instruction.removeprefix("Click ")}[level]
            out.append(Step.build(f"{episode_id}/{k}/{level}", id=f"{SOURCE}/{episode_id}/{k}/{level}",
                                  instruction=instruction, task_type=level,
                                  history=() if level == "grounding" else tuple(history), **common))
        history.append(HistoryItem(action=gold.action, description=gold.instruction))
    return out


def iter_export(pairs: Sequence[tuple[str, int]], levels: Sequence[str] = LEVELS) -> Iterator[list[Step] | str]:
    """The Steps (or the skip reason) of each (task, seed) episode in turn, in one browser."""
    env = MiniWoBEnv()
    try:
        for task, seed in pairs:
            yield episode_steps(env, task, seed, levels)
    finally:
        env.close()


def export(pairs: Sequence[tuple[str, int]], output: str | Path, levels: Sequence[str] = LEVELS,
           progress: bool = True) -> tuple[int, dict[str, int], list[str]]:
    """Write the gold episodes of ``pairs`` to the unified parquet ``output`` (atomically): (rows, rows per level,
    skip reasons)."""
    from core.console import progress_bar

    from core.data.unified import UnifiedWriter

    counts, skipped = dict.fromkeys(levels, 0), []
    with UnifiedWriter(output) as writer:
        for steps in progress_bar(iter_export(pairs, levels), total=len(pairs), desc="miniwob export", unit=" episode",
                          enabled=progress, mininterval=1.0):
            if isinstance(steps, str):
                skipped.append(steps)
                continue
            for s in steps:
                writer.write(s)
                counts[s.task_type] += 1
    return sum(counts.values()), counts, skipped


__all__ = ["SOURCE", "episode_steps", "episodes", "export", "iter_export"]
