"""The one owner of text shown in the terminal.

Every command prints through :func:`make_console`: a ``rich`` console on which no string is ever read as markup,
emoji code or highlight (a model answer ``[/]``, a path ``[bold]x`` or a group ``:smile:`` prints as written), and
whose control characters (ESC, BEL, ...) are shown as escapes (``\\x1b``) instead of reaching the terminal.  Our own
styling is built from :func:`styled` pieces, never from markup strings.  On a terminal the console wraps at its
width; in logs and pipes it does not wrap at all (rich would otherwise fold long paths at 80 columns) and prints no
colour codes.  :func:`print_error` is the ``error: ...`` line of every command.  Long work (data conversion,
inference, rollout, eval, the verl demo data) reports through :func:`progress_bar`: a bar on a terminal, plain
progress lines in logs and pipes (:class:`ProgressLines`), so a run piped to a log is never silent for long.
"""

from __future__ import annotations

import os
import re
import reprlib
import sys
from typing import Any

#: Width used when the output is not a terminal: wide enough that no table or path is folded.
LOG_WIDTH = 10_000

#: C0 and C1 control characters other than newline and tab, and DEL: shown as ``\xNN`` escapes.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Longest user text (a name, a value, a path) an error message quotes; longer text keeps its start and end.
MAX_QUOTED = 160
#: Longest error message printed (``error:`` lines, usage errors): a backstop, each quoted value is bounded already.
MAX_ERROR_CHARS = 2_000


def shown_text(value: Any) -> str:
    """``value`` as a string safe to write to a terminal: control characters other than newline and tab become
    visible escapes (``\\x1b``); nothing else changes."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", "" if value is None else str(value))


def _cut(text: str, limit: int) -> str:
    head = max(1, limit * 2 // 3)
    return f"{text[:head]}...{text[-max(1, limit - head):]}"


def bounded(value: Any, limit: int = MAX_QUOTED) -> str:
    """``value`` as text of about ``limit`` characters at most: longer text keeps its start and end around ``...``
    and says its length (``abc...xyz (100000 characters)``), so a 100,000-character name cannot fill a screen."""
    text = "" if value is None else str(value)
    if len(text) <= limit:
        return text
    return f"{_cut(text, limit)} ({len(text)} characters)"


class _ContainerQuoter(reprlib.Repr):
    """reprlib's repr, bounded in depth, items and characters: linear in what it shows, so a YAML alias bomb (a
    list shared a billion times over) or a 100,000-item list is quoted without being expanded."""

    def repr_int(self, x: int, level: int) -> str:  # Python refuses to print > 4300 digits
        return f"<an integer of {x.bit_length()} bits>" if x.bit_length() > 200 else super().repr_int(x, level)


_QUOTER = _ContainerQuoter()  # keyword arguments only from Python 3.12
_QUOTER.maxlevel = 3
_QUOTER.maxlist = _QUOTER.maxtuple = _QUOTER.maxdict = _QUOTER.maxset = _QUOTER.maxfrozenset = 8
_QUOTER.maxstring = _QUOTER.maxother = MAX_QUOTED // 2  # an item's text: the whole quote stays near the limit
_CONTAINERS = (list, tuple, dict, set, frozenset)


def quoted(value: Any, limit: int = MAX_QUOTED) -> str:
    """``repr(value)`` bounded by :func:`bounded`: how every error message quotes a value a user or a file gave
    (an unknown name, a wrong value). An integer too long for ``repr`` is named by its size; a list, tuple, dict or
    set shows its first items, a few levels deep (:class:`_ContainerQuoter`), and how many it has when any is left out."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, _CONTAINERS):
        text = _QUOTER.repr(value)
        if len(text) <= limit and len(value) <= _QUOTER.maxlist:  # shown whole
            return text
        items = f"{len(value)} item{'' if len(value) == 1 else 's'}"
        return f"{_cut(text, limit) if len(text) > limit else text} ({items})"
    return bounded(repr(value), limit)


def styled(value: Any, style: str):
    """A ``rich.text.Text`` of ``value`` (control characters escaped, never markup) in ``style``."""
    from rich.text import Text

    return Text(shown_text(value), style=style)


def make_console(stderr: bool = False):
    """A ``rich.console.Console`` on stdout (or stderr) that shows every string as plain text (see the module
    docstring) and only wraps on a terminal."""
    from rich.console import Console

    class ShownConsole(Console):
        """Every string (printed, a table cell, a title) passes :meth:`render_str`: plain text, controls escaped."""

        def render_str(self, text: str, **kwargs: Any):
            kwargs.update(markup=False, emoji=False, highlight=False)
            return super().render_str(shown_text(text), **kwargs)

    stream = sys.stderr if stderr else sys.stdout
    common = {"stderr": stderr, "markup": False, "emoji": False, "highlight": False}
    if stream.isatty():
        return ShownConsole(**common)
    return ShownConsole(width=LOG_WIDTH, soft_wrap=True, no_color=True, **common)


def print_error(message: Any) -> None:
    """Print ``error: <message>`` on stderr (red on a terminal); ``message`` is shown as plain text, at most
    :data:`MAX_ERROR_CHARS` characters (:func:`bounded`)."""
    make_console(stderr=True).print(styled("error:", "red"), bounded(message, MAX_ERROR_CHARS))


#: Plain progress lines (stderr not a terminal): at least one every this many seconds while work goes on
#: (``GUI_AGENT_PROGRESS_SECONDS`` sets it; 0 prints a line at every update, for tests).
PROGRESS_SECONDS = 30.0
#: ... and one each time another this many percent of a known total is done (at most one per third of the period).
PROGRESS_PERCENT = 5


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def progress_bar(iterable: Any = None, *, enabled: bool = True, **kwargs: Any):
    """Progress of every command's long work, on stderr: a ``tqdm`` bar when stderr is a terminal, plain lines
    (:class:`ProgressLines`) in logs and pipes, nothing when ``enabled`` is False or ``TQDM_DISABLE`` is set. Takes
    tqdm's arguments (``total``, ``initial``, ``desc``, ``unit``; others only matter to the bar)."""
    if not enabled or _env_flag("TQDM_DISABLE"):
        from tqdm import tqdm

        return tqdm(iterable, disable=True, **kwargs)
    if sys.stderr.isatty():
        from tqdm import tqdm

        return tqdm(iterable, **kwargs)
    period = os.environ.get("GUI_AGENT_PROGRESS_SECONDS")
    return ProgressLines(iterable, period=PROGRESS_SECONDS if period is None else float(period), **kwargs)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


class ProgressLines:
    """What a progress bar says, as plain lines for a log: ``desc: 120/1000 rows (12%), 3.1 rows/s, 0:39 elapsed,
    ETA 4:44``. A line each time another :data:`PROGRESS_PERCENT` of a known total is done and at least every
    ``period`` seconds, never two within a third of ``period`` and none in the first third (a short run prints
    nothing); a last line at the end when any was printed. The part of tqdm's interface the commands use:
    iteration, ``update``, ``set_postfix``, ``n``, ``total``, ``close`` and ``with``."""

    def __init__(self, iterable: Any = None, *, total: float | None = None, initial: float = 0, desc: str | None = None,
                 unit: str = "it", period: float = PROGRESS_SECONDS, file: Any = None,
                 clock: Any = None, **_bar_only: Any):
        import time

        self.iterable = iterable
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        self.total, self.n, self.desc, self.unit = total, initial, desc or "progress", unit.strip() or "it"
        self._initial, self._period, self._file = initial, max(0.0, period), file
        self._clock = clock or time.monotonic
        self._start = self._last = self._clock()
        self._printed = 0
        self._last_n = initial
        self._next_percent = self._percent() // PROGRESS_PERCENT * PROGRESS_PERCENT + PROGRESS_PERCENT
        self._postfix: dict[str, Any] = {}
        self._closed = False

    def _percent(self) -> float:
        return 100.0 * self.n / self.total if self.total else 0.0

    def line(self) -> str:
        """The current state as one line."""
        elapsed = self._clock() - self._start
        rate = (self.n - self._initial) / elapsed if elapsed > 0 else 0.0
        if self.total:
            text = f"{self.desc}: {self.n:g}/{self.total:g} {self.unit} ({self._percent():.0f}%)"
        else:
            text = f"{self.desc}: {self.n:g} {self.unit}"
        text += f", {rate:.3g} {self.unit}/s, {_duration(elapsed)} elapsed"
        if self.total and rate > 0 and self.n < self.total:
            text += f", ETA {_duration((self.total - self.n) / rate)}"
        if self._postfix:
            text += ", " + ", ".join(f"{k} {v}" for k, v in self._postfix.items())
        return text

    def _emit(self) -> None:
        file = self._file or sys.stderr
        file.write(shown_text(self.line()) + "\n")
        file.flush()
        self._printed += 1
        self._last, self._last_n = self._clock(), self.n

    def update(self, n: float = 1) -> None:
        self.n += n
        now = self._clock()
        percent_due = bool(self.total) and self._percent() >= self._next_percent
        if percent_due:
            self._next_percent = self._percent() // PROGRESS_PERCENT * PROGRESS_PERCENT + PROGRESS_PERCENT
        quiet = self._period / 3
        if now - self._start < quiet or now - self._last < quiet:
            return
        if percent_due or now - self._last >= self._period:
            self._emit()

    def set_postfix(self, ordered_dict: dict[str, Any] | None = None, refresh: bool = True, **kwargs: Any) -> None:
        self._postfix = {**(ordered_dict or {}), **kwargs}

    def close(self) -> None:
        if not self._closed and self._printed and self.n != self._last_n:
            self._emit()
        self._closed = True

    def __iter__(self):
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __enter__(self) -> ProgressLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
