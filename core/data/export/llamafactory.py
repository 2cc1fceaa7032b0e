"""LLaMA-Factory sharegpt dataset: ``<output_dir>/<name>.jsonl`` + image files + a ``dataset_info.json`` entry.

Row: ``{"messages": [system?, user (one "<image>"), assistant (gold answer)], "images": [path]}``. Image paths
(and the entry's ``file_name``) are relative to the ``dataset_info.json`` folder when the output lies under it
(LLaMA-Factory joins them with ``dataset_dir``/``media_dir``), absolute otherwise. The entry is merged into an
existing ``dataset_info.json`` under a file lock and written atomically.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.data.export.common import ExportOptions, Sample, export_jsonl_with_images, relative_or_absolute
from core.data.summary import ConversionSummary
from core.io import atomic_write_json, output_lock
from core.schema import Step


def dataset_info_path(output_dir: Path, options: ExportOptions) -> Path:
    """The ``dataset_info.json`` to update: the option, else the one beside the output folder."""
    return Path(options.llamafactory_dataset_info or Path(output_dir).resolve().parent / "dataset_info.json")


def dataset_info_entry(file_name: str) -> dict[str, Any]:
    """The sharegpt entry LLaMA-Factory's parser reads (``messages`` + ``images`` columns, OpenAI role tags)."""
    return {
        "file_name": file_name,
        "formatting": "sharegpt",
        "columns": {"messages": "messages", "images": "images"},
        "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user",
                 "assistant_tag": "assistant", "system_tag": "system"},
    }


def update_dataset_info(info_path: Path, name: str, entry: dict[str, Any]) -> None:
    """Set ``name`` in ``info_path`` (created if missing), keeping every other entry; atomic and locked."""
    info_path = Path(info_path)
    with output_lock(info_path, wait=True):
        info: dict[str, Any] = {}
        if info_path.exists():
            try:
                info = json.loads(info_path.read_text(encoding="utf-8") or "{}")
            except json.JSONDecodeError as e:
                raise ValueError(f"{info_path} is not valid JSON ({e}); fix or remove it") from None
            if not isinstance(info, dict):
                raise ValueError(f"{info_path} must hold a JSON object of dataset entries")
        info[name] = entry
        atomic_write_json(info_path, info)


def export_llamafactory(steps: Iterable[Step], output_dir: Path, *, options: ExportOptions,
                        summary: ConversionSummary) -> Path:
    """Write ``<output_dir>/<name>.jsonl`` + ``<output_dir>/images/`` and register ``name`` in dataset_info.json."""
    output_dir = Path(output_dir)
    info_path = dataset_info_path(output_dir, options)
    base = info_path.parent

    def row(sample: Sample, image: Path) -> dict:
        return {"messages": [*sample.messages, {"role": "assistant", "content": sample.answer}],
                "images": [relative_or_absolute(image, base)]}

    path = export_jsonl_with_images(steps, output_dir, options=options, summary=summary, kind="llamafactory",
                                    row=row)
    update_dataset_info(info_path, options.name, dataset_info_entry(relative_or_absolute(path, base)))
    return path
