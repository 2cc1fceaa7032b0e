"""Qwen3-VL ``mobile_use`` multi-turn records for verl's GUI-agent (mobile agent) recipe.

Steps are grouped into episodes by ``extra['episode_id']`` (consecutive steps with the same id; ordered by
``extra['step_index']`` when present); a step without an episode id is an episode of its own. One row per
episode:

- ``prompt``: the first step rendered by a Qwen3-VL template (one ``<image>``), the layout RLHFDataset reads;
  ``raw_prompt``: the same with structured content (``{"type": "image"}`` / ``{"type": "text"}`` blocks).
- ``images``: ``[{bytes}]`` of the first screenshot; ``extra_info.screenshots``: every step's screenshot.
- ``extra_info.expected_actions``: each step's gold action as ``mobile_use`` arguments, coordinates on the
  0-1000 grid of its own screenshot (ints); ``screen_width``/``screen_height``: ORIGINAL pixels of the first
  screenshot; ``image_sizes``, ``bboxes`` (0-1000) and ``bboxes_original`` per step.
- ``ground_truth`` and ``reward_model.ground_truth``: JSON of the first expected action.

An episode with an action that has no mobile equivalent (desktop/web-only) is skipped as a whole.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from core.data.export.common import IMAGE_PLACEHOLDER, ExportOptions, prepare, step_index
from core.data.export.driver import Skip, guarded, run_export
from core.data.export.sinks import ParquetSink
from core.data.summary import ConversionSummary
from core.geometry import Frame
from core.schema import Step

#: Template used when ``--template`` is not given (must answer on the 0-1000 grid).
DEFAULT_TEMPLATE = "qwen3vl-mobile-use"


def mobile_use_schema():
    import pyarrow as pa

    floats, ints = pa.list_(pa.float64()), pa.list_(pa.int32())
    action = pa.struct([("action", pa.string()), ("coordinate", ints), ("coordinate2", ints),
                        ("text", pa.string()), ("button", pa.string()), ("status", pa.string()),
                        ("time", pa.float64())])
    image = pa.struct([("bytes", pa.binary())])
    extra_info = pa.struct([
        ("index", pa.int64()), ("episode_id", pa.string()), ("step_ids", pa.list_(pa.string())),
        ("split", pa.string()), ("source", pa.string()), ("instruction", pa.string()),
        ("template", pa.string()), ("frame", pa.string()), ("answer", pa.string()),
        ("expected_actions", pa.list_(action)), ("screen_width", pa.int32()), ("screen_height", pa.int32()),
        ("image_sizes", pa.list_(ints)), ("bboxes", pa.list_(floats)), ("bboxes_original", pa.list_(floats)),
        ("screenshots", pa.list_(image)),
    ])
    block = pa.struct([("type", pa.string()), ("text", pa.string())])
    return pa.schema([
        ("data_source", pa.string()),
        ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("raw_prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.list_(block))]))),
        ("images", pa.list_(image)), ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        ("ground_truth", pa.string()), ("extra_info", extra_info),
    ])


def structured(messages: list[dict[str, str]]) -> list[dict[str, Any]]:
    """String contents -> content blocks, ``<image>`` becoming ``{"type": "image"}``."""
    out = []
    for m in messages:
        blocks = []
        for i, part in enumerate(m["content"].split(IMAGE_PLACEHOLDER)):
            if i:
                blocks.append({"type": "image", "text": None})
            if part:
                blocks.append({"type": "text", "text": part})
        out.append({"role": m["role"], "content": blocks})
    return out


def episodes(steps: Iterable[Step]) -> Iterator[list[Step]]:
    """Consecutive steps sharing ``extra['episode_id']`` (sorted by :func:`step_index`); others one by one."""
    def key(s: Step) -> Any:
        eid = (s.extra or {}).get("episode_id")
        return ("episode", str(eid)) if eid is not None else ("step", s.id)

    for _, group in itertools.groupby(steps, key=key):
        eps = list(group)
        if all(step_index(s) is not None for s in eps):
            eps.sort(key=step_index)
        yield eps


def export_mobile_use(steps: Iterable[Step], output_dir: Path, *, options: ExportOptions,
                      summary: ConversionSummary) -> Path:
    """Write ``<output_dir>/<name>.parquet`` of mobile_use episodes; returns its path."""
    out = Path(output_dir) / f"{options.name}.parquet"

    def build(item: tuple[int, list[Step]]) -> tuple[dict, int] | Skip:
        pos, eps = item
        samples = []
        for step in eps:
            s = prepare(step, options, default_template=DEFAULT_TEMPLATE)
            if isinstance(s, Skip):
                return Skip(s.reason, tuple(x.id for x in eps))
            if s.frame is not Frame.GRID1000:
                raise ValueError(f"mobile_use export needs a 0-1000 grid template (Qwen3-VL); "
                                 f"{options.template or DEFAULT_TEMPLATE!r} answers in {s.frame.value}")
            samples.append(s)
        actions = [s.gold.to_mobile_use() for s in samples]
        if any(a is None for a in actions):
            bad = next(s for s, a in zip(samples, actions, strict=False) if a is None)
            return Skip(f"action {bad.step.action.type!r} has no mobile_use equivalent",
                        tuple(x.id for x in eps))
        shots = [s.stored_image(resize=options.resizes) for s in samples]
        first = samples[0]
        gt = json.dumps(actions[0], ensure_ascii=False)
        row = {
            "data_source": first.step.source,
            "prompt": first.messages,
            "raw_prompt": structured(first.messages),
            "images": [{"bytes": shots[0]}],
            "ability": "gui_mobile_use",
            "reward_model": {"style": "rule", "ground_truth": gt},
            "ground_truth": gt,
            "extra_info": {
                "index": pos,
                "episode_id": None if (eid := (first.step.extra or {}).get("episode_id")) is None else str(eid),
                "step_ids": [s.step.id for s in samples],
                "split": first.step.split,
                "source": first.step.source,
                "instruction": first.step.instruction,
                "template": first.template.name,
                "frame": Frame.GRID1000.value,
                "answer": first.answer,
                "expected_actions": actions,
                "screen_width": first.geometry.width,
                "screen_height": first.geometry.height,
                "image_sizes": [list(s.step.image_size) for s in samples],
                "bboxes": [s.gold.to_extra_info()["bbox"] for s in samples],
                "bboxes_original": [list(s.step.bbox) if s.step.bbox else None for s in samples],
                "screenshots": [{"bytes": b} for b in shots],
            },
        }
        return row, sum(len(b) for b in shots) + len(shots[0])

    return run_export(episodes(steps), guarded(build), ParquetSink(out, mobile_use_schema()), options=options,
                      summary=summary, desc=f"mobile_use {options.name}")
