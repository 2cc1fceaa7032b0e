"""The authors' own reading of a model preset's answer (issue 51): how each model's published grounding code turns
the model's text into a point, and that point into pixels of the screenshot.

``gui-agent eval --preset NAME`` scores with this reading by default (``--reading authors``); the project's own
tolerant parsers (:mod:`core.parsers`, chosen by ``Preset.parser``) stay available as ``--reading tolerant``.
A preset without an entry in :data:`AUTHORS` reads the same in both modes.

Each rule names its source (repo @ commit, file:lines; docs/presets.md "Authors' reading" lists them). The code
here is this project's own: model text is untrusted, so nothing is ``eval()``-ed (where a script evaluates the
answer as Python, :func:`core.parsers.parse_literal` reads the literal it would give), every regex is bounded, and
a failure is a :class:`~core.parsers.ParseResult` with its reason, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.geometry import ImageGeometry
from core.parsers import (
    REFUSAL_ACTION,
    ParsedAction,
    ParseResult,
    _guarded,
    parse_action,
    parse_literal,
)

#: The two ways ``eval --preset`` reads answers: the authors' code (default) or the project's tolerant parsers.
READINGS: tuple[str, ...] = ("authors", "tolerant")
DEFAULT_READING = "authors"
#: Longest answer the authors' readings look at (every model here answers in far less).
MAX_CHARS = 65_536
#: Python's ``int()`` refuses a decimal string longer than this (``sys.int_info.default_max_str_digits``).
_MAX_INT_DIGITS = 4300

Point = tuple[float, float]


@dataclass(frozen=True)
class Reading:
    """One preset's reading: ``parse`` (text -> :class:`ParseResult`, numbers in the preset's frame), ``source``
    (where it was read), and ``to_original`` (the authors' own arithmetic from that frame to ORIGINAL pixels;
    None: :meth:`core.geometry.ImageGeometry.point`)."""

    parse: Callable[[str], ParseResult]
    source: str
    to_original: Callable[[Point, ImageGeometry], Point] | None = None


class _Wrong(ValueError):
    """The authors' code rejects the answer (wrong format): the reason."""


def _click(fmt: str, x: float, y: float, raw: dict[str, Any]) -> ParseResult:
    return ParseResult(ok=True, format=fmt, actions=(ParsedAction(action="click", point=(float(x), float(y)),
                                                                  fmt=fmt, raw=raw),))


def _refusal(fmt: str, answer: str) -> ParseResult:
    return ParseResult(ok=True, format=fmt, actions=(ParsedAction(action=REFUSAL_ACTION, fmt=fmt,
                                                                  raw={"refusal": answer[:256]}),))


def _guard(fmt: str, fn: Callable[[str], ParseResult]) -> Callable[[str], ParseResult]:
    """``fn`` run on bounded input, every failure a failed :class:`ParseResult` (:func:`core.parsers._guarded`)."""

    def run(text: str, _strict: bool) -> ParseResult:
        try:
            return fn(text)
        except _Wrong as e:
            return ParseResult(ok=False, format=fmt, error=f"{fmt} (authors' reading): {e}")

    return lambda text: _guarded(fmt, run, text, False, MAX_CHARS)


_PY_INT = re.compile(r"\s*[-+]?[0-9]+(?:_[0-9]+)*\s*")


def _py_int(s: str) -> int:
    """``int(s)`` as Python reads a string (surrounding whitespace, a sign, ``_`` between digits), without its
    unbounded cases: :class:`_Wrong` when Python's ``int()`` would raise."""
    if len(s) > _MAX_INT_DIGITS or _PY_INT.fullmatch(s) is None:
        raise _Wrong(f"{s.strip()[:40]!r} is not an integer")
    return int(s)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float))  # bool too: Python computes with True / False as 1 / 0


def _python_value(text: str) -> Any:
    """The value ``eval(text)`` gives when ``text`` is a literal (a bare ``1, 2`` is a tuple, as in Python);
    :class:`_Wrong` otherwise (an expression, a name, text around it: ``eval`` raises there too, except for
    expressions, which this reading never computes)."""
    body = text.strip()
    for candidate in (body, f"({body})"):
        try:
            return parse_literal(candidate)
        except (ValueError, RecursionError):
            continue
    raise _Wrong("the answer is not a Python literal")


# ------------------------------------------------------------------------------------------------ mappings


def _int_of_grid(p: Point, g: ImageGeometry) -> Point:
    """A 0-1000 point k -> ``int(k / 1000 * W)`` pixels (truncated, as the authors' code does)."""
    return float(int(p[0] / 1000 * g.width)), float(int(p[1] / 1000 * g.height))


# ------------------------------------------------------------------------------------------------ GELab-Zero

_GELAB_SOURCE = "stepfun-ai/gelab-zero @ 19465cf"
_THINK_TAG = re.compile(r"<\s{0,64}/?THINK\s{0,64}>", re.IGNORECASE)
#: GELab-Zero's front end (copilot_front_end/mobile_action_helper.py:315) -> this project's action names.
_GELAB_ACTIONS = {"CLICK": "click", "LONGPRESS": "long_press", "TYPE": "type", "SWIPE": "swipe", "AWAKE": "open_app",
                  "WAIT": "wait", "COMPLETE": "complete", "INFO": None, "ABORT": REFUSAL_ACTION}


def _gelab_fields(text: str) -> dict[str, Any]:
    """``parser_0920_summary.py`` ``str2action`` (lines 244-302): THINK tags normalised, the key:value part after
    ``</THINK>`` split on tabs, a later key overwriting an earlier one, a ``point`` key's value ``x,y`` / ``x y``
    read as two integers (anything else: the parser raises)."""
    s = text.strip().replace("<TINK>", "<THINK>").replace("</TINK>", "</THINK>")
    s = _THINK_TAG.sub(lambda m: "</THINK>" if "/" in m.group() else "<THINK>", s)
    kv = s.split("</THINK>")[1] if "<THINK>" in s and "</THINK>" in s else s
    fields: dict[str, Any] = {}
    for item in kv.split("\t"):
        key, sep, value = item.strip().partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if "point" in key:
            coords = value.replace(",", " ").split()
            if len(coords) < 2:
                raise _Wrong(f"{key}: expected 2 coordinates, got {len(coords)}")
            fields[key] = (_py_int(coords[0]), _py_int(coords[1]))
        else:
            fields[key] = value
    return fields


def _parse_gelab(text: str) -> ParseResult:
    """GELab-Zero: its parser's fields, then its front end's checks (``model_act2front_act``,
    ``mobile_action_helper.py:329-340``): an ``action`` (or ``action_type``) among its names, exactly as written,
    and an ``explain`` field; a CLICK needs its ``point``."""
    fields = _gelab_fields(text)
    word = fields.get("action", fields.get("action_type"))
    if word is None:
        raise _Wrong("no action field")
    if word not in _GELAB_ACTIONS:
        raise _Wrong(f"invalid action type {str(word)[:40]!r}")
    if "explain" not in fields:
        raise _Wrong("no explain field")
    name = _GELAB_ACTIONS[word]
    if name is None:
        raise _Wrong("INFO asks the user a question: no point")
    if name == REFUSAL_ACTION:
        return _refusal("gelab", text.strip())
    point = fields.get("point")
    if name in ("click", "long_press"):
        if point is None:
            raise _Wrong(f"{word} has no point")
        return ParseResult(ok=True, format="gelab", actions=(ParsedAction(
            action=name, point=(float(point[0]), float(point[1])), fmt="gelab", raw={"fields": fields}),))
    if name == "type" and "value" not in fields:
        raise _Wrong("TYPE has no value")
    return ParseResult(ok=True, format="gelab", actions=(ParsedAction(
        action=name, text=str(fields.get("value", "")) or None if name in ("type", "open_app") else None,
        fmt="gelab", raw={"fields": fields}),))


# ------------------------------------------------------------------------------------------------ UGround

def _parse_uground(text: str) -> ParseResult:
    """UGround: ``x_ratio, y_ratio = eval(generated_text)``: a literal of exactly two numbers (a bare ``x, y``
    is a tuple); anything else raises there and the row is left out of the answers (here: unparseable)."""
    value = _python_value(text)
    if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(_is_number(v) for v in value):
        raise _Wrong("the answer is not two numbers")
    return _click("point", value[0], value[1], {"answer": text.strip()[:256]})


# ------------------------------------------------------------------------------------------------ GUI-Owl-1.5

_OWL_PAREN = re.compile(r"\((\d+),\s*(\d+)\)")
_OWL_BRACKET = re.compile(r"\[(\d+), (\d+)\]")


def _parse_guiowl(text: str) -> ParseResult:
    """GUI-Owl-1.5's script: every ``(x, y)`` of the answer (integers, any spaces after the comma), else every
    ``[x, y]`` (one space after the comma, exactly), wherever they stand; the last one is the answer. Without one
    its point is ``[0, 0]``: a click at the origin here, except a ``terminate`` with status failure (the refusal
    its OSWorld-G prompt asks for), which stays a refusal (the script scores its ``[0, 0]`` as the refusal on
    refusal rows)."""
    matches = _OWL_PAREN.findall(text) or _OWL_BRACKET.findall(text)
    if matches:
        x, y = matches[-1]
        if len(x) <= _MAX_INT_DIGITS and len(y) <= _MAX_INT_DIGITS:
            return _click("guiowl15", int(x), int(y), {"answer": text.strip()[:256]})
    called = parse_action(text, fmt="tool_call")
    if called.ok and called.action is not None and called.action.action == "terminate" \
            and (called.action.status or "").lower() == "failure":
        return _refusal("guiowl15", text.strip())
    return _click("guiowl15", 0, 0, {"answer": text.strip()[:256], "fallback": "no coordinate: [0, 0]"})


AUTHORS: dict[str, Reading] = {
    "step_gui": Reading(
        _guard("gelab", _parse_gelab),
        f"{_GELAB_SOURCE} copilot_tools/parser_0920_summary.py:244-302 (str2action), "
        "copilot_front_end/mobile_action_helper.py:329-340 (action, explain), :361-362 (int(k / 1000 * W))",
        _int_of_grid),
    "uground": Reading(
        _guard("point", _parse_uground),
        "OSU-NLP-Group/UGround @ 3a9b9f2 grounding/uground_qwen2vl.py:67-68 (eval, two numbers), :73-74 "
        "(int(x_ratio / 1000 * width))",
        _int_of_grid),
    "guiowl15": Reading(
        _guard("guiowl15", _parse_guiowl),
        "X-PLUG/MobileAgent @ 11cea57 Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py:382-383 "
        "(a 1000 x 1000 frame), :388-411 (the two regexes, the last match, [0, 0])"),
}


def authors_reading(preset: str) -> Reading | None:
    """The authors' reading of ``preset``'s answers; None when it has none of its own (its parser is the authors'
    format already)."""
    return AUTHORS.get(preset)


def read_answer(text: str, preset: str, parser: str, reading: str) -> tuple[ParseResult, Reading | None]:
    """``text`` parsed as ``reading`` says (``authors``: the preset's :data:`AUTHORS` entry when it has one, else
    ``parser``; ``tolerant``: ``parser``), and the :class:`Reading` used (None: the tolerant parser)."""
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}; known: {', '.join(READINGS)}")
    chosen = authors_reading(preset) if reading == "authors" else None
    if chosen is None:
        return parse_action(text, fmt=parser), None
    return chosen.parse(text), chosen


__all__ = ["AUTHORS", "DEFAULT_READING", "READINGS", "Reading", "authors_reading", "read_answer"]
