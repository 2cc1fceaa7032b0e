"""The streaming export driver: units of steps -> rows built in a thread pool -> a sink, in input order.

Progress bar, checkpoints (through the sink), resume after an interruption, and :class:`Skip` results counted
in the :class:`core.data.summary.ConversionSummary` by reason.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.data.export.images import ImageError
from core.data.export.options import ExportOptions
from core.data.export.sinks import Progress
from core.data.summary import ConversionSummary, NothingWritten, refuse_nothing_written
from core.schema import StepValidationError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Skip:
    """A unit that produced no row: ``reason`` (grouping key of the summary) and the record names; ``bad_image``
    marks an image that could not be exported, which stops the run unless ``options.skip_missing``."""

    reason: str
    records: tuple[str, ...]
    bad_image: bool = False


def guarded(build: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Turn :class:`ImageError` raised while building a row into a ``bad_image`` :class:`Skip` naming the
    record."""

    def run(item: tuple[int, Any]) -> Any:
        try:
            return build(item)
        except ImageError as e:
            unit = item[1]
            steps = unit if isinstance(unit, list) else [unit]
            return Skip(f"bad image: {e}", tuple(s.id for s in steps), bad_image=True)

    return run


def ordered_map(fn: Callable[[Any], Any], items: Iterable[Any], workers: int) -> Iterator[tuple[Any, Any]]:
    """``(item, fn(item))`` in input order; at most ``2 * workers`` items in flight (memory stays flat)."""
    if workers <= 1:
        for it in items:
            yield it, fn(it)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="export") as ex:
        pending: deque = deque()
        for it in items:
            pending.append((it, ex.submit(fn, it)))
            if len(pending) >= 2 * workers:
                it0, fut = pending.popleft()
                yield it0, fut.result()
        while pending:
            it0, fut = pending.popleft()
            yield it0, fut.result()


def _steps_in(unit: Any) -> int:
    return len(unit) if isinstance(unit, list) else 1


def run_export(units: Iterable[Any], build: Callable[[tuple[int, Any]], Any], sink: Any, *,
               options: ExportOptions, summary: ConversionSummary, desc: str) -> Path:
    """Stream ``units`` (Steps, or lists of Steps for episodes) through ``build`` into ``sink``.

    ``build((position, unit))`` runs in a thread pool and returns ``row``, ``(row, nbytes)`` or a :class:`Skip`;
    ``position`` is the input index of the unit's first step (stable across resumes). Rows are written in
    input order. On an exception (Ctrl-C included) the sink keeps its temp files and checkpoint for a
    ``resume`` (or removes them when no checkpoint was written yet) and the exception propagates; nothing is
    ever renamed into place half-written.
    """
    from core.console import progress_bar

    prior = sink.start(options.resume)
    progress = Progress()
    it = iter(units)
    if prior is not None:
        skipped_steps = 0
        while skipped_steps < prior.consumed:
            try:
                skipped_steps += _steps_in(next(it))
            except StopIteration:
                break
        if skipped_steps != prior.consumed:
            sink.suspend()
            raise RuntimeError(
                f"cannot resume {sink.path}: the input no longer lines up with the checkpoint ({prior.consumed} "
                f"steps consumed before); the input changed - rerun without resume")
        progress = prior
        summary.written += prior.written
        for reason, n in prior.skipped.items():
            summary.skipped[reason] += n
        log.info("resuming %s after %d steps (%d rows already written)", sink.path, prior.consumed, prior.written)

    def numbered() -> Iterator[tuple[int, Any]]:
        pos = progress.consumed
        for unit in it:
            yield pos, unit
            pos += _steps_in(unit)

    try:
        with progress_bar(desc=desc, unit="step", initial=progress.consumed, dynamic_ncols=True) as bar:
            for (_, unit), result in ordered_map(build, numbered(), options.workers):
                n = _steps_in(unit)
                progress.consumed += n
                if isinstance(result, Skip):
                    if result.bad_image and not options.skip_missing:
                        raise StepValidationError(result.records[0], "image", result.reason)
                    for record in result.records:
                        summary.skip(result.reason, record)
                        progress.skipped[result.reason] += 1
                else:
                    row, nbytes = result if isinstance(result, tuple) else (result, 0)
                    if nbytes:
                        sink.write(row, nbytes)
                    else:
                        sink.write(row)
                    progress.written += 1
                    summary.written += 1
                sink.maybe_checkpoint(progress)
                bar.update(n)
        refuse_nothing_written(summary, skip_missing=options.skip_missing)  # an error, and nothing published
        return sink.close()
    except BaseException as e:
        if sink.ckpt.exists() and not isinstance(e, NothingWritten):
            sink.suspend()  # a later run resumes from the checkpoint
        else:
            sink.discard()  # nothing to resume: a run that checkpointed no row leaves no temp files
        raise
