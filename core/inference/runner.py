"""Resumable prediction files: one JSON line per benchmark step, appended batch by batch.

Row fields (read by ``gui-agent eval``):

- GUI-R1's: ``instruction``, ``history``, ``gt_action``, ``gt_bbox`` (ORIGINAL pixels, [x1, y1, x2, y2], or
  [x, y] for a point target, or GUI-R1's ``[-100, -100]`` when the action has no target), ``gt_input_text``,
  ``group``, ``ui_type``, ``image_size`` [W, H], ``pred`` (raw model text), ``pred_action``, ``pred_coord``
  [x, y] ORIGINAL pixels (null when the answer has no point), ``pred_input_text``; the gold columns are written
  by :class:`core.records.GoldRecord`;
- frames: ``gt_frame`` and ``pred_frame`` (both ``original``) say what ``gt_bbox`` and ``pred_coord`` are in;
- ours: ``id``, ``template``, ``resize`` {min_pixels, max_pixels, factor, resized_size [W, H]}, ``parse_ok``,
  ``parse_error``, ``error`` (image or generation failure; the row is still written), ``image_path``,
  ``backend``, ``model``; with ``--zoom``, ``zoom`` (both stages: :func:`core.inference.zoom.zoom_record`).

Resume: rows already in the output (by ``id``) are skipped; a torn last line from a killed run is cut off
first. Each batch is appended with one ``write`` of complete lines, then flushed and fsynced.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.actions import NO_INPUT_TEXT, Action
from core.geometry import Frame
from core.inference.backends import Backend, Generation
from core.inference.bench import iter_benchmark
from core.inference.requests import (
    DEFAULT_POLICY,
    InferenceRequest,
    ResizePolicy,
    build_request,
)
from core.inference.options import TRAINING_TEMPLATE
from core.inference.rows import SkippedRecord, gold_columns, history_string, parse_answer
from core.inference.zoom import dry_run_zoom, zoom_in, zoom_record
from core.io import atomic_write_bytes
from core.schema import Step

PRED_FIELDS: tuple[str, ...] = (
    "id", "instruction", "history", "gt_action", "gt_bbox", "gt_input_text", "gt_frame", "group", "ui_type",
    "image_size", "pred", "pred_action", "pred_coord", "pred_frame", "pred_input_text", "template", "resize", "parse_ok", "parse_error",
    "error", "image_path", "image_source", "backend", "model",
)

#: Fields every prediction row ``infer`` has written carries (a file whose rows lack one is not infer's).
OWN_FIELDS: tuple[str, ...] = ("pred", "template", "resize", "backend", "model")


class PredictionFileCorrupt(ValueError):
    """An existing output file has a bad line in the middle (not a torn last line)."""


def prediction_row(req: InferenceRequest, gen: Generation | None, *, backend: str, model: str
                   ) -> tuple[dict[str, Any], Action | None]:
    """The output row of one request and its parsed action (ORIGINAL pixels, or None); ``gen`` is None when
    the request itself failed (``req.error``)."""
    step = req.step
    row: dict[str, Any] = {
        "id": step.id,
        "instruction": step.instruction,
        "history": history_string(step),
        **gold_columns(step),
        "group": step.group,
        "ui_type": step.ui_type,
        "pred": None,
        "pred_action": None,
        "pred_coord": None,
        "pred_frame": Frame.ORIGINAL.value,
        "pred_input_text": None,
        "template": req.template,
        "resize": req.policy.record(req.geometry),
        "parse_ok": False,
        "parse_error": None,
        "error": req.error,
        "image_path": step.image if isinstance(step.image, str) else step.extra.get("image_path"),
        "image_source": step.extra.get("image_source"),
        "backend": backend,
        "model": model,
    }
    action = None
    if req.error is None and gen is not None:
        if gen.error is not None:
            row["error"] = gen.error
        else:
            row["pred"] = gen.text
            fields, action = parse_answer(gen.text or "", req)
            row.update(fields)
    return row, action


def skipped_row(rec: SkippedRecord, *, policy: ResizePolicy, template: str | None, backend: str, model: str
                ) -> dict[str, Any]:
    """The row of a record the reader rejected: only ``id`` and ``error`` carry information."""
    row: dict[str, Any] = dict.fromkeys(PRED_FIELDS)
    row.update(id=rec.id, gt_input_text=NO_INPUT_TEXT, template=template, resize=policy.record(None),
               parse_ok=False, error=rec.reason, backend=backend, model=model)
    return row


def _dumps(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, allow_nan=False, default=str)


def _encode(text: str) -> bytes:
    """UTF-8 of JSON text; a lone surrogate from model text (``\\ud800``) becomes its JSON escape, so the row is
    stored losslessly instead of stopping the run."""
    return text.encode("utf-8", "backslashreplace")


def first_row(path: str | Path) -> dict[str, Any] | None:
    """The first row of the prediction file ``path`` (None when empty or absent; see :func:`load_done`)."""
    return load_done(path)[1]


def load_done(path: str | Path, *, retry_failed: bool = False) -> tuple[set[str], dict[str, Any] | None]:
    """Ids already in the prediction file ``path`` and its first row (None when empty or absent).

    A torn last line (no newline: the process died mid-write) is cut off. With ``retry_failed`` the rows
    whose ``error`` is set are removed (the file is rewritten atomically) so they run again. A bad line in the
    middle of the file raises :class:`PredictionFileCorrupt` naming the line.
    """
    path = Path(path)
    if not path.exists():
        return set(), None
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with open(path, "r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
    done: set[str] = set()
    first: dict[str, Any] | None = None
    kept: list[str] = []
    dropped = 0
    for lineno, line in enumerate(data[:end].decode("utf-8").splitlines(keepends=True), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise PredictionFileCorrupt(f"{path}:{lineno}: invalid JSON ({e.msg}); fix or delete the file") from None
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise PredictionFileCorrupt(f"{path}:{lineno}: field 'id': missing or not a string")
        if retry_failed and row.get("error"):
            dropped += 1
            continue
        first = first or row
        done.add(row["id"])
        kept.append(line)
    if dropped:
        atomic_write_bytes(path, _encode("".join(kept)))
    return done, first


class PredictionWriter:
    """Appends complete JSON lines to ``path``: one ``os.write`` per batch, then fsync; a failed write (disk
    full) is cut off again, so the file never ends in a torn row."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write_rows(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        data = _encode("".join(_dumps(r) + "\n" for r in rows))
        view = memoryview(data)
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            os.fsync(self._fd)
        except OSError as e:  # disk full mid-batch: cut the torn lines off, the file keeps only whole rows
            os.ftruncate(self._fd, end)
            raise OSError(e.errno, e.strerror, str(self.path)) from e

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> PredictionWriter:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class RunSummary:
    """Counts of one run: ``resumed`` rows were already in the file; ``written`` = new rows; ``error_reasons``:
    new rows per error (first 300 characters)."""

    output: str
    resumed: int = 0
    written: int = 0
    failed: int = 0
    parse_failed: int = 0
    seconds: float = 0.0
    skipped_limit: bool = False
    notes: list[str] = field(default_factory=list)
    error_reasons: Counter[str] = field(default_factory=Counter)
    #: with --zoom: new rows by whose answer they hold (``zoom.used``: second, first, or None for no answer)
    zoom_used: Counter[str | None] = field(default_factory=Counter)

    def render(self) -> str:
        rate = self.written / self.seconds if self.seconds > 0 else 0.0
        zoom = (f"; zoom: {self.zoom_used['second']} answered on the crop, {self.zoom_used['first']} kept the "
                "first answer (each row's zoom.note says why)") if self.zoom_used else ""
        return (f"{self.output}: {self.written} new rows ({rate:.2f} rows/s), {self.resumed} already there, "
                f"{self.failed} with errors, {self.parse_failed} unparsed answers{zoom}")


def _check_compatible(first: dict[str, Any] | None, policy: ResizePolicy, template: str | None, model: str,
                      path: Path, zoom: float | None = None) -> None:
    """Refuse to append to a file written with other output-shaping options (resize, model, prompt template, the
    zoom share its rows' ``zoom`` records hold), naming every one that differs."""
    if first is None:
        return
    from core.prompts import GUI_DESKTOP, GUIR1_GROUNDING, GUIR1_HIGH, GUIR1_LOW

    old = first.get("resize") or {}
    differ = [f"{key} {old.get(key)} -> {getattr(policy, key)}"
              for key in ("min_pixels", "max_pixels", "factor", "prescale_max_pixels")
              if (key in old or key == "prescale_max_pixels") and old.get(key) != getattr(policy, key)]
    if bool(old.get("fetch_image_first")) != policy.fetch_image_first:
        differ.append(f"fetch_image_first {bool(old.get('fetch_image_first'))} -> {policy.fetch_image_first}")
    if first.get("model") not in (None, model):
        differ.append(f"model {first.get('model')!r} -> {model!r}")
    written = first.get("template")
    training = {t.name for t in (GUIR1_HIGH, GUIR1_LOW, GUIR1_GROUNDING, GUI_DESKTOP)}
    if written is not None and template is not None and written != template:
        differ.append(f"template {written!r} -> {template!r}")
    elif written is not None and template is None and written not in training:
        differ.append(f"template {written!r} -> each step's training template")
    record = first.get("zoom")
    written_zoom = record.get("share") if isinstance(record, dict) else None
    if written_zoom != zoom:  # a two-stage file resumed as one stage (or the other way), or another share
        differ.append(f"zoom {written_zoom} -> {zoom}")
    if differ:
        raise ValueError(f"{path} was written with other options ({'; '.join(differ)}); rerun with the same "
                         "options to resume it, or pass --overwrite to start over")


def _batches(items: Iterable[Step | SkippedRecord], size: int) -> Iterator[list[Step | SkippedRecord]]:
    batch: list[Step | SkippedRecord] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def run_inference(items: Iterable[Step | SkippedRecord], backend: Backend, output: str | Path, *,
                  template: str | None = None, policy: ResizePolicy = DEFAULT_POLICY, limit: int | None = None,
                  total: int | None = None, retry_failed: bool = False, progress: bool = True,
                  overwrite: bool = False, run_options: Mapping[str, Any] | None = None,
                  zoom: float | None = None) -> RunSummary:
    """Predict every item (the first ``limit`` when given) into ``output``, skipping ids already there.

    ``template``: a ``core.prompts`` name, or None for each step's training template (recorded as ``train``,
    the ``--prompt`` value meaning it). ``total``: number of
    input rows, for the progress bar. Rows are written in input order. ``run_options``: the caller's other
    output-changing options (input file, generation settings...). An existing file is resumed only when the
    model, template, resize and every ``run_options`` value match the run that wrote it
    (:func:`core.outputs.resumable_output`; ``ValueError`` naming each difference); ``overwrite`` deletes it and
    starts over. ``zoom``: the crop share of zoom's second stage (:mod:`core.inference.zoom`), None = one stage.
    """
    from core.outputs import LegacyRows, resumable_output

    output = Path(output)
    options = {"backend": backend.name, "model": backend.model, "template": template or TRAINING_TEMPLATE,
               "resize": {"min_pixels": policy.min_pixels, "max_pixels": policy.max_pixels, "factor": policy.factor,
                          **({} if policy.prescale_max_pixels is None
                             else {"prescale_max_pixels": policy.prescale_max_pixels}),
                          **({"fetch_image_first": True} if policy.fetch_image_first else {})},
               "zoom": zoom, **(run_options or {})}

    def legacy_options(first: Mapping[str, Any]) -> dict[str, Any]:
        """A file written before run records: check the options its first row holds (none more to compare)."""
        _check_compatible(dict(first), policy, template, backend.model, output, zoom)
        return {}

    legacy = LegacyRows(first_row=lambda: first_row(output), own_fields=OWN_FIELDS, options=legacy_options)
    with resumable_output(output, options, overwrite=overwrite,
                          has_rows=lambda: output.exists() and output.stat().st_size > 0,
                          clear=lambda: output.unlink(missing_ok=True), legacy=legacy):
        return _run_locked(items, backend, output, template=template, policy=policy, limit=limit, total=total,
                           retry_failed=retry_failed, progress=progress, zoom=zoom)


def _run_locked(items: Iterable[Step | SkippedRecord], backend: Backend, output: Path, *, template: str | None,
                policy: ResizePolicy, limit: int | None, total: int | None, retry_failed: bool,
                progress: bool, zoom: float | None) -> RunSummary:
    from core.console import progress_bar

    done, _ = load_done(output, retry_failed=retry_failed)
    summary = RunSummary(output=str(output))
    n_total = min(total, limit) if (total is not None and limit is not None) else (limit if total is None else total)
    seen: set[str] = set()

    def todo() -> Iterator[Step | SkippedRecord]:
        for n, item in enumerate(items):
            if limit is not None and n >= limit:
                summary.skipped_limit = True
                return
            if item.id in seen:
                raise ValueError(f"input row {n}: field 'id': duplicate id {item.id!r} (ids must be unique "
                                 "for resume)")
            seen.add(item.id)
            if item.id in done:
                summary.resumed += 1
                continue
            yield item

    start = time.monotonic()
    initial = len(done) if n_total is None else min(len(done), n_total)  # rate/ETA count only new rows
    with PredictionWriter(output) as writer, progress_bar(total=n_total, initial=initial, unit="row", desc=output.name,
                                                  enabled=progress, dynamic_ncols=True) as bar:
        for batch in _batches(todo(), backend.batch_rows):
            slots: list[dict[str, Any] | None] = [None] * len(batch)
            ready: list[tuple[int, InferenceRequest]] = []
            for i, item in enumerate(batch):
                if isinstance(item, SkippedRecord):
                    slots[i] = skipped_row(item, policy=policy, template=template, backend=backend.name,
                                           model=backend.model)
                    continue
                req = build_request(item, template=template, policy=policy)
                if req.ok:
                    ready.append((i, req))
                else:
                    slots[i] = prediction_row(req, None, backend=backend.name, model=backend.model)[0]
            gens = backend.generate([r for _, r in ready]) if ready else []
            for (i, req), gen in zip(ready, gens, strict=True):
                slots[i] = prediction_row(req, gen, backend=backend.name, model=backend.model)[0]
            rows = [r for r in slots if r is not None]
            if zoom is not None:  # a second request per answered grounding row; a batch is written whole
                for row in rows:
                    row["zoom"] = zoom_record(zoom, note="no answer: the row failed before its first request")
                zoom_in(backend, [(req, slots[i]) for i, req in ready], zoom)
                summary.zoom_used.update(row["zoom"]["used"] for row in rows)
            writer.write_rows(rows)
            summary.written += len(rows)
            summary.failed += sum(1 for r in rows if r["error"])
            summary.error_reasons.update(str(r["error"])[:300] for r in rows if r["error"])
            summary.parse_failed += sum(1 for r in rows if not r["error"] and not r["parse_ok"])
            bar.update(len(rows))
    summary.seconds = time.monotonic() - start
    return summary


def dry_run_rows(input_path: str | Path, layout: str, images_dir: str | Path | None, template: str | None,
                 policy: ResizePolicy, generation: Any, limit: int | None,
                 zoom: float | None = None) -> Iterator[dict[str, Any]]:
    """What ``gui-agent infer --dry-run`` prints for one input, one dict per row: ``id``, ``template``, the chat
    ``messages`` (text; ``<image>`` marks the screenshot), ``image_size`` and ``resized_size`` [W, H] pixels,
    ``resize`` bounds, ``generation`` settings and ``error`` (a row that could not be built); with ``zoom``, the
    row's zoom settings (:func:`core.inference.zoom.dry_run_zoom`)."""
    gen = asdict(generation)
    for n, item in enumerate(iter_benchmark(Path(input_path), images_dir=images_dir, layout=layout)):
        if limit is not None and n >= limit:
            return
        if isinstance(item, SkippedRecord):
            yield {"id": item.id, "input": str(input_path), "template": template, "error": item.reason}
            continue
        req = build_request(item, template=template, policy=policy)
        geo = req.geometry
        row = {"id": item.id, "input": str(input_path), "template": req.template, "messages": req.messages,
               "image_size": list(item.image_size),
               "resized_size": None if geo is None else [geo.resized_width, geo.resized_height],
               "resize": policy.record(geo), "generation": gen, "error": req.error}
        if zoom is not None:
            row["zoom"] = dry_run_zoom(item, policy, zoom)
        yield row


__all__ = [
    "PRED_FIELDS", "PredictionFileCorrupt", "PredictionWriter", "RunSummary", "SkippedRecord",
    "dry_run_rows", "gold_columns", "history_string", "load_done", "parse_answer", "prediction_row", "run_inference", "skipped_row",
]
