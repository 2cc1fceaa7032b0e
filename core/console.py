"""The one owner of text shown in the terminal.

Every command prints through :func:`make_console`: a ``rich`` console on which no string is ever read as markup,
emoji code or highlight (a model answer ``[/]``, a path ``[bold]x`` or a group ``:smile:`` prints as written), and
whose control characters (ESC, BEL, ...) are shown as escapes (``\\x1b``) instead of reaching the terminal.  Our own
styling is built from :func:`styled` pieces, never from markup strings.  On a terminal the console wraps at its
width; in logs and pipes it does not wrap at all (rich would otherwise fold long paths at 80 columns) and prints no
colour codes.  :func:`print_error` is the ``error: ...`` line of every command.
"""

from __future__ import annotations

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


def progress_bar(iterable: Any = None, *, enabled: bool = True, **kwargs: Any):
    """A ``tqdm`` progress bar on stderr, drawn only when stderr is a terminal and ``enabled`` (logs and pipes get
    no bar lines; ``TQDM_DISABLE=1`` turns every bar off). Every command's progress goes through this."""
    from tqdm import tqdm

    return tqdm(iterable, disable=None if enabled else True, **kwargs)
