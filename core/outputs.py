"""The output policy of every command that writes files (one owner; ``docs/output-policy.md`` states the rule).

- :func:`refuse_existing`: an existing output is replaced only with ``--overwrite``; a folder where a file is
  wanted (or a file where a folder is wanted) is refused. Commands call it before any work starts.
- :func:`claim_folder`: a command writing files into a folder owns only the files it wrote there, listed in its
  manifest ``.<command>.files.json`` (:class:`FolderFiles` adds each name before the file is written). A file
  the command may write (its name patterns) that exists is refused; ``--overwrite`` removes exactly the files of
  the manifest, never another, and a matching file the manifest does not list is refused even then.
- :func:`refuse_foreign_json`: a JSON file a rerun rewrites (a resumed ``rollout``'s ``--json`` summary) is
  replaced without ``--overwrite`` only when its content shows this command wrote it for this run.
- :func:`refuse_output_inside_input`: an output folder inside an input folder (paths resolved, links followed)
  is refused, since a rerun would read the output back as input.
- :func:`resumable_output`: a job that appends to its output (``infer``, ``rollout``, ``data convert``) resumes
  only when EVERY option that changes the output matches the run that wrote it. Those options are kept in a run
  record ``.<name>.run.json`` beside the output (:func:`run_record_path`); a mismatch raises
  :class:`OptionsChanged` naming each differing option with both values. A run that wrote nothing leaves no
  record, so a corrected command is never refused because of a failed one. An output with no record is resumed
  only when its rows carry the command's own fields (:class:`LegacyRows`, written before run records existed);
  a file whose rows merely have an ``id`` is not this command's and is refused without ``--overwrite``.
- :func:`user_errors`: bad input, unwritable outputs (disk full, read-only, a missing folder), a held lock and
  these refusals end a command with one ``error: ...`` line and exit 2, never a traceback.

Atomic writing and the per-output lock are :mod:`core.io`'s.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from core.console import bounded, quoted
from core.io import OutputLockedError, atomic_write_json, output_lock

#: Longest path shown in an error line; longer ones keep their start and end (:func:`core.console.bounded`).
MAX_PATH_SHOWN = 160


class OptionsChanged(ValueError):
    """An existing output was written with other output-changing options (``changes``: ``name old -> new``)."""

    def __init__(self, output: Path, changes: list[str]):
        self.output, self.changes = Path(output), changes
        super().__init__(f"{output} was written with other options ({'; '.join(changes)}); rerun with the same "
                         "options to resume it, or pass --overwrite to start over")


def refuse_unwritable(path: str | Path, *, option: str = "--output") -> None:
    """Raise ``ValueError`` naming ``option`` when ``path`` cannot be written: a file stands where one of its folders
    must be, or the system refuses a file in its nearest existing folder (read-only, ``/proc``, permissions). Missing
    folders are fine (the writers create them). Tried with a temporary file of its own in that folder, removed at
    once, before any work (output-policy rule 8)."""
    import tempfile

    folder = Path(path).parent
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{option} {path}: {folder} is a file, not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as e:
        raise ValueError(f"{option} {path}: cannot write in {folder} ({e.strerror or type(e).__name__})") from None


def refuse_existing(path: str | Path, *, overwrite: bool, option: str = "--output", folder: bool = False) -> None:
    """Raise ``ValueError`` naming ``option`` when ``path`` exists and ``overwrite`` is false, or when it exists
    as the wrong kind (``folder``: the output must be a folder; else a regular file, never a FIFO or device)."""
    path = Path(path)
    if folder:
        if path.exists() and not path.is_dir():
            raise ValueError(f"{option} {path} is a file; it must be a folder")
    elif path.is_dir():
        raise ValueError(f"{option} {path} is a folder; it must be a file")
    elif path.exists() and not path.is_file():  # never read (a FIFO would hang the command) nor replaced
        raise ValueError(f"{option} {path} is not a regular file (a FIFO, a socket or a device); choose a file")
    if path.exists() and not overwrite:
        raise ValueError(f"{option} {path} already exists; pass --overwrite to replace it (or choose another "
                         f"{option})")


#: A JSON file larger than this is never read back to see whose it is (a command's summary is far smaller).
MAX_OWN_JSON_BYTES = 64 * 2**20


def refuse_foreign_json(path: str | Path, *, overwrite: bool, option: str, command: str, own_fields: Sequence[str],
                        belongs: Callable[[Mapping[str, Any]], str | None]) -> None:
    """A JSON file that a rerun rewrites (a resumed ``rollout``'s ``--json`` summary) is replaced without
    ``overwrite`` only when its content shows this command wrote it for this run: a JSON object with every one
    of ``own_fields`` for which ``belongs(document)`` finds nothing wrong (it returns the reason it is another
    run's, else None). Anything else there (an unrelated file, another run's summary) is refused, naming why;
    ``overwrite`` replaces it. A folder in its place is refused as :func:`refuse_existing` refuses it."""
    path = Path(path)
    refuse_existing(path, overwrite=True, option=option)
    if overwrite or not path.exists():
        return
    reason = None
    try:
        doc = read_json_file(path, max_bytes=MAX_OWN_JSON_BYTES)
    except (OSError, ValueError):  # unreadable, a FIFO, not UTF-8, not JSON, too large, too deep
        reason = "not a readable JSON document"
    else:
        missing = [f for f in own_fields if not isinstance(doc, dict) or f not in doc]
        reason = (f"it lacks its fields {', '.join(missing)}" if missing else belongs(doc))
    if reason:
        raise ValueError(f"{option} {bounded(path, MAX_PATH_SHOWN)} exists but was not written by this {command} "
                         f"run ({reason}); pass --overwrite to replace it, or choose another {option}")


def refuse_output_inside_input(output: str | Path, input_path: str | Path, *, option: str = "--output",
                               input_option: str = "--input") -> None:
    """Refuse an ``output`` that lies inside the folder ``input_path`` (or is it): a rerun would read its own
    output back as input. Both paths are resolved first (``..`` and symbolic links, an output not yet created
    included), so a link to the input folder is caught too. An input file is not a folder: nothing to check."""
    if not Path(input_path).is_dir():
        return
    root, path = os.path.realpath(input_path), os.path.realpath(output)
    if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
        raise ValueError(f"{option} {output} lies inside {input_option} {input_path} (resolved: {path} in {root}): a "
                         "rerun would read its own output back as input; choose an output outside it")


# ------------------------------------------------------------------ folder outputs: a manifest of the files written


def manifest_path(folder: str | Path, command: str) -> Path:
    """The manifest of the files ``command`` wrote into ``folder``: ``folder/.<command>.files.json``."""
    return Path(folder) / f".{command}.files.json"


def _matches(name: str, patterns: Sequence[str]) -> bool:
    """``name`` (relative, ``/``-separated) matches one of ``patterns`` part by part (``*`` never crosses a
    ``/``); a hidden part (run records, temporary files, locks) or a ``..`` never matches."""
    parts = PurePosixPath(name).parts
    if not parts or PurePosixPath(name).is_absolute() or any(p.startswith(".") for p in parts):
        return False
    return any(len(pp := PurePosixPath(pattern).parts) == len(parts) and all(map(fnmatchcase, parts, pp))
               for pattern in patterns)


def _existing(folder: Path, patterns: Sequence[str]) -> list[str]:
    """The names under ``folder`` matching ``patterns`` that exist (a file, a link, or a folder in a file's
    place), in the order of the patterns, then by name."""
    if not folder.is_dir():
        return []
    found: dict[str, None] = {}
    for pattern in patterns:
        found.update(dict.fromkeys(sorted(n for p in folder.glob(pattern)
                                          if _matches(n := p.relative_to(folder).as_posix(), patterns))))
    return list(found)


def read_json_file(path: str | Path, *, max_bytes: int | None = None) -> Any:
    """The JSON document of the file ``path`` (a manifest, a run record, a summary a rerun rewrites). Opened without
    blocking and read only when it is a regular file, so a FIFO, a device or a folder in its place never hangs a
    command; ``ValueError`` saying why for anything else (not a regular file, over ``max_bytes``, not UTF-8, not
    JSON, nested too deeply), ``OSError`` when it cannot be opened (absent)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise ValueError(f"over {max_bytes} bytes")
        data = f.read()
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _read_manifest(path: Path) -> set[str] | None:
    """The names a manifest lists; None when there is none. A manifest that cannot be read (not a regular file,
    not JSON, nested too deeply, not ``{"files": [names]}``) is an error of one line."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        data = read_json_file(path, max_bytes=MAX_OWN_JSON_BYTES)
        names = data["files"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise TypeError
    except (OSError, ValueError, TypeError, KeyError, IndexError):
        raise ValueError(f"{bounded(path, MAX_PATH_SHOWN)} is not a readable manifest of files; delete it together "
                         "with the files it listed, or choose another output") from None
    return set(names)


class FolderFiles:
    """The files one command writes into a folder: :meth:`path` lists a name in the folder's manifest (saved
    atomically) before the caller writes the file, so a killed run leaves no unlisted file of its own behind.
    :meth:`sub` is a view of a sub-folder recording into the same manifest. Without a ``command`` (a library
    call outside a command) nothing is recorded."""

    def __init__(self, folder: str | Path, command: str | None = None, patterns: Sequence[str] = (),
                 names: Iterable[str] = (), *, prefix: str = "", root: FolderFiles | None = None):
        self.root = root or self
        self.folder, self.prefix = Path(folder), prefix
        if root is None:
            self.command, self.patterns, self.names = command, tuple(patterns), set(names)
            self._lock = threading.Lock()

    def sub(self, folder: str) -> FolderFiles:
        """The same manifest, for names under ``folder/`` (a relative ``/``-separated path)."""
        return FolderFiles(self.folder / folder, prefix=f"{self.prefix}{folder}/", root=self.root)

    def add(self, names: Iterable[str]) -> None:
        """List ``names`` (relative to this view) in the manifest; saved once if any is new."""
        root = self.root
        new = {f"{self.prefix}{n}" for n in names}
        if root.command is None:
            return
        outside = sorted(n for n in new if not _matches(n, root.patterns))
        if outside:  # a programming error: the command writes a name its patterns do not claim
            raise RuntimeError(f"{root.command} writes {outside[0]}, which its file patterns {root.patterns} "
                               "do not cover")
        with root._lock:
            if new <= root.names:
                return
            root.names |= new
            atomic_write_json(manifest_path(root.folder, root.command),
                              {"command": root.command, "files": sorted(root.names)})

    def path(self, name: str) -> Path:
        """``folder/name``, listed in the manifest first."""
        self.add([name])
        return self.folder / name


def as_folder_files(out_dir: str | Path | FolderFiles) -> FolderFiles:
    """A writer's output folder: the caller's :class:`FolderFiles`, or a plain folder (nothing recorded)."""
    return out_dir if isinstance(out_dir, FolderFiles) else FolderFiles(out_dir)


def _refuse_wrong_kinds(folder: Path, command: str, patterns: Sequence[str], listed: Iterable[str],
                        option: str) -> None:
    """Refuse, before anything is written or removed, what would make ``command`` write or delete elsewhere than
    its own files in ``folder``: a sub-folder it writes in (a folder part of one of ``patterns`` named without a
    wildcard, or the folders of a listed name) that is a symbolic link (its files would be written and ``--overwrite`` would delete them through the
    link, outside the folder) or a file (its files could not be written: a gallery's screenshots would be
    dropped); a name it writes a file at that is a folder."""
    subs: dict[Path, None] = {}
    for pattern in patterns:
        parts = PurePosixPath(pattern).parts
        for k in range(1, len(parts)):
            if any(c in "".join(parts[:k]) for c in "*?["):  # a folder per task: only the listed ones are known
                break
            subs[folder.joinpath(*parts[:k])] = None
    for name in listed:
        if _matches(name, patterns):
            subs.update(dict.fromkeys(folder / p for p in list(PurePosixPath(name).parents)[:-1]))
    for sub in sorted(subs, key=lambda p: len(p.parts)):
        shown = bounded(sub, MAX_PATH_SHOWN)
        if sub.is_symlink():
            raise ValueError(f"{option} {shown} is a symbolic link; {command} never writes or deletes its files "
                             f"through a link (they would lie outside {option}): replace it with a folder or choose "
                             f"another {option}")
        if sub.exists() and not sub.is_dir():
            raise ValueError(f"{option} {shown} is a file where {command} writes a folder of its files: move it "
                             f"away or choose another {option}")
    for name in _existing(folder, patterns):
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            raise ValueError(f"{option} {bounded(path, MAX_PATH_SHOWN)} is a folder where {command} writes a file: "
                             f"move it away or choose another {option}")


def check_folder(folder: str | Path, command: str, patterns: Sequence[str], *, overwrite: bool,
                 option: str = "--output", resume: bool = False, adopt: bool = False) -> set[str]:
    """Check the files ``command`` may write into ``folder`` (``patterns``: relative globs, ``*`` within one
    name) before any work starts; returns the names its manifest lists (its own files).

    - A matching file the manifest does not list is not this command's: refused, with or without
      ``overwrite``. ``adopt`` (a folder written before manifests existed, whose run record or rows vouch that
      this command wrote it): with no manifest, the matching files are taken as its own.
    - A file the manifest lists is refused unless ``overwrite`` (it is removed) or ``resume`` (the resumed run
      rewrites its own files).
    Anything else in the folder is never looked at again."""
    folder = Path(folder)
    refuse_existing(folder, overwrite=True, option=option, folder=True)
    manifest = manifest_path(folder, command)
    listed = _read_manifest(manifest)
    _refuse_wrong_kinds(folder, command, patterns, listed or (), option)
    existing = _existing(folder, patterns)
    if listed is None:
        listed = set(existing) if adopt else set()
    foreign = [n for n in existing if n not in listed]
    if foreign:
        more = f" ({len(foreign) - 1} more files too)" if len(foreign) > 1 else ""
        raise ValueError(f"{option} {folder / foreign[0]} exists but was not written by {command} (not in "
                         f"{manifest.name}){more}; --overwrite replaces only {command}'s own files: move it away "
                         f"or choose another {option}")
    if existing and not (overwrite or resume):
        more = f" ({len(existing) - 1} more files of it too)" if len(existing) > 1 else ""
        raise ValueError(f"{option} {folder / existing[0]} already exists; pass --overwrite to replace the files "
                         f"of the earlier {command}{more} (or choose another {option})")
    return listed


def claim_folder(folder: str | Path, command: str, patterns: Sequence[str], *, overwrite: bool,
                 option: str = "--output", resume: bool = False, adopt: bool = False) -> FolderFiles:
    """:func:`check_folder`, then take the folder: with ``overwrite`` the files the manifest lists are removed
    (and the sub-folders they leave empty), never another; returns the :class:`FolderFiles` to write through."""
    folder = Path(folder)
    listed = check_folder(folder, command, patterns, overwrite=overwrite, option=option, resume=resume,
                          adopt=adopt)
    if overwrite:
        for name in sorted(listed):
            if not _matches(name, patterns):  # a manifest edited by hand never removes anything else
                continue
            path = folder / name
            parents = list(PurePosixPath(name).parents)[:-1]
            if any((folder / parent).is_symlink() for parent in parents):  # never delete through a link
                continue
            if path.is_file() or path.is_symlink():
                path.unlink()
            for parent in parents:  # the emptied sub-folders, never the folder
                with contextlib.suppress(OSError):
                    (folder / parent).rmdir()
        listed = set()
    folder.mkdir(parents=True, exist_ok=True)
    files = FolderFiles(folder, command, patterns)
    manifest = manifest_path(folder, command)
    keep = {n for n in listed if _matches(n, patterns)}
    if keep:
        files.add(keep)  # a resumed run keeps its earlier files; an adopted folder gets its manifest now
    elif manifest.exists():
        atomic_write_json(manifest, {"command": command, "files": []})
    return files


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
            changes.append(f"{key} {quoted(old, 80)} -> {quoted(value, 80)}")
    return changes


def run_record_path(output: str | Path) -> Path:
    """Where the output-changing options of the run writing ``output`` are kept: ``.<name>.run.json`` beside it."""
    output = Path(output)
    return output.with_name(f".{output.name}.run.json")


def _read_record(path: Path, output: Path) -> dict[str, Any] | None:
    """The options a run record holds; None when there is none (the output's rows must then vouch for it). A
    record that cannot be read (not a regular file, not UTF-8 or JSON, nested too deeply: :func:`read_json_file`;
    not an object) is ``ValueError`` of one line: whose options it held is unknown."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        record = read_json_file(path, max_bytes=MAX_OWN_JSON_BYTES)
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        raise ValueError(f"{bounded(path, MAX_PATH_SHOWN)} is not a readable run record of "
                         f"{bounded(output.name, 80)} ({e.strerror if isinstance(e, OSError) else e}); pass "
                         "--overwrite to start over, or choose another output") from None
    return record


@dataclass(frozen=True)
class LegacyRows:
    """How a resumable output written before run records existed proves it is this command's.

    ``first_row()``: the output's first row (None when empty). ``own_fields``: fields every row this command
    writes has always carried (a row lacking one was written by something else). ``options(row)``: the output
    options read back from that row (compared only where the row holds them); it may raise ``ValueError``
    itself, naming the differences."""

    first_row: Callable[[], Mapping[str, Any] | None]
    own_fields: tuple[str, ...]
    options: Callable[[Mapping[str, Any]], Mapping[str, Any]]


def _legacy_options(output: Path, record: Path, legacy: LegacyRows | None) -> Mapping[str, Any]:
    """The options an output without a run record was written with, when its rows show they are this
    command's; else ``ValueError`` (not this command's output, or unknown options)."""
    if legacy is None:
        raise ValueError(f"{output} exists but the options that wrote it are unknown (no {record.name}); "
                         "pass --overwrite to start over, or choose another output")
    return legacy.options(_own_row(output, record, legacy.first_row, legacy.own_fields))


def _own_row(output: Path, record: Path, first_row: Callable[[], Mapping[str, Any] | None],
             own_fields: Sequence[str]) -> Mapping[str, Any]:
    """The first row of ``output`` when it carries every one of ``own_fields``; else ``ValueError``."""
    row = first_row()
    missing = [f for f in own_fields if not isinstance(row, Mapping) or f not in row]
    if missing or row is None:
        raise ValueError(f"{output} was not written by this command (no {record.name}, and its rows lack its "
                         f"fields {', '.join(missing)}); it is never resumed: pass --overwrite to replace it, or "
                         "choose another output")
    return row


def refuse_foreign_output(output: str | Path, *, overwrite: bool, first_row: Callable[[], Mapping[str, Any] | None],
                          own_fields: Sequence[str]) -> None:
    """Before any work starts (no model loaded): an existing ``output`` with rows but no run record whose first
    row lacks one of ``own_fields`` is not this command's; refused without ``overwrite``.
    :func:`resumable_output` checks it again, with the options, under the output's lock."""
    output = Path(output)
    record = run_record_path(output)
    if not overwrite and output.is_file() and output.stat().st_size > 0 and not record.exists():
        _own_row(output, record, first_row, own_fields)


@contextlib.contextmanager
def resumable_output(output: str | Path, options: Mapping[str, Any], *, overwrite: bool,
                     has_rows: Callable[[], bool], clear: Callable[[], None] = lambda: None,
                     legacy: LegacyRows | None = None, keep_record: bool = True) -> Iterator[bool]:
    """Hold ``output``'s lock and check a resume; yields whether rows already there are kept (resumed).

    ``options``: every option that changes the output (JSON values). ``has_rows()``: the output (or its resume
    state) holds rows. ``clear()``: delete them (``overwrite``). An output with rows is resumed only when its
    run record (this command wrote it) or, without a record, its rows (``legacy``: an output written before run
    records existed, its rows carrying the command's own fields) hold the same options; anything else is
    refused. The record is written before the block runs, removed when the block fails with no row written,
    and removed at the end when ``keep_record`` is false (a finished output that is not resumable, e.g.
    ``data convert``'s).
    """
    output = Path(output)
    record = run_record_path(output)
    with output_lock(output):
        if overwrite:
            clear()
        elif has_rows():
            previous = _read_record(record, output)
            only_recorded = previous is None
            if previous is None:
                previous = _legacy_options(output, record, legacy)
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
        return f"cannot use {bounded(err.filename, MAX_PATH_SHOWN)}: {err.strerror or err}"
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


__all__ = ["FolderFiles", "LegacyRows", "OptionsChanged", "as_folder_files", "check_folder", "claim_folder",
           "error_line", "manifest_path", "option_changes", "read_json_file", "refuse_existing", "refuse_foreign_json", "refuse_foreign_output",
           "refuse_output_inside_input",
           "refuse_unwritable", "resumable_output", "run_record_path", "user_errors"]
