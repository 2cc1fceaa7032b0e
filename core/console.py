"""The rich console every command prints through: the real terminal width on a terminal; in logs and pipes
no wrapping at all (rich would otherwise fold long paths at 80 columns) and no colour codes."""

from __future__ import annotations

import sys

#: Width used when the output is not a terminal: wide enough that no table or path is folded.
LOG_WIDTH = 10_000


def make_console(stderr: bool = False):
    """A ``rich.console.Console`` on stdout (or stderr) that only wraps on a terminal."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=LOG_WIDTH, soft_wrap=True, no_color=True, highlight=False)
