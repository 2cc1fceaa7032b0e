"""verl RL parquet (one row per step), loadable by ``verl.utils.dataset.rl_dataset.RLHFDataset``.

Columns: ``data_source`` (the step's source), ``prompt`` (chat messages with one ``<image>``), ``images``
(``[{bytes}]``: original bytes, or pre-resized to the model size with ``max_pixels``), ``ability``
(``gui_<task_type>``), ``reward_model {style: "rule", ground_truth}`` where ground_truth is the JSON string
``{"action", "gt_bbox", "input_text"}`` GUI-R1's r1gui reward reads, ``gt_bbox`` in the template's frame
(resized pixels for Qwen2.5-VL), and ``extra_info`` (see :data:`EXTRA_INFO_TYPE`: sizes original and resized,
box in the model frame and original pixels, frame, template, task type, index, split, ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from core.data.export.common import ExportOptions, Sample, prepare
from core.data.export.driver import Skip, guarded, run_export
from core.data.export.sinks import ParquetSink
from core.data.summary import ConversionSummary
from core.schema import Step


def _types():
    import pyarrow as pa

    floats = pa.list_(pa.float64())
    ints = pa.list_(pa.int32())
    extra_info = pa.struct([
        ("index", pa.int64()), ("id", pa.string()), ("split", pa.string()), ("source", pa.string()),
        ("task_type", pa.string()), ("template", pa.string()), ("frame", pa.string()),
        ("instruction", pa.string()), ("answer", pa.string()), ("action", pa.string()),
        ("image_size", ints), ("resized_size", ints), ("bbox", floats), ("bbox_original", floats),
        ("point", floats), ("point_original", floats), ("group", pa.string()), ("ui_type", pa.string()),
        ("episode_id", pa.string()), ("step_index", pa.int64()),
    ])
    messages = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    images = pa.list_(pa.struct([("bytes", pa.binary())]))
    reward_model = pa.struct([("style", pa.string()), ("ground_truth", pa.string())])
    return extra_info, messages, images, reward_model


def verl_schema():
    """Arrow schema of the verl parquet (explicit, so batches with all-null boxes keep their types)."""
    import pyarrow as pa

    extra_info, messages, images, reward_model = _types()
    return pa.schema([("data_source", pa.string()), ("prompt", messages), ("images", images),
                      ("ability", pa.string()), ("reward_model", reward_model), ("extra_info", extra_info)])


def verl_row(sample: Sample, *, index: int, resize: bool) -> tuple[dict, int]:
    """One verl row (and its image byte count) from a prepared sample."""
    image = sample.stored_image(resize=resize)
    return {
        "data_source": sample.step.source,
        "prompt": sample.messages,
        "images": [{"bytes": image}],
        "ability": f"gui_{sample.step.task_type}",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(sample.gold.to_guir1(), ensure_ascii=False)},
        "extra_info": sample.info(index=index),
    }, len(image)


def export_verl(steps: Iterable[Step], output_dir: Path, *, options: ExportOptions,
                summary: ConversionSummary) -> Path:
    """Write ``<output_dir>/<name>.parquet`` for verl; returns its path."""
    out = Path(output_dir) / f"{options.name}.parquet"

    def build(item: tuple[int, Step]) -> tuple[dict, int] | Skip:
        pos, step = item
        sample = prepare(step, options)
        if isinstance(sample, Skip):
            return sample
        return verl_row(sample, index=pos, resize=options.resizes)

    return run_export(steps, guarded(build), ParquetSink(out, verl_schema()), options=options, summary=summary,
                      desc=f"verl {options.name}")
