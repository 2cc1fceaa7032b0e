"""The output policy of every command that writes files (one owner; ``docs/output-policy.md`` states the rule).

- :func:`refuse_existing`: an existing output is replaced only with ``--overwrite``; a folder where a file is
  wanted (or a file where a folder is wanted) is refused. Commands call it before any work starts.
- :func:`resumable_output`: a job that appends to its output (``infer``, ``rollout``, ``data convert``) resumes
  only when EVERY option that changes the output matches the run that wrote it. Those options are kept in a run
  record ``.<name>.run.json`` beside the output (:func:`run_record_path`); a mismatch raises
  :class:`OptionsChanged` naming each differing option with both values. A run that wrote nothing leaves no
  record, so a corrected command is never refused because of a failed one.
- :func:`user_errors`: bad input, unwritable outputs (disk full, read-only, a missing folder), a held lock and
  these refusals end a command with one ``error: ...`` line and exit 2, never a traceback.

Atomic writing and the per-output lock are :mod:`core.io`'s.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from core.io import OutputLockedError, atomic_write_json, output_lock

#: Longest path shown in an error line; longer ones keep their start and end.
MAX_PATH_SHOWN = 160


class OptionsChanged(ValueError):
    """An existing output was written with other output-changing options (``changes``: ``name old -> new``)."""

    def __init__(self, output: Path, changes: list[str]):
        self.output, self.changes = Path(output), changes
        super().__init__(f"{output} was written with other options ({'; '.join(changes)}); rerun with the same "
                         "options to resume it, or pass --overwrite to start over")


def refuse_existing(path: str | Path, *, overwrite: bool, option: str = "--output", folder: bool = False) -> None:
    """Raise ``ValueError`` naming ``option`` when ``path`` exists and ``overwrite`` is false, or when it exists
    as the wrong kind (``folder``: the output must be a folder; else a file)."""
    path = Path(path)
    if folder:
        if path.exists() and not path.is_dir():
            raise ValueError(f"{option} {path} is a file; it must be a folder")
    elif path.is_dir():
        raise ValueError(f"{option} {path} is a folder; it must be a file")
    if path.exists() and not overwrite:
        raise ValueError(f"{option} {path} already exists; pass --overwrite to replace it (or choose another "
                         f"{option})")


def refuse_existing_files(folder: str | Path, names: list[str], *, overwrite: bool, option: str = "--output"
                          ) -> None:
    """:func:`refuse_existing` for a command writing ``names`` into ``folder`` (a report folder)."""
    refuse_existing(folder, overwrite=True, option=option, folder=True)
    for name in names:
        refuse_existing(Path(folder) / name, overwrite=overwrite, option=option)


def option_changes(recorded: Mapping[str, Any], current: Mapping[str, Any], *, only_recorded: bool = False
                   ) -> list[str]:
    """``name old -> new`` for every option of ``current`` whose value differs from ``recorded`` (a missing one
    counts as None, unless ``only_recorded``: then only options ``recorded`` holds are compared). Options that
    are mappings on both sides are compared key by key (``resize.max_pixels 1258291 -> 501760``)."""
    changes = []
    for key, value in current.items():
        old = recorded.get(key)
        if only_recorded and key not in recorded:
            continue
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            changes += [f"{key}.{change}" for change in option_changes(old, value, only_recorded=only_recorded)]
        elif old != value:
            changes.append(f"{key} {old!r} -> {value!r}")
    return changes


def run_record_path(output: str | Path) -> Path:
    """Where the output-changing options of the run writing ``output`` are kept: ``.<name>.run.json`` beside it."""
    output = Path(output)
    return output.with_name(f".{output.name}.run.json")


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent, unreadable or torn: no record
        return None
    return record if isinstance(record, dict) else None


@contextlib.contextmanager
def resumable_output(output: str | Path, options: Mapping[str, Any], *, overwrite: bool,
                     has_rows: Callable[[], bool], clear: Callable[[], None] = lambda: None,
                     options_in_rows: Callable[[], Mapping[str, Any] | None] | None = None,
                     keep_record: bool = True) -> Iterator[bool]:
    """Hold ``output``'s lock and check a resume; yields whether rows already there are kept (resumed).

    ``options``: every option that changes the output (JSON values). ``has_rows()``: the output (or its resume
    state) holds rows. ``clear()``: delete them (``overwrite``). ``options_in_rows()``: the options read back
    from the rows, for an output written before run records existed (compared only where the rows hold them).
    An output with rows and neither a record nor ``options_in_rows`` is refused (unknown options). The record is
    written before the block runs, removed when the block fails with no row written, and removed at the end when
    ``keep_record`` is false (a finished output that is not resumable, e.g. ``data convert``'s).
    """
    output = Path(output)
    record = run_record_path(output)
    with output_lock(output):
        if overwrite:
            clear()
        elif has_rows():
            previous = _read_record(record)
            only_recorded = previous is None
            if previous is None and options_in_rows is not None:
                previous = options_in_rows()
            if previous is None:
                raise ValueError(f"{output} exists but the options that wrote it are unknown (no {record.name}); "
                                 "pass --overwrite to start over, or choose another output")
            changes = option_changes(previous, options, only_recorded=only_recorded)
            if changes:
                raise OptionsChanged(output, changes)
        resuming = not overwrite and has_rows()
        atomic_write_json(record, dict(options))
        try:
            yield resuming
        except BaseException:
            if not has_rows():
                record.unlink(missing_ok=True)
            raise
        if not keep_record:
            record.unlink(missing_ok=True)


def error_line(err: BaseException) -> str:
    """One line for the user: an OS error names its path (shortened) and says what went wrong."""
    if isinstance(err, OSError) and err.filename is not None:
        path = str(err.filename)
        if len(path) > MAX_PATH_SHOWN:
            path = f"{path[:80]}...{path[-60:]} ({len(path)} characters)"
        return f"cannot use {path}: {err.strerror or err}"
    if isinstance(err, OSError) and err.strerror:  # str() would add "[Errno N]" before the same words
        return " ".join(err.strerror.split())
    return " ".join(str(err).split()) or type(err).__name__


def _user_error_types() -> tuple[type[BaseException], ...]:
    from core.schema import StepValidationError

    types: tuple[type[BaseException], ...] = (StepValidationError, OSError, ValueError, KeyError,
                                              OutputLockedError)
    try:
        import pyarrow as pa
    except ImportError:  # the base install may lack pyarrow; nothing then raises its errors
        return types
    return (*types, pa.ArrowException)


@contextlib.contextmanager
def user_errors(prefix: str = "") -> Iterator[None]:
    """End the command with one ``error: [prefix]...`` line on stderr and exit 2 on a user-facing error: bad
    records or options (ValueError, KeyError), unreadable inputs and unwritable outputs (OSError: disk full,
    read-only, a file where a folder must be), a held output lock, an Arrow error. Atomic writers leave nothing
    under an output's final name."""
    import typer

    from core.console import print_error

    try:
        yield
    except _user_error_types() as e:
        print_error(f"{prefix}{error_line(e)}")
        raise typer.Exit(2) from None


__all__ = ["OptionsChanged", "error_line", "option_changes", "refuse_existing", "refuse_existing_files",
           "resumable_output", "run_record_path", "user_errors"]
