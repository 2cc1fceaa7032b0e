"""ms-swift JSONL for SFT and GRPO: ``<output_dir>/<name>.jsonl`` + image files.

Row: ``messages`` (system?, user with one ``<image>``, assistant gold answer; swift's GRPO drops the final
assistant turn and generates it), ``images`` (absolute paths), ``solution`` (the gold answer text) and the
columns the GRPO reward plugins receive as keyword arguments: ``ground_truth`` (GUI-R1's r1gui JSON, model
frame, as in the verl export) and ``extra_info`` (``frame``, ``image_size``, ``resized_size``) that
:mod:`core.rewards` reads, and for people and other rewards ``gt_action``, ``gt_bbox`` (model frame; GUI-R1
layout: box, else point, else [-100, -100]), ``gt_input_text``, ``image_size`` / ``resized_size`` ([W, H]),
``bbox_original`` (ORIGINAL px), ``frame``, ``task_type``, ``id``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from core.data.export.common import ExportOptions, Sample, export_jsonl_with_images
from core.data.summary import ConversionSummary
from core.schema import Step


def reward_columns(sample: Sample) -> dict:
    """The gold fields a GRPO reward needs beside the completion (shared by ms-swift and VLM-R1 rows)."""
    return {"solution": sample.answer, **sample.gold.to_reward_columns(), "task_type": sample.step.task_type,
            "id": sample.step.id}


def export_swift(steps: Iterable[Step], output_dir: Path, *, options: ExportOptions,
                 summary: ConversionSummary) -> Path:
    """Write ``<output_dir>/<name>.jsonl`` for ms-swift (``--dataset <that file>``); returns its path."""
    def row(sample: Sample, image: Path) -> dict:
        return {"messages": [*sample.messages, {"role": "assistant", "content": sample.answer}],
                "images": [str(image.resolve())], **reward_columns(sample)}

    return export_jsonl_with_images(steps, output_dir, options=options, summary=summary, kind="swift", row=row)
