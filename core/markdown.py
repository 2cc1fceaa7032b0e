"""The one owner of untrusted text written into Markdown (reports, comparisons, the demo's report).

Rules (CommonMark 0.31 and GitHub Flavored Markdown 0.29 tables):

* :func:`md_text`: every ASCII punctuation character that can start Markdown syntax, HTML or an entity is
  backslash-escaped (CommonMark §2.4: any ASCII punctuation may be), so ``<img onerror=...>`` prints as text,
  ``*x*`` stays literal and ``|`` cannot end a table cell; a line break is shown as ``\\n`` (so it cannot start a
  new row or block) and any other control character but tab as ``\\xNN``, as in the terminal.
* :func:`md_code`: a code span whose backtick fence is longer than any backtick run inside (CommonMark §6.1), so
  a backtick in model text cannot end the span; ``|`` is escaped (GFM §4.10: a pipe ends a cell even inside
  code); line breaks are shown as ``\\n``.
* :func:`md_table`: a table whose plain-string cells go through :func:`md_text`; cells already built as
  Markdown (:class:`Md`, e.g. from :func:`md_code`) are kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from core.console import shown_text

#: Characters escaped by :func:`md_text`: every one that can open emphasis, code, links, images, HTML, entities,
#: strikethrough, math, autolinks or a table cell; the others start nothing inside a line.
#: ``_`` between two letters or digits opens no emphasis (CommonMark §6.2), so ``qwen2_5_vl`` stays readable.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>&|~!#{}$@]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
#: What starts a block at the beginning of the text (a list item, a thematic break or setext underline, an
#: ordered list item): its first character is escaped.
_LIST_START = re.compile(r"^(?=[-+*][ \t]|[-+*]$|[-=*_][-=*_ \t]*$)")
_ORDERED_START = re.compile(r"^(\d+)([.)])(?=[ \t]|$)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BACKTICKS = re.compile(r"`+")


class Md(str):
    """A string that already is Markdown (built by this module): :func:`md_table` keeps it as it is."""


def _one_kind_of_break(value: Any, replacement: str) -> str:
    """``value`` as text with every line break replaced and other control characters escaped (``\\xNN``)."""
    return shown_text(_LINE_BREAK.sub(lambda _: replacement, "" if value is None else str(value)))


def md_text(value: Any) -> Md:
    """``value`` (None: empty) as Markdown inline text that renders exactly as written, on one line."""
    text = _MD_SPECIAL.sub(r"\\\1", _one_kind_of_break(value, "\n"))
    text = _ORDERED_START.sub(r"\1\\\2", _LIST_START.sub("\\\\", text))
    return Md(text.replace("\n", "\\n"))


def md_code(value: Any) -> Md:
    """``value`` as an inline code span that nothing inside can end, safe in a table cell."""
    text = _one_kind_of_break(value, "\\n").replace("|", "\\|")
    if not text:
        return Md("")
    fence = "`" * (max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.strip()) else ""
    return Md(f"{fence}{pad}{text}{pad}{fence}")


def md_cell(value: Any) -> Md:
    """A table cell: :class:`Md` as it is, anything else through :func:`md_text`."""
    return value if isinstance(value, Md) else md_text(value)


def md_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> Md:
    """A GitHub-flavoured Markdown table; every row has exactly the header's cells (cells escaped by
    :func:`md_cell`; a short row is padded with empty cells, a long one is an error)."""
    width = len(header)
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        if len(row) > width:
            raise ValueError(f"table row has {len(row)} cells, the header {width}")
        cells = [md_cell(c) for c in row] + [Md("")] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
    return Md("\n".join(lines))


__all__ = ["Md", "md_cell", "md_code", "md_table", "md_text"]
