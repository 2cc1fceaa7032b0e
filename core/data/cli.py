"""``gui-agent data ...``: convert, clean, add-solution, inspect.

The ``run_*`` functions are the implementation (the typer commands call them; ``Data/utils/*.py`` run the
commands); each returns its :class:`ConversionSummary`. Exit codes of the commands: 0 success, 2 anything else,
with one ``error: ...`` line: a record error that was not skipped (it names the record and field), every record
skipped (``--skip-missing`` with nothing left: no output file is written), an unreadable input, an output that
cannot be written (name too long, read-only, a file where a folder must be), bad usage.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from core.console import quoted
from core.data.summary import ConversionSummary, NothingWritten, refuse_nothing_written
from core.io import publish
from core.outputs import refuse_existing, refuse_output_inside_input, user_errors
from core.schema import Step, StepValidationError

log = logging.getLogger("core.data")

#: Default prompt templates of ``add-solution`` (names in ``core.prompts``).
TOOL_CALL_TEMPLATE = "qwen3vl-mobile-use"
PARQUET_SOURCES = ("guir1", "unified")
#: The finished outputs of ``data convert`` are ``<name>`` plus one of these (parquet, JSON Lines, datasets folder).
FINISHED_SUFFIXES = (".parquet", ".jsonl", ".hf")
#: Longest ``--name`` in bytes: NAME_MAX (255) less the longest suffix an exporter adds (``.parquet.tmp``, ...).
NAME_BYTES = 200

class Coords(str, Enum):
    normalized = "normalized"
    pixels = "pixels"


data_app = typer.Typer(help="Convert, clean, annotate and inspect GUI-agent datasets.", no_args_is_help=True)


def _progress(steps: Iterable[Step], desc: str) -> Iterator[Step]:
    from core.console import progress_bar

    yield from progress_bar(steps, desc=desc, unit=" steps", mininterval=1.0)




def _check_source(source: str, allowed: Sequence[str] | None = None) -> None:
    from core.data.ingest import READERS

    allowed = list(allowed or READERS)
    if source not in allowed:
        raise typer.BadParameter(f"unknown source {quoted(source)}; choose one of: {', '.join(allowed)}",
                                 param_hint="'--from'")


def _dataset_name(name: str) -> str:
    """``name`` if it can be a file name in the output folder (no separator, fits NAME_MAX with suffixes)."""
    if not name.strip() or "/" in name or "\0" in name or name in (".", ".."):
        raise ValueError(f"--name {name[:80]!r} is not a file name")
    if len(os.fsencode(name)) > NAME_BYTES:
        raise ValueError(f"--name is {len(os.fsencode(name))} bytes long; at most {NAME_BYTES} leave room for the "
                         "output's suffixes within the filesystem's 255")
    return name


def _resume_state(output: Path, name: str) -> list[Path]:
    """The checkpoints an interrupted conversion to ``output/name`` left (:mod:`core.data.export.sinks`)."""
    return [*output.glob(f"{name}.*.progress.json"), *output.glob(f"{name}.*.parts/progress.json")]


def run_convert(source: str, target: str, input_path: Path, output: Path, *, images_dir: Path | None = None,
                skip_missing: bool = False, max_pixels: int | None = None, min_pixels: int | None = None,
                template: str | None = None, name: str | None = None, workers: int = 1, resume: bool = True,
                coords: str | None = None, max_image_pixels: int | None = None, overwrite: bool = False
                ) -> tuple[Path, ConversionSummary]:
    """Read ``input_path`` as ``source`` and export to ``target`` under ``output``; (written path, summary).
    ``coords`` forces a GUI-R1 file's box frame; ``max_image_pixels`` sets the image pixel limit.

    One run per output at a time (an exclusive lock on ``<output>/<name>``; a second run fails at once). An
    existing finished output is replaced only with ``overwrite``. An interrupted run resumes when rerun with
    the same output-shaping options (source, target, input, --images, resize bounds, template, coords); other
    options are refused, naming them, and ``overwrite`` starts over."""
    from core.data.export import EXPORTERS, ExportOptions
    from core.data.ingest import read
    from core.data.ingest import set_image_pixel_limit
    from core.outputs import resumable_output

    if target not in EXPORTERS:
        raise typer.BadParameter(f"unknown target {quoted(target)}; choose one of: {', '.join(EXPORTERS)}",
                                 param_hint="'--to'")
    if Path(output).exists() and not Path(output).is_dir():
        raise ValueError(f"--output {output} is a file; it must be the output folder")
    refuse_output_inside_input(output, input_path)
    if max_image_pixels is not None:
        set_image_pixel_limit(max_image_pixels)
    output = Path(output)
    name = _dataset_name(name or Path(input_path).stem.replace(" ", "_") or "gui-agent")
    shaping = {"from": source, "to": target, "input": os.path.abspath(input_path),
               "images": None if images_dir is None else os.path.abspath(images_dir), "max_pixels": max_pixels,
               "min_pixels": min_pixels, "template": template, "coords": coords}
    if not overwrite:
        for suffix in FINISHED_SUFFIXES:  # a finished output is replaced only with --overwrite
            refuse_existing(output / f"{name}{suffix}", overwrite=False, option="--output/--name",
                            folder=suffix == ".hf")
    created = not output.exists()
    try:
        with resumable_output(output / name, shaping, overwrite=overwrite or not resume,
                              has_rows=lambda: bool(_resume_state(output, name)), keep_record=False) as resuming:
            options = ExportOptions(name=name, max_pixels=max_pixels, min_pixels=min_pixels, template=template,
                                    workers=workers, resume=resuming, skip_missing=skip_missing)
            summary = ConversionSummary()
            steps = read(source, input_path, images_dir=images_dir, skip_missing=skip_missing, summary=summary,
                         coords=coords)
            written = EXPORTERS[target](steps, output, options=options, summary=summary)  # exporters show progress
    except NothingWritten:
        if created:  # the folder this run made holds nothing: not left behind either
            _remove_empty_folders(output)
        raise
    return Path(written), summary


def _remove_empty_folders(folder: Path) -> None:
    """``folder`` and the folders under it, where they hold no file."""
    for path in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            path.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()


def run_clean(input_path: Path, output: Path, *, source: str = "unified", images_dir: Path | None = None,
              skip_missing: bool = False, tolerance: float | None = None, actions: Iterable[str] | None = None,
              dedupe: bool = True):
    """Clean ``input_path`` into the unified parquet ``output``; returns the :class:`core.data.clean.Cleaner`
    (``.summary`` drops by reason, ``.repaired`` repairs by reason)."""
    from core.actions import canonical_action_name
    from core.data.clean import DEFAULT_TOLERANCE, Cleaner
    from core.data.ingest import read
    from core.data.unified import UnifiedWriter, iter_unified_batches

    cleaner = Cleaner(summary=ConversionSummary(), tolerance=DEFAULT_TOLERANCE if tolerance is None else tolerance,
                      actions=frozenset(canonical_action_name(a) for a in actions) if actions else None,
                      dedupe=dedupe)
    if source == "unified":  # raw rows: bad boxes can still be repaired before validation
        rows = (row for p in _parquet_files(input_path) for b in iter_unified_batches(p) for row in b.to_pylist())
        steps = cleaner.clean_rows(rows)
    else:
        steps = cleaner.clean_steps(read(source, input_path, images_dir=images_dir, skip_missing=skip_missing,
                                         summary=cleaner.summary))
    with UnifiedWriter(output) as writer:
        for step in _progress(steps, "clean"):
            writer.write(step)
            cleaner.summary.written += 1
        refuse_nothing_written(cleaner.summary, skip_missing=skip_missing)  # in the writer: leaves no file
    return cleaner


def _parquet_files(input_path: Path) -> list[Path]:
    from core.data.ingest._common import input_files

    return input_files(Path(input_path), (".parquet",))


def _gold_answer(step: Step, template_name: str, max_pixels: int | None, min_pixels: int | None) -> str:
    """The gold answer of ``step`` in template ``template_name``, in the frame its model sees (the template's
    resize bounds unless ``max_pixels``/``min_pixels`` override them). ``TemplateError`` if it cannot say it."""
    from core.geometry import ImageGeometry
    from core.prompts import get_template

    t = get_template(template_name)
    w, h = step.image_size
    geometry = ImageGeometry.for_model(w, h, factor=t.factor, min_pixels=min_pixels or t.min_pixels,
                                       max_pixels=max_pixels or t.max_pixels)
    return t.gold_answer(step, geometry)


def run_add_solution(input_path: Path, output: Path, *, source: str = "guir1", images_dir: Path | None = None,
                     skip_missing: bool = False, template: str | None = None,
                     tool_template: str = TOOL_CALL_TEMPLATE, max_pixels: int | None = None,
                     min_pixels: int | None = None) -> ConversionSummary:
    """Copy a GUI-R1 or unified parquet to ``output`` adding two string columns: ``solution`` (GUI-R1 answer
    ``<think></think> <answer>[{'action': .., 'point': [x, y], 'input_text': ..}]</answer>`` from ``template``,
    default per row by task type as GUI-R1 does) and ``solution_tool_call`` (tool-call answer from
    ``tool_template``; null for actions that template cannot express, counted in the notes). Coordinates are in
    the frame each template's model sees (``max_pixels``/``min_pixels`` override its resize bounds). Original
    columns are kept unchanged; rows are streamed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.data.ingest import guir1
    from core.data.ingest._common import handle, note
    from core.data.unified import row_to_step
    from core.prompts import TemplateError, default_template_for, get_template

    if source not in PARQUET_SOURCES:
        raise typer.BadParameter(f"add-solution reads parquet sources only: {', '.join(PARQUET_SOURCES)}",
                                 param_hint="'--from'")
    for name in (template, tool_template):
        if name is not None:
            get_template(name)  # unknown names fail before any work
    columns = ("solution", "solution_tool_call")
    no_tool_call: Counter = Counter()
    files = _parquet_files(input_path)
    if len(files) != 1:
        raise typer.BadParameter(f"add-solution takes one parquet file, {input_path} holds {len(files)}")
    path, output = files[0], Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    summary = ConversionSummary()
    pf = pq.ParquetFile(path)
    convention = guir1.file_frame(path) if source == "guir1" else None
    if convention:
        note(summary, f"{path.name}: {convention.describe()}")
    schema = pf.schema_arrow
    for column in columns:
        if column in schema.names:
            schema = schema.remove(schema.get_field_index(column))
        schema = schema.append(pa.field(column, pa.string()))
    writer = pq.ParquetWriter(tmp, schema, compression="zstd")
    try:
        index = 0
        for batch in pf.iter_batches(batch_size=guir1.BATCH_ROWS):
            kept: list[dict[str, Any]] = []
            for row in batch.to_pylist():
                summary.read += 1
                record = guir1.record_name(path, row, index) if source == "guir1" else str(row.get("id"))
                index += 1
                try:
                    step = (guir1.parse_row(row, record=record, path=path, images_dir=images_dir,
                                            convention=convention) if source == "guir1" else row_to_step(row))
                    solution = _gold_answer(step, template or default_template_for(step), max_pixels, min_pixels)
                    try:
                        tool_call = _gold_answer(step, tool_template, max_pixels, min_pixels)
                    except TemplateError:
                        tool_call = None
                        no_tool_call[step.action.type] += 1
                    kept.append({**row, "solution": solution, "solution_tool_call": tool_call})
                except TemplateError as e:
                    handle(StepValidationError(record, "action", str(e)), skip_missing=skip_missing, summary=summary)
                except StepValidationError as e:
                    handle(e, skip_missing=skip_missing, summary=summary)
            if kept:
                writer.write_table(pa.Table.from_pylist(kept, schema=schema))
                summary.written += len(kept)
        refuse_nothing_written(summary, skip_missing=skip_missing)
        writer.close()
        publish(tmp, output)
        if no_tool_call:
            note(summary, f"solution_tool_call is null for {sum(no_tool_call.values())} rows: {tool_template} "
                          f"cannot express {dict(no_tool_call)}")
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    return summary


def run_inspect(source: str, input_path: Path, *, images_dir: Path | None = None, limit: int | None = None
                ) -> dict[str, Any]:
    """Counts of the steps a source yields (bad records are skipped and counted): per source, action,
    task type, group, ui type, image size and box convention, plus the reader's notes."""
    from core.data.ingest import read

    summary = ConversionSummary()
    counts: dict[str, Counter] = {k: Counter() for k in
                                  ("source", "action", "task_type", "group", "ui_type", "image_size", "bbox_convention")}
    n = with_bbox = 0
    for step in read(source, input_path, images_dir=images_dir, skip_missing=True, summary=summary):
        n += 1
        with_bbox += step.bbox is not None
        counts["source"][step.source] += 1
        counts["action"][step.action.type] += 1
        counts["task_type"][step.task_type] += 1
        counts["group"][str(step.group)] += 1
        counts["ui_type"][str(step.ui_type)] += 1
        counts["image_size"]["x".join(map(str, step.image_size))] += 1
        conv = step.extra.get("bbox_convention") or step.extra.get("bbox_format")
        if conv:
            counts["bbox_convention"][str(conv)] += 1
        if limit is not None and n >= limit:
            break
    return {"steps": n, "with_bbox": with_bbox, **{k: dict(c.most_common()) for k, c in counts.items()},
            "summary": summary.as_dict(), "notes": summary.notes}


def _report(summary: ConversionSummary, extra_lines: Sequence[str] = ()) -> None:
    typer.echo(summary.render())
    for line in extra_lines:
        typer.echo(line)
    for line in summary.notes:
        typer.echo(f"  note: {line}")


_FROM = typer.Option(..., "--from", help="Source format: guir1, screenspot, aitw, mind2web, guiodyssey, "
                                         "screenagent, osworld_g, ui_vision, mmbench_gui, unified.")
_INPUT = typer.Option(..., "--input", help="Input file or folder.")
_IMAGES = typer.Option(None, "--images", help="Folder holding the images the records name.")
_SKIP = typer.Option(False, "--skip-missing", help="Skip (and count) records with a missing/corrupt image or an "
                                                   "invalid field instead of failing.")
_OUT_DIR = typer.Option(..., "--output", help="Output folder.")
_OUT_CLEAN = typer.Option(..., "--output", help="Cleaned unified parquet file to write.")
_OUT_SOLUTION = typer.Option(..., "--output", help="Parquet file to write (input columns + solution columns).")
_OVERWRITE = typer.Option(False, "--overwrite", help="Replace an existing --output.")
_MAXP = typer.Option(None, "--max-pixels", help="Qwen smart_resize upper bound (pixels).")
_MINP = typer.Option(None, "--min-pixels", help="Qwen smart_resize lower bound (pixels).")


@data_app.command("convert")
def convert_cmd(
    source: str = _FROM,
    target: str = typer.Option(..., "--to", help="Target: unified, verl, llamafactory, swift, vlmr1, mobile_use."),
    input_path: Path = _INPUT,
    output: Path = _OUT_DIR,
    images_dir: Path | None = _IMAGES,
    skip_missing: bool = _SKIP,
    max_pixels: int | None = _MAXP,
    min_pixels: int | None = _MINP,
    template: str | None = typer.Option(None, "--template", help="Prompt template name (core.prompts)."),
    name: str | None = typer.Option(None, "--name", help="Dataset name (default: the input's stem)."),
    workers: int = typer.Option(1, "--workers", min=1, help="Threads for image work in the exporter."),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue an interrupted export."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing output, or start an unfinished "
                                                              "one over with other options."),
    coords: Coords | None = typer.Option(None, "--coords", help="guir1: the gt_bbox frame of every file, instead "
                                                                "of the vote of its rows."),
    max_image_pixels: int | None = typer.Option(None, "--max-image-pixels", min=1, help=(
        "Largest image (width x height) accepted; larger ones are row errors (default: Pillow's 89478485).")),
    recipe: Path | None = typer.Option(None, "--recipe", help=(
        "Take --min-pixels/--max-pixels from this training recipe (recipes/<model>/<method>/config_*.yaml), so the "
        "trainer's processor leaves the exported images untouched; explicit flags win.")),
) -> None:
    """Convert a native dataset into a training format; prints read / written / skipped by reason."""
    _check_source(source)
    with user_errors():
        if recipe is not None:
            from core.recipes import recipe_pixel_bounds

            low, high = recipe_pixel_bounds(recipe)
            min_pixels, max_pixels = min_pixels or low, max_pixels or high
        written, summary = run_convert(source, target, input_path, output, images_dir=images_dir,
                                       skip_missing=skip_missing, max_pixels=max_pixels, min_pixels=min_pixels,
                                       template=template, name=name, workers=workers, resume=resume,
                                       coords=coords.value if coords else None, max_image_pixels=max_image_pixels,
                                       overwrite=overwrite)
    _report(summary, [f"wrote {written}"])


@data_app.command("clean")
def clean_cmd(
    input_path: Path = _INPUT,
    output: Path = _OUT_CLEAN,
    source: str = typer.Option("unified", "--from", help="Source format of the input (default unified)."),
    images_dir: Path | None = _IMAGES,
    skip_missing: bool = _SKIP,
    tolerance: float = typer.Option(0.02, "--tolerance", min=0.0,
                                    help="Boxes/points out of the image by at most this fraction of its side are "
                                         "clipped; further out they are dropped."),
    actions: str | None = typer.Option(None, "--actions", help="Comma-separated allowed action names; other "
                                                                "actions are dropped."),
    dedupe: bool = typer.Option(True, "--dedupe/--no-dedupe", help="Drop repeated (image sha1, instruction)."),
    overwrite: bool = _OVERWRITE,
) -> None:
    """Repair or drop invalid boxes, empty instructions, duplicates and out-of-space actions."""
    _check_source(source)
    with user_errors():
        refuse_existing(output, overwrite=overwrite)
        refuse_output_inside_input(output, input_path)
        cleaner = run_clean(input_path, output, source=source, images_dir=images_dir, skip_missing=skip_missing,
                            tolerance=tolerance, actions=[a for a in (actions or "").split(",") if a.strip()],
                            dedupe=dedupe)
    _report(cleaner.summary, [f"  repaired {n} x {r}" for r, n in sorted(cleaner.repaired.items())]
            + [f"wrote {output}"])


@data_app.command("add-solution")
def add_solution_cmd(
    input_path: Path = _INPUT,
    output: Path = _OUT_SOLUTION,
    source: str = typer.Option("guir1", "--from", help="guir1 or unified."),
    images_dir: Path | None = _IMAGES,
    skip_missing: bool = _SKIP,
    template: str | None = typer.Option(None, "--template", help="Template of the GUI-R1 answer ('solution'); "
                                                                 "default by task type (guir1-high/-low/-grounding)."),
    tool_template: str = typer.Option(TOOL_CALL_TEMPLATE, "--tool-template",
                                      help="Template of the tool-call answer ('solution_tool_call')."),
    max_pixels: int | None = _MAXP,
    min_pixels: int | None = _MINP,
    overwrite: bool = _OVERWRITE,
) -> None:
    """Add the gold answer strings (GUI-R1 answer format and tool-call format) to a parquet file."""
    _check_source(source, PARQUET_SOURCES)
    with user_errors():
        refuse_existing(output, overwrite=overwrite)
        refuse_output_inside_input(output, input_path)
        summary = run_add_solution(input_path, output, source=source, images_dir=images_dir,
                                   skip_missing=skip_missing, template=template, tool_template=tool_template,
                                   max_pixels=max_pixels, min_pixels=min_pixels)
    _report(summary, [f"wrote {output}"])


@data_app.command("inspect")
def inspect_cmd(
    source: str = _FROM,
    input_path: Path = _INPUT,
    images_dir: Path | None = _IMAGES,
    limit: int | None = typer.Option(None, "--limit", min=1, help="Stop after this many steps."),
    as_json: bool = typer.Option(False, "--json", help="Print the counts as JSON."),
) -> None:
    """Counts per source / action / task type / group, box convention detected, records skipped by reason."""
    _check_source(source)
    with user_errors():
        report = run_inspect(source, input_path, images_dir=images_dir, limit=limit)
    if as_json:
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    from core.console import make_console, styled

    console = make_console()
    console.print(styled(report["steps"], "bold"), f"steps ({report['with_bbox']} with a bbox) from {input_path}")
    for key in ("source", "action", "task_type", "group", "ui_type", "image_size", "bbox_convention"):
        if report[key]:
            table = Table(title=key)
            table.add_column(key)
            table.add_column("steps", justify="right")
            for value, n in report[key].items():
                table.add_row(value, str(n))
            console.print(table)
    s = report["summary"]
    console.print(f"read {s['read']}, skipped {sum(s['skipped'].values())}: {s['skipped']}")
    for line in report["notes"]:
        console.print(f"note: {line}")


def register(app: typer.Typer) -> None:
    """Add the ``data`` sub-commands to the main ``gui-agent`` app."""
    app.add_typer(data_app, name="data")


__all__ = ["data_app", "register", "run_add_solution", "run_clean", "run_convert", "run_inspect"]
