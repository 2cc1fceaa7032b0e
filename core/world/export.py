"""Export simulated-phone tasks to the unified parquet (``core.data.unified``), so every converter, recipe and
benchmark path runs on them.

Each task's gold episode becomes, per step: a ``high`` row (the task goal + the history of previous gold actions
with their low-level instructions), a ``low`` row (the step's own instruction, same history) and, for taps, a
``grounding`` row (the target widget's description, its box), plus optional grounding rows for other tappable
widgets of the same screen. With ``instructions_per_screen`` K > 1, a task whose family lists variants (the
curriculum's: ``Family.variants``) adds ``low`` / ``high`` rows for K - 1 other goals on its start screen (same
screenshot, another direction / phrase / tile; ids ``.../0/<level>/alt<j>``; a row whose instruction the screen
already has is left out), so the screenshot alone no longer tells the answer. Coordinates are screen pixels =
ORIGINAL pixels of the stored PNG. ``extra`` carries ``episode_id`` (the task id), ``step_index``, ``family``,
``app``, ``screen``, ``theme``, ``font_scale``, ``seed`` and ``n_steps`` (gold episode length).
"""

from __future__ import annotations

import io
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from PIL import Image

from core.actions import Action
from core.schema import HistoryItem, Step
from core.world.env import SimPhoneEnv
from core.world.plans import GoldStep
from core.world.tasks import TaskSpec, task_variants
from core.world.widgets import Widget

LEVELS: tuple[str, ...] = ("low", "high", "grounding")
SOURCE = "sim_phone"
MAX_GOLD_STEPS = 40


def png_bytes(obs) -> bytes:
    """The screenshot as PNG (lossless; fast compression: flat UI colours compress well anyway)."""
    buf = io.BytesIO()
    Image.fromarray(obs).save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def grounding_targets(widgets: Sequence[Widget], exclude: Widget | None, k: int, seed: str) -> list[Widget]:
    """Up to ``k`` other tappable widgets of a screen for extra grounding rows: enabled, fully visible, with a
    description no other widget on the screen shares (so the query names one widget), chosen by ``seed``."""
    names = Counter(w.description for w in widgets)
    pool = [w for w in widgets if w.on_tap and w.enabled and w.clip is None and w is not exclude
            and names[w.description] == 1 and (exclude is None or w.description != exclude.description)]
    return random.Random(seed).sample(pool, min(k, len(pool)))


def instruction_variants(env: SimPhoneEnv, task: TaskSpec, k: int, start_png: bytes) -> list[tuple[int, str, GoldStep]]:
    """Up to ``k`` other goals on ``task``'s start screen (:func:`core.world.tasks.task_variants`):
    ``(variant index, instruction, first gold step)``. RuntimeError when a variant's start screen is not the task's
    (``start_png``): the family's variants must keep the screen."""
    out = []
    for j, variant in task_variants(task, k):
        obs, _ = env.reset(options={"task": variant, "max_steps": MAX_GOLD_STEPS})
        gold = env.gold()
        if gold is None or png_bytes(obs) != start_png:
            raise RuntimeError(f"{task.id}: variant {j} ({variant.instruction!r}) "
                               + ("has no gold step" if gold is None else "starts on another screen"))
        out.append((j, variant.instruction, gold))
    return out


def task_steps(env: SimPhoneEnv, task: TaskSpec, levels: Sequence[str] = LEVELS, extra_grounding: int = 0,
               instructions_per_screen: int = 1) -> list[Step]:
    """The unified Steps of ``task``'s gold episode (see the module docstring for the rows per step);
    ``extra_grounding`` adds that many grounding rows per screen for other tappable widgets;
    ``instructions_per_screen`` shows the start screen with up to that many goals (the task's own first)."""
    unknown = set(levels) - set(LEVELS)
    if unknown:
        raise ValueError(f"unknown level(s) {sorted(unknown)}; known: {LEVELS}")
    obs, info = env.reset(options={"task": task, "max_steps": MAX_GOLD_STEPS})
    states = []  # (png, widgets, gold step) before each gold action
    while (gold := env.gold()) is not None:
        if len(states) >= MAX_GOLD_STEPS:
            raise RuntimeError(f"{task.id}: gold plan longer than {MAX_GOLD_STEPS} steps")
        states.append((png_bytes(obs), env.phone.widgets(), gold))
        obs, _, _, _, info = env.step(gold.action)
        if info["ignored"]:
            raise RuntimeError(f"{task.id}: gold action {gold.action} ignored: {info['ignored']}")
    width, height = info["screen_size"]
    extra = {"episode_id": task.id, "family": task.family, "app": task.app, "screen": task.screen,
             "theme": task.theme, "font_scale": task.font_scale, "seed": task.seed, "n_steps": len(states)}

    def common(k: int, gold: GoldStep) -> dict:
        """The keywords every row of step ``k`` shares: its screenshot, gold action and target box."""
        target = gold.target
        return dict(image=states[k][0], image_size=(width, height), action=gold.action, source=SOURCE,
                    group="mobile", split=task.split, extra={**extra, "step_index": k},
                    bbox=tuple(float(v) for v in target.visible_box) if target else None,
                    ui_type=target.ui_type if target else None)

    out: list[Step] = []
    history: list[HistoryItem] = []
    for k, (_, widgets, gold) in enumerate(states):
        target = gold.target
        for level in levels:
            if level == "grounding":
                if target is not None and gold.action.type == "click":
                    out.append(Step.build(f"{task.id}/{k}/grounding", id=f"{SOURCE}/{task.id}/{k}/grounding",
                                          instruction=target.description, task_type="grounding",
                                          **common(k, gold)))
                for other in grounding_targets(widgets, target, extra_grounding, f"{task.id}/{k}"):
                    row_id = f"{task.id}/{k}/grounding/{other.id}"
                    out.append(Step.build(row_id, id=f"{SOURCE}/{row_id}", instruction=other.description,
                                          task_type="grounding",
                                          **{**common(k, gold), "action": Action(type="click", point=other.center),
                                             "bbox": tuple(map(float, other.box)), "ui_type": other.ui_type}))
            else:
                out.append(Step.build(f"{task.id}/{k}/{level}", id=f"{SOURCE}/{task.id}/{k}/{level}",
                                      instruction=task.instruction if level == "high" else gold.instruction,
                                      history=tuple(history), task_type=level, **common(k, gold)))
        history.append(HistoryItem(action=gold.action, description=gold.instruction))
    shown = {(s.task_type, s.instruction) for s in out if s.extra["step_index"] == 0}
    for j, instruction, gold in instruction_variants(env, task, instructions_per_screen - 1, states[0][0]):
        for level in (v for v in levels if v != "grounding"):
            text = instruction if level == "high" else gold.instruction
            if (level, text) in shown:  # e.g. the low row "Tap the red tile" of two orders starting on red
                continue
            shown.add((level, text))
            row_id = f"{task.id}/0/{level}/alt{j}"
            out.append(Step.build(row_id, id=f"{SOURCE}/{row_id}", instruction=text, task_type=level,
                                  **common(0, gold)))
    return out


def iter_export(tasks: Sequence[TaskSpec], levels: Sequence[str] = LEVELS, extra_grounding: int = 0,
                instructions_per_screen: int = 1) -> Iterator[list[Step]]:
    """The Steps of each task in turn (one list per task)."""
    env = SimPhoneEnv()
    for task in tasks:
        yield task_steps(env, task, levels, extra_grounding, instructions_per_screen)


def export(tasks: Sequence[TaskSpec], output: str | Path, levels: Sequence[str] = LEVELS,
           progress: bool = True, extra_grounding: int = 0, instructions_per_screen: int = 1
           ) -> tuple[int, dict[str, int]]:
    """Write ``tasks``' gold episodes to the unified parquet ``output`` (atomically); (rows, rows per level)."""
    from core.console import progress_bar

    from core.data.unified import UnifiedWriter

    counts = dict.fromkeys(levels, 0)
    with UnifiedWriter(output) as writer:
        for steps in progress_bar(iter_export(tasks, levels, extra_grounding, instructions_per_screen),
                                  total=len(tasks), desc="sim phone export", unit=" task", enabled=progress,
                                  mininterval=1.0):
            for s in steps:
                writer.write(s)
                counts[s.task_type] += 1
    return sum(counts.values()), counts


__all__ = ["LEVELS", "SOURCE", "export", "grounding_targets", "instruction_variants", "iter_export", "png_bytes",
           "task_steps"]
