"""VLM-R1 / trl GRPO data: a VLM-R1 JSONL with image files, and a Hugging Face ``datasets`` copy for trl.

- ``<output_dir>/<name>.jsonl``: ``{"id", "image": "images/..." (relative to ``output_dir``, VLM-R1's
  ``--image_folders``), "conversations": [{"from": "human", "value": "<image>..."}, {"from": "gpt", "value":
  gold}], "solution": gold, ...reward columns}``. VLM-R1 reads only the first human turn, so a system message
  of the template is prepended to it.
- ``<output_dir>/<name>.hf/`` (``save_to_disk``): columns ``prompt`` (conversational, ``<image>`` removed: trl
  inserts the image block itself), ``image`` (``datasets.Image``, bytes passed through), ``solution`` and the
  reward columns, which trl hands to reward functions as keyword arguments.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from core.data.export.common import (
    IMAGE_PLACEHOLDER,
    ExportOptions,
    Sample,
    export_jsonl_with_images,
    relative_or_absolute,
)
from core.data.export.swift import reward_columns
from core.data.summary import ConversionSummary
from core.io import atomic_path
from core.schema import Step


def _human_turn(messages: list[dict[str, str]]) -> str:
    """System text (if any) + the user turn, as the single human value VLM-R1 reads."""
    system = [m["content"] for m in messages if m["role"] == "system"]
    user = [m["content"] for m in messages if m["role"] == "user"]
    if len(user) != 1:
        raise ValueError(f"VLM-R1 rows need exactly one user turn, the template rendered {len(user)}")
    return "\n".join([*system, user[0]])


def _hf_rows(jsonl: Path, root: Path) -> Iterator[dict]:
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            human = row.pop("conversations")[0]["value"]
            text = human.replace(IMAGE_PLACEHOLDER, "").strip()
            with open(root / row.pop("image"), "rb") as img:
                data = img.read()
            yield {"prompt": [{"role": "user", "content": text}], "image": {"bytes": data, "path": None}, **row}


def write_hf_dataset(jsonl: Path, root: Path, out: Path) -> Path:
    """Stream the VLM-R1 JSONL (+ images under ``root``) into a ``save_to_disk`` dataset at ``out`` (atomic)."""
    import datasets

    features = datasets.Features({
        "prompt": [{"role": datasets.Value("string"), "content": datasets.Value("string")}],
        "image": datasets.Image(),
        "solution": datasets.Value("string"),
        "ground_truth": datasets.Value("string"),
        "extra_info": {"frame": datasets.Value("string"), "image_size": datasets.Sequence(datasets.Value("int64")),
                       "resized_size": datasets.Sequence(datasets.Value("int64"))},
        "gt_action": datasets.Value("string"),
        "gt_bbox": datasets.Sequence(datasets.Value("float64")),
        "gt_input_text": datasets.Value("string"),
        "image_size": datasets.Sequence(datasets.Value("int64")),
        "resized_size": datasets.Sequence(datasets.Value("int64")),
        "bbox_original": datasets.Sequence(datasets.Value("float64")),
        "frame": datasets.Value("string"),
        "task_type": datasets.Value("string"),
        "id": datasets.Value("string"),
    })
    cache = out.with_name(out.name + ".cache")
    shutil.rmtree(cache, ignore_errors=True)
    try:
        with atomic_path(out) as tmp:
            if jsonl.stat().st_size == 0:
                ds = datasets.Dataset.from_dict({k: [] for k in features}, features=features)
            else:
                ds = datasets.Dataset.from_generator(_hf_rows, gen_kwargs={"jsonl": jsonl, "root": root},
                                                     features=features, cache_dir=str(cache))
            # one shard for an empty set: datasets' shard-size estimate divides by the row count
            ds.save_to_disk(str(tmp), num_shards=1 if len(ds) == 0 else None)
            del ds
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return out


def export_vlmr1(steps: Iterable[Step], output_dir: Path, *, options: ExportOptions,
                 summary: ConversionSummary) -> Path:
    """Write ``<name>.jsonl`` + ``images/`` (VLM-R1) and ``<name>.hf/`` (trl); returns the JSONL path."""
    if importlib.util.find_spec("datasets") is None:  # checked before anything is written
        raise ValueError("--to vlmr1 also writes a Hugging Face datasets copy and needs the 'datasets' package "
                         "(in the rl environment): run .venvs/rl/bin/gui-agent data convert ...")
    output_dir = Path(output_dir)

    def row(sample: Sample, image: Path) -> dict:
        return {"image": relative_or_absolute(image, output_dir),
                "conversations": [{"from": "human", "value": _human_turn(sample.messages)},
                                  {"from": "gpt", "value": sample.answer}],
                **reward_columns(sample)}

    jsonl = export_jsonl_with_images(steps, output_dir, options=options, summary=summary, kind="vlmr1", row=row)
    write_hf_dataset(jsonl, output_dir, output_dir / f"{options.name}.hf")
    return jsonl
