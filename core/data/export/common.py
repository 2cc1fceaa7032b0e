"""What every exporter shares: :class:`ExportOptions` (defined in :mod:`.options`), and one Step -> :class:`Sample`
(or :class:`Skip`).

:func:`prepare` resolves the prompt template, the model geometry, the rendered prompt and the gold answer in the
template's coordinate frame. Images live in :mod:`core.data.export.images`, output sinks in
:mod:`core.data.export.sinks`, the streaming driver in :mod:`core.data.export.driver`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.data.export.driver import Skip, guarded, run_export
from core.data.export.images import ImageStore, resize_image
from core.data.export.options import ExportOptions
from core.data.export.sinks import JsonlSink
from core.data.summary import ConversionSummary
from core.geometry import Frame, ImageGeometry
from core.prompts import IMAGE_PLACEHOLDER, PromptTemplate, TemplateError, default_template_for, get_template
from core.records import GoldRecord, from_step
from core.schema import Step, StepValidationError

# --------------------------------------------------------------------------------------------- templates


@lru_cache(maxsize=64)
def _template_by_name(name: str) -> PromptTemplate:
    return get_template(name)


def resolve_template(step: Step, options: ExportOptions, default: str | None = None) -> PromptTemplate:
    """The prompt template for ``step``: ``options.template``, else ``default``, else the task type's default."""
    return _template_by_name(options.template or default or default_template_for(step))


# --------------------------------------------------------------------------------------------- samples


@dataclass
class Sample:
    """One step ready to export: template, geometry of the image the model sees, prompt and gold answer.

    ``messages``: the rendered prompt (system/user, one ``<image>``), no assistant turn. ``answer``: the gold
    assistant text with coordinates in ``frame`` (the template's). ``image``: the encoded ORIGINAL bytes.
    """

    step: Step
    template: PromptTemplate
    geometry: ImageGeometry
    image: bytes
    messages: list[dict[str, str]]
    answer: str

    @property
    def frame(self) -> Frame:
        return self.template.frame

    @property
    def gold(self) -> GoldRecord:
        """The step's gold record in the template's frame on the model geometry (:mod:`core.records`)."""
        return from_step(self.step, self.geometry, self.frame)

    def stored_image(self, *, resize: bool) -> bytes:
        """The bytes to store inline: original (pass-through) or resized to the model size."""
        return resize_image(self.image, self.geometry) if resize else self.image

    def info(self, *, index: int) -> dict[str, Any]:
        """verl's ``extra_info``: the gold record's frame, sizes and target (model frame and ORIGINAL px), ids."""
        s = self.step
        extra = s.extra or {}
        gold = self.gold.to_extra_info()
        return {
            "index": index,
            "id": s.id,
            "split": s.split,
            "source": s.source,
            "task_type": s.task_type,
            "template": self.template.name,
            "frame": gold["frame"],
            "instruction": s.instruction,
            "answer": self.answer,
            "action": s.action.model_dump_json(exclude_none=True),
            "image_size": gold["image_size"],
            "resized_size": gold["resized_size"],
            "bbox": gold["bbox"],
            "bbox_original": list(s.bbox) if s.bbox is not None else None,
            "point": gold["point"],
            "point_original": list(s.action.point) if s.action.point is not None else None,
            "group": s.group,
            "ui_type": s.ui_type,
            "episode_id": None if extra.get("episode_id") is None else str(extra["episode_id"]),
            "step_index": step_index(s),
        }


def step_index(step: Step) -> int | None:
    """Position of the step in its episode: ``extra['step_index']``, else an integer ``extra['step_id']``."""
    extra = step.extra or {}
    for key in ("step_index", "step_id"):
        try:
            if extra.get(key) is not None:
                return int(extra[key])
        except (TypeError, ValueError):
            continue
    return None


def count_placeholders(messages: list[dict[str, str]]) -> int:
    return sum(str(m.get("content", "")).count(IMAGE_PLACEHOLDER) for m in messages)


def prepare(step: Step, options: ExportOptions, *, default_template: str | None = None) -> Sample | Skip:
    """Template, model geometry, prompt and gold answer of ``step``; a :class:`Skip` when it cannot be exported."""
    template = resolve_template(step, options, default_template)
    w, h = step.image_size
    try:
        geometry = ImageGeometry.for_model(w, h, factor=template.factor,
                                           min_pixels=options.min_pixels or template.min_pixels,
                                           max_pixels=options.max_pixels or template.max_pixels)
    except ValueError as e:
        return Skip(f"image size not resizable: {e}", (step.id,))
    try:
        image = step.image_bytes()
    except (OSError, StepValidationError) as e:
        return Skip("image missing or unreadable", (f"{step.id}: {e}",))
    try:
        messages = template.render(step, geometry)
        answer = template.gold_answer(step, geometry)
    except TemplateError as e:
        return Skip(f"template {template.name!r} cannot express action {step.action.type!r}",
                    (f"{step.id}: {e}",))
    if count_placeholders(messages) != 1:
        raise ValueError(f"template {template.name!r} rendered {count_placeholders(messages)} "
                         f"'{IMAGE_PLACEHOLDER}' placeholders for record {step.id}; exporters need exactly one")
    return Sample(step=step, template=template, geometry=geometry, image=image,
                  messages=[{"role": m["role"], "content": m["content"]} for m in messages], answer=answer)



def export_jsonl_with_images(steps: Iterable[Step], output_dir: Path, *, options: ExportOptions,
                             summary: ConversionSummary, kind: str, row: Callable[[Sample, Path], dict]) -> Path:
    """Stream ``steps`` into ``<output_dir>/<name>.jsonl`` with every screenshot stored under
    ``<output_dir>/images/`` (resized when ``options`` ask); ``row(sample, image_path)`` makes each line."""
    store = ImageStore(Path(output_dir) / "images")

    def build(item: tuple[int, Step]) -> dict | Skip:
        sample = prepare(item[1], options)
        if isinstance(sample, Skip):
            return sample
        return row(sample, store.put(sample.image, sample.geometry, resize=options.resizes))

    return run_export(steps, guarded(build), JsonlSink(Path(output_dir) / f"{options.name}.jsonl"), options=options,
                      summary=summary, desc=f"{kind} {options.name}")

def relative_or_absolute(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` when it lies under it, else absolute (POSIX separators)."""
    path, base = Path(path).resolve(), Path(base).resolve()
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


__all__ = [
    "ExportOptions",
    "Sample",
    "Skip",
    "count_placeholders",
    "prepare",
    "export_jsonl_with_images",
    "relative_or_absolute",
    "resolve_template",
    "step_index",
]
