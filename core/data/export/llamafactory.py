"""LLaMA-Factory sharegpt dataset: ``<output_dir>/<name>.jsonl`` + image files + a ``dataset_info.json`` entry.

Row: ``{"messages": [system?, user (one "<image>"), assistant (gold answer)], "images": [path]}``. Image paths
(and the entry's ``file_name``) are relative to the ``dataset_info.json`` folder when the output lies under it
(LLaMA-Factory joins them with ``dataset_dir``/``media_dir``), absolute otherwise. The entry is merged into an
existing ``dataset_info.json`` under a file lock and written atomically; a name it already gives to another
file is refused before the export starts (dataset names are unique), never replaced.
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


def _read_dataset_info(info_path: Path) -> dict[str, Any]:
    if not info_path.exists():
        return {}
    try:
        info = json.loads(info_path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as e:
        raise ValueError(f"{info_path} is not valid JSON ({e}); fix or remove it") from None
    if not isinstance(info, dict):
        raise ValueError(f"{info_path} must hold a JSON object of dataset entries")
    return info


def _refuse_name_clash(info: dict[str, Any], info_path: Path, name: str, entry: dict[str, Any]) -> None:
    """A dataset name is unique in its ``dataset_info.json``: an entry of ``name`` for another file (another
    export, e.g. of ``ss.web`` after ``ss.mobile``: both stems are ``ss``) is never replaced."""
    old = info.get(name)
    old_file = old.get("file_name") if isinstance(old, dict) else old
    if name in info and old_file != entry.get("file_name"):
        raise ValueError(f"{info_path} already has a dataset {name!r} (file_name {old_file!r}); this export "
                         f"({entry.get('file_name')!r}) would replace it: choose another --name")


def check_dataset_name(info_path: Path, name: str, entry: dict[str, Any]) -> None:
    """Before an export starts: refuse a ``name`` that ``info_path`` already gives to another file."""
    _refuse_name_clash(_read_dataset_info(Path(info_path)), Path(info_path), name, entry)


def update_dataset_info(info_path: Path, name: str, entry: dict[str, Any]) -> None:
    """Set ``name`` in ``info_path`` (created if missing), keeping every other entry; atomic and locked. An
    entry of ``name`` for another file is refused (:func:`check_dataset_name`), never replaced."""
    info_path = Path(info_path)
    with output_lock(info_path, wait=True):
        info = _read_dataset_info(info_path)
        _refuse_name_clash(info, info_path, name, entry)
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

    entry = dataset_info_entry(relative_or_absolute(output_dir / f"{options.name}.jsonl", base))
    check_dataset_name(info_path, options.name, entry)  # before any row is read
    path = export_jsonl_with_images(steps, output_dir, options=options, summary=summary, kind="llamafactory",
                                    row=row)
    update_dataset_info(info_path, options.name, dataset_info_entry(relative_or_absolute(path, base)))
    return path
