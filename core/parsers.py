"""Parse model answers into actions: GUI-R1 ``<answer>`` lists, Qwen ``<tool_call>`` JSON, Aguvis/pyautogui
code and plain JSON (:data:`FORMATS`, detected by ``fmt="auto"``), and the public models' own formats chosen by name
(:data:`MODEL_FORMATS`, used by :mod:`core.presets`): UI-TARS calls, OS-Atlas actions and boxes, Qwen grounding
JSON (``bbox_2d`` / ``point_2d``), bare ``(x, y)`` points (UGround, GTA1), SeeClick points / boxes, and the 2025-26
grounding models' answers: ``[x1,y1,x2,y2]`` boxes (GUI-G2, UI-Venus-Ground), ``[x,y]`` points (UI-Venus-1.5),
InfiGUI-G1 ``point_2d`` lists, MAI-UI ``<answer>{"coordinate": ..}</answer>`` and GELab-Zero ``key:value`` fields;
their refusals are the action :data:`REFUSAL_ACTION`.

Model output is untrusted.  Every public parser here returns a :class:`ParseResult` and never raises or
executes anything: literals are read by a small bounded parser of our own (:func:`parse_literal`), code by
``ast.parse`` on short lines whose argument nodes must be literals, tags are found with ``str.find``, and
every regex is a single bounded pattern without nested quantifiers.  Input over ``max_chars`` (1 MB by
default) is rejected up front, and payloads inside tags are bounded again (:data:`MAX_PAYLOAD_CHARS`).

Coordinates in a :class:`ParsedAction` are the numbers exactly as the model wrote them (the model's frame:
resized pixels for Qwen2.5-VL / GUI-R1, 0-1000 for Qwen3-VL, fractions for Aguvis);
:meth:`ParsedAction.to_action` converts them to ORIGINAL pixels.

This module is long (over 500 lines) on purpose: the four format parsers share one bounded literal reader and one
set of named tolerances, and keeping them together keeps every untrusted-input path auditable in one file.

``strict=True`` accepts only the canonical form of each format; any leniency the parser needed is listed in
``ParseResult.tolerances`` and, in strict mode, turns the result into a failure naming it.
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Any
from collections.abc import Iterable

from pydantic import ValidationError

from core.actions import (
    ACTION_NAMES,
    GUIR1_NO_TARGET,
    NO_INPUT_TEXT,
    POINT_ACTIONS,
    SCROLL_DIRECTIONS,
    Action,
    ActionArgs,
    from_mobile_use,
    swipe_to_scroll,
)
from core.console import quoted
from core.geometry import Frame, ImageGeometry

#: Formats ``fmt="auto"`` detects; the public models' formats below are chosen by name (a model preset).
FORMATS: tuple[str, ...] = ("guir1", "tool_call", "pyautogui", "json")
MODEL_FORMATS: tuple[str, ...] = ("uitars", "os_atlas", "qwen_grounding", "point", "seeclick", "box", "venus",
                                   "infigui", "mai_ui", "gelab")
#: Longest payload (inside <answer>, <tool_call>, a JSON object, one line of code) the parsers look at.
MAX_PAYLOAD_CHARS = 65_536
#: Deepest nesting of lists/dicts accepted in a payload.
MAX_DEPTH = 16
#: GUI-R1's "no point" placeholder.
NO_POINT = GUIR1_NO_TARGET

# Every tolerance name a parser may report.
TOL_WHITESPACE = "whitespace around tags"
TOL_DOUBLE_QUOTES = "double quotes"
TOL_SINGLE_QUOTES = "single quotes"
TOL_JSON_LITERALS = "json literals"
TOL_PY_LITERALS = "python literals"
TOL_FLOAT_POINT = "float point"
TOL_NEGATIVE_POINT = "negative point"
TOL_PRETTY = "pretty-printed"
TOL_NO_THINK = "no <think> tag"
TOL_DICT_ANSWER = "answer is a dict"
TOL_ACTION_CASE = "action name case"
TOL_BOX_POINT = "box as point"
TOL_STRING_POINT = "point as string"
TOL_KEY_ALIAS = "key alias"
TOL_NO_CLOSE_TAG = "missing closing tag"
TOL_ARGS_STRING = "arguments as string"
TOL_CODE_FENCE = "code fence"
TOL_SURROUNDING_TEXT = "surrounding text"
TOL_MISSING_INPUT_TEXT = "missing input_text"


# --------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ParsedAction(ActionArgs):
    """One action as the model wrote it.

    ``action`` is the name lower-cased (GUI-R1 name such as ``click`` / ``close/delete``, or the tool's own
    name such as ``system_button`` for tool calls); ``point`` / ``end_point`` (and the other
    :class:`~core.actions.ActionArgs`) are raw numbers in the model's frame; ``fmt`` is the format it was parsed
    from; ``raw`` the parsed payload (dict) it came from.
    """

    action: str
    fmt: str = "guir1"
    raw: dict = field(default_factory=dict, compare=False, hash=False)

    def to_action(self, geometry: ImageGeometry, frame: Frame | str, *, swipe_as_scroll: bool = True) -> Action:
        """The :class:`~core.actions.Action` in ORIGINAL pixels; ``frame`` is the frame the model answered in.

        A swipe becomes a ``scroll`` with its direction when ``swipe_as_scroll`` (GUI-R1 / AndroidControl
        convention). Raises ``ValueError`` naming the field on impossible input.
        """
        pt = _to_original(self.point, geometry, frame, "point")
        end = _to_original(self.end_point, geometry, frame, "end_point")
        try:
            if self.fmt == "tool_call":
                return _tool_call_to_action(self, pt, end, swipe_as_scroll)
            name = self.action
            if name == "swipe" and swipe_as_scroll and pt is not None and end is not None:
                return Action(type="scroll", direction=swipe_to_scroll(pt, end))
            if name == "system_button":
                return from_mobile_use({"action": "system_button", "button": self.button or ""})
            if name == "terminate" and self.status is not None:
                return Action(type="complete" if self.status.lower() == "success" else "impossible")
            return Action(type=name, point=pt, end_point=end, text=self.text, direction=self.direction,
                          button=self.button, status=self.status, duration=self.duration)
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(p) for p in err["loc"]) or "action"
            raise ValueError(f"field '{loc}': {err['msg'].removeprefix('Value error, ')}") from None


@dataclass(frozen=True)
class ParseResult:
    """Outcome of parsing one model answer. When ``ok`` is False, ``actions`` is empty and ``error`` says why."""

    ok: bool
    format: str
    actions: tuple[ParsedAction, ...] = ()
    thought: str | None = None
    error: str | None = None
    tolerances: tuple[str, ...] = ()

    @property
    def action(self) -> ParsedAction | None:
        return self.actions[0] if self.actions else None


class _ParseError(ValueError):
    """Internal: a reason to fail, caught by the public parsers."""


# --------------------------------------------------------------------------------------------- numbers

#: Longest numeric literal read (sign, digits, point and exponent together).
MAX_NUMBER_CHARS = 64
#: What ends a number in model text: whitespace and the punctuation around coordinates and literals.
_SEPARATORS = r"\s,;:=()\[\]{}<>'\"`|"
#: A run of characters between separators (one more than a number may have, so an overlong one is seen).
_RUN = re.compile(rf"[^{_SEPARATORS}]{{1,{MAX_NUMBER_CHARS + 1}}}")
#: A whole decimal literal, the only spelling of a number any parser accepts.
_DECIMAL = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_INTEGER = re.compile(r"[-+]?[0-9]+")
_DIGIT = re.compile(r"[0-9]")


def _read_number(token: str, name: str) -> int | float:
    """``token`` (a run of text between separators) as one whole decimal literal: an ``int`` when written as an
    integer, else a finite ``float``. :class:`_ParseError` naming ``name`` when it is anything else (hex, two
    numbers glued, a unit, beyond the float range): a number is never read in pieces."""
    if len(token) > MAX_NUMBER_CHARS:
        raise _ParseError(f"{name}: number too long (over {MAX_NUMBER_CHARS} characters)")
    if _DECIMAL.fullmatch(token) is None:
        raise _ParseError(f"{name}: {token[:40]!r} is not a decimal number")
    if _INTEGER.fullmatch(token):
        return int(token)
    value = float(token)
    if not math.isfinite(value):
        raise _ParseError(f"{name}: {token[:40]!r} is not finite (beyond the float range)")
    return value


def _number_at(s: str, pos: int, name: str) -> tuple[int | float, int] | None:
    """The number that starts at ``pos`` (its whole run up to a separator) and where it ends; None when the run
    there holds no digit (a word); :class:`_ParseError` when it holds one but is not a whole decimal literal."""
    m = _RUN.match(s, pos)
    if m is None or _DIGIT.search(m.group()) is None:
        return None
    return _read_number(m.group(), name), m.end()


def _read_numbers(text: str, name: str) -> list[int | float]:
    """Every number of a short coordinate text, each read whole (:func:`_read_number`). Words without a digit are
    skipped (surrounding text); a run with a digit that is no decimal literal (``0x1A``, ``12px``, ``1.2.3``) is a
    :class:`_ParseError`, never split into extra numbers."""
    return [_read_number(m.group(), name) for m in _RUN.finditer(text) if _DIGIT.search(m.group())]


# --------------------------------------------------------------------------------------------- literals

_WS = re.compile(r"\s*")
# one quoted string: a star over two disjoint single-character alternatives (no nested quantifier)
_SQ_STRING = re.compile(r"'(?:[^'\\]|\\.)*'", re.S)
_DQ_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NAME = re.compile(r"[A-Za-z_]{1,16}")
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", "'": "'", '"': '"'}
_NAMES = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body

    def one(m: re.Match) -> str:
        s = m.group(1)
        if len(s) == 5:
            return chr(int(s[1:], 16))
        return _ESCAPES.get(s, "\\" + s)

    return _ESCAPE.sub(one, body)


class _LiteralParser:
    """Recursive-descent reader of Python/JSON literals (dict, list, tuple, str, number, bool, null).

    Records in ``features`` which quote styles and literal spellings were used, so callers can report
    tolerances. Bounded: depth <= ``max_depth``, numbers read whole by :func:`_read_number` (at most
    :data:`MAX_NUMBER_CHARS`), no evaluation of anything.
    """

    def __init__(self, s: str, max_depth: int = MAX_DEPTH):
        self.s, self.max_depth, self.features = s, max_depth, set()

    def parse_prefix(self, pos: int = 0) -> tuple[Any, int]:
        """Parse one value starting at ``pos``; return (value, end position after trailing whitespace)."""
        value, pos = self._value(self._ws(pos), 0)
        return value, self._ws(pos)

    def _ws(self, pos: int) -> int:
        return _WS.match(self.s, pos).end()  # type: ignore[union-attr]

    def _value(self, pos: int, depth: int) -> tuple[Any, int]:
        s = self.s
        if pos >= len(s):
            raise _ParseError("unexpected end of literal")
        c = s[pos]
        if c in "[({":
            if depth >= self.max_depth:
                raise _ParseError("literal nested too deeply")
            return self._container(pos, depth + 1)
        if c == "'" or c == '"':
            m = (_SQ_STRING if c == "'" else _DQ_STRING).match(s, pos)
            if m is None:
                raise _ParseError("unterminated string")
            body = m.group(0)[1:-1]
            self.features.add(("dq" if c == '"' else "sq", "'" in body or '"' in body))
            return _unescape(body), m.end()
        if c in "+-." or c.isdigit():
            number = _number_at(s, pos, f"number at {pos}")
            if number is not None:
                return number
        m = _NAME.match(s, pos)
        if m is not None and m.group(0) in _NAMES:
            self.features.add("json_lit" if m.group(0).islower() else "py_lit")
            return _NAMES[m.group(0)], m.end()
        raise _ParseError(f"unexpected character {c!r} at {pos}")

    def _container(self, pos: int, depth: int) -> tuple[Any, int]:
        s = self.s
        opener = s[pos]
        closer = {"[": "]", "(": ")", "{": "}"}[opener]
        items: list[Any] = []
        pairs: dict[Any, Any] = {}
        pos = self._ws(pos + 1)
        while True:
            if pos >= len(s):
                raise _ParseError("unterminated container")
            if s[pos] == closer:
                pos += 1
                break
            if opener == "{":
                key, pos = self._value(pos, depth)
                if isinstance(key, (dict, list)):
                    raise _ParseError("dict key is not hashable")
                pos = self._ws(pos)
                if pos >= len(s) or s[pos] != ":":
                    raise _ParseError("expected ':' in dict")
                value, pos = self._value(self._ws(pos + 1), depth)
                pairs[key] = value
            else:
                value, pos = self._value(pos, depth)
                items.append(value)
            pos = self._ws(pos)
            if pos < len(s) and s[pos] == ",":
                pos = self._ws(pos + 1)
            elif pos < len(s) and s[pos] != closer:
                raise _ParseError(f"expected ',' or {closer!r} at {pos}")
        if opener == "{":
            return pairs, pos
        return (tuple(items) if opener == "(" else items), pos


def parse_literal(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Read one Python or JSON literal (whole string) safely; raises ``ValueError`` when it is not one."""
    if len(text) > MAX_PAYLOAD_CHARS:
        raise ValueError("literal too long")
    p = _LiteralParser(text, max_depth)
    value, end = p.parse_prefix()
    if end != len(text):
        raise ValueError(f"trailing text after literal at {end}")
    return value


def _quote_tolerances(features: set, canonical: str) -> list[str]:
    """Tolerances implied by the literal features, given the canonical quote style ('sq' or 'dq')."""
    tol = []
    for f in features:
        if isinstance(f, tuple):
            style, has_quote_inside = f
            if style != canonical and not has_quote_inside:  # repr/json would have used the other quote
                tol.append(TOL_DOUBLE_QUOTES if style == "dq" else TOL_SINGLE_QUOTES)
    if canonical == "sq" and "json_lit" in features:
        tol.append(TOL_JSON_LITERALS)
    if canonical == "dq" and "py_lit" in features:
        tol.append(TOL_PY_LITERALS)
    return tol


def _single_literal(payload: str, what: str, kind: str, canonical: str, tol: list[str]) -> Any:
    """``payload`` (already stripped and length-checked) read as exactly one literal; its quote tolerances go to
    ``tol`` (``canonical``: 'sq' or 'dq'). Raises :class:`_ParseError` naming ``what`` when it is empty or is not
    a single ``kind``."""
    if not payload:
        raise _ParseError(f"empty {what}")
    p = _LiteralParser(payload)
    value, end = p.parse_prefix()
    if end != len(payload):
        raise _ParseError(f"{what} is not a single {kind}")
    tol.extend(_quote_tolerances(p.features, canonical))
    return value


# --------------------------------------------------------------------------------------------- helpers


def _to_original(p: tuple[float, float] | None, geometry: ImageGeometry, frame: Frame | str,
                 name: str) -> tuple[float, float] | None:
    if p is None:
        return None
    if not all(math.isfinite(v) for v in p):
        raise ValueError(f"field '{name}': coordinate {list(p)} is not finite")
    return geometry.point(p, frame, Frame.ORIGINAL)


def _num(v: Any) -> float | None:
    """A literal's number as a finite float; None when it is no number; :class:`_ParseError` when it is not finite
    or beyond the float range (an int of 400 digits)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        raise _ParseError("a number beyond the float range") from None
    if not math.isfinite(f):
        raise _ParseError(f"number {f} is not finite")
    return f


def _point(value: Any, tol: list[str], name: str, *, integer: bool = True) -> tuple[float, float] | None:
    """A point (x, y) from a 2-list, a 4-list box (its centre) or a short string of numbers.

    ``integer``: the format asks for integer coordinates, so a fractional one is a tolerance.
    """
    if value is None:
        return None
    if isinstance(value, str):
        if len(value) > 64:
            raise _ParseError(f"{name} string too long")
        value = _read_numbers(value, name)
        tol.append(TOL_STRING_POINT)
    if isinstance(value, dict) or not isinstance(value, (list, tuple)):
        raise _ParseError(f"{name} is not a list of numbers")
    nums = [_num(v) for v in value]
    if any(n is None for n in nums) or len(nums) not in (2, 4):
        raise _ParseError(f"{name} must be [x, y]")
    if len(nums) == 4:
        tol.append(TOL_BOX_POINT)
        nums = [(nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2]  # type: ignore[operator]
    x, y = nums[0], nums[1]
    assert x is not None and y is not None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise _ParseError(f"{name} is not finite")
    if (x, y) == NO_POINT:
        return None
    if integer and any(isinstance(v, float) and not v.is_integer() for v in value):
        tol.append(TOL_FLOAT_POINT)
    if x < 0 or y < 0:
        tol.append(TOL_NEGATIVE_POINT)
    return x, y


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list, tuple)):
        raise _ParseError("text field is not a string")
    s = str(value)
    return None if s.strip().lower() == NO_INPUT_TEXT else s


def _finish(fmt: str, actions: list[ParsedAction], thought: str | None, tol: Iterable[str],
            strict: bool) -> ParseResult:
    tolerances = tuple(dict.fromkeys(tol))
    if not actions:
        return ParseResult(ok=False, format=fmt, thought=thought, error="no action", tolerances=tolerances)
    if strict and tolerances:
        return ParseResult(ok=False, format=fmt, thought=thought,
                           error=f"strict: needed tolerance '{tolerances[0]}'", tolerances=tolerances)
    return ParseResult(ok=True, format=fmt, actions=tuple(actions), thought=thought, tolerances=tolerances)


def _guarded(fmt: str, fn, text: str, strict: bool, max_chars: int) -> ParseResult:
    """Run a format parser with the size limit and turn every exception into a failed result."""
    try:
        if not isinstance(text, str):
            return ParseResult(ok=False, format=fmt, error=f"input is {type(text).__name__}, not str")
        if len(text) > max_chars:
            return ParseResult(ok=False, format=fmt, error=f"too long ({len(text)} > {max_chars} chars)")
        return fn(text, strict)
    except _ParseError as e:
        return ParseResult(ok=False, format=fmt, error=str(e))
    except (RecursionError, MemoryError):
        return ParseResult(ok=False, format=fmt, error="input too complex")
    except Exception as e:  # noqa: BLE001 - parsing never raises
        return ParseResult(ok=False, format=fmt, error=f"{type(e).__name__}: {e}"[:200])


def _between(text: str, open_tag: str, close_tag: str, start: int = 0) -> tuple[str, int, bool] | None:
    """(content, end index, closed) of the first ``open_tag``...``close_tag`` from ``start``; None without it."""
    i = text.find(open_tag, start)
    if i < 0:
        return None
    j = text.find(close_tag, i + len(open_tag))
    if j < 0:
        return text[i + len(open_tag):], len(text), False
    return text[i + len(open_tag):j], j + len(close_tag), True


# --------------------------------------------------------------------------------------------- dict actions

_KEYS = {
    "action": ("action", "action_type", "type", "name"),
    "point": ("point", "coordinate", "coord", "position", "point_2d", "start_point", "start_coordinate"),
    "end_point": ("end_point", "coordinate2", "end_coordinate", "to_coord"),
    "text": ("input_text", "text", "value", "content", "app_name", "key", "keys"),
}


def _field(d: dict, kind: str, tol: list[str], canonical: str | None) -> Any:
    for key in _KEYS[kind]:
        if key in d:
            if canonical is not None and key != canonical:
                tol.append(TOL_KEY_ALIAS)
            return d[key]
    return None


def _action_from_dict(d: Any, fmt: str, tol: list[str]) -> ParsedAction:
    """A GUI-R1-style action dict -> ParsedAction (GUI-R1 keys are canonical for 'guir1')."""
    if not isinstance(d, dict):
        raise _ParseError("action is not a dict")
    if isinstance(d.get("arguments"), (dict, str)) and "name" in d:
        return _tool_call_action(d, tol)
    guir1 = fmt == "guir1"
    name = _field(d, "action", tol, "action" if guir1 else None)
    if not isinstance(name, str) or not name.strip():
        raise _ParseError("missing action name")
    action = name.strip().lower()
    if action != name.strip():
        tol.append(TOL_ACTION_CASE)
    if action not in ACTION_NAMES:
        raise _ParseError(f"unknown action {action[:40]!r}")
    point = _point(_field(d, "point", tol, "point" if guir1 else None), tol, "point", integer=guir1)
    end = _point(_field(d, "end_point", tol, None), tol, "end_point", integer=guir1)
    raw_text = _field(d, "text", tol, "input_text" if guir1 else None)
    if guir1 and "input_text" not in d and raw_text is None:
        tol.append(TOL_MISSING_INPUT_TEXT)
    if isinstance(raw_text, (list, tuple)) and action == "hotkey":
        raw_text = "+".join(str(k) for k in raw_text)
    text = _text(raw_text)
    direction = d.get("direction")
    if action == "scroll":
        direction = direction if isinstance(direction, str) else text
        text = None
        if not isinstance(direction, str) or direction.strip().lower() not in SCROLL_DIRECTIONS:
            raise _ParseError(f"scroll direction must be one of {SCROLL_DIRECTIONS}, got {str(direction)[:40]!r}")
        direction = direction.strip().lower()
    elif direction is not None and not isinstance(direction, str):
        raise _ParseError("direction is not a string")
    if action in POINT_ACTIONS and point is None:
        raise _ParseError(f"action {action!r} needs a point")
    if action in ("type", "select", "open_app", "hotkey") and not text:
        raise _ParseError(f"action {action!r} needs input text")
    return ParsedAction(action=action, point=point, end_point=end, text=text, direction=direction,
                        button=_opt_str(d.get("button")), status=_opt_str(d.get("status")),
                        duration=_num(d.get("time", d.get("duration"))), fmt=fmt, raw=d)


def _opt_str(v: Any) -> str | None:
    return None if v is None or isinstance(v, (dict, list, tuple)) else str(v)


# --------------------------------------------------------------------------------------------- (a) GUI-R1


def _parse_guir1(text: str, strict: bool) -> ParseResult:
    tol: list[str] = []
    body = text.strip()
    found = _between(body, "<answer>", "</answer>")
    if found is None:
        raise _ParseError("no <answer> tag")
    content, _, closed = found
    if not closed:
        raise _ParseError("no </answer> tag")
    think = _between(body, "<think>", "</think>")
    thought = think[0].strip() if think is not None and think[2] else None
    if thought is None:
        tol.append(TOL_NO_THINK)
    if len(content) > MAX_PAYLOAD_CHARS:
        raise _ParseError(f"too long (answer of {len(content)} chars)")
    stripped = content.strip()
    if stripped != content:
        tol.append(TOL_WHITESPACE)
    if "\n" in stripped:
        tol.append(TOL_PRETTY)
    value = _single_literal(stripped, "answer", "literal", "sq", tol)
    if isinstance(value, dict):
        tol.append(TOL_DICT_ANSWER)
        value = [value]
    if not isinstance(value, list):
        raise _ParseError("answer is not a list")
    if not value:
        raise _ParseError("answer is an empty list")
    actions = [_action_from_dict(d, "guir1", tol) for d in value]
    return _finish("guir1", actions, thought, tol, strict)


def parse_guir1_answer(text: str, *, strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse ``<think>..</think><answer>[{'action': .., 'point': [x, y], 'input_text': ..}]</answer>``.

    Canonical: a Python-literal list of dicts with single quotes, integer points, ``[-100, -100]`` for no
    point, ``'no input text'`` for no text, the scroll direction in ``input_text``.
    """
    return _guarded("guir1", _parse_guir1, text, strict, max_chars)


# --------------------------------------------------------------------------------------------- (b) tool call

MOBILE_USE_ACTIONS = frozenset({"key", "click", "long_press", "swipe", "type", "system_button", "open", "wait",
                                "answer", "terminate"})
COMPUTER_USE_ACTIONS = frozenset({"key", "type", "mouse_move", "left_click", "left_click_drag", "right_click",
                                  "middle_click", "double_click", "triple_click", "scroll", "hscroll", "wait",
                                  "terminate", "answer"})
_TOOLS = {"mobile_use": MOBILE_USE_ACTIONS, "computer_use": COMPUTER_USE_ACTIONS}


def _tool_call_action(call: Any, tol: list[str]) -> ParsedAction:
    if not isinstance(call, dict):
        raise _ParseError("tool call is not an object")
    tool = call.get("name")
    if tool not in _TOOLS:
        raise _ParseError(f"unknown tool {str(tool)[:40]!r}")
    args = call.get("arguments")
    if isinstance(args, str):
        tol.append(TOL_ARGS_STRING)
        args_s = args.strip()
        if not args_s or len(args_s) > MAX_PAYLOAD_CHARS:
            raise _ParseError("arguments string is empty or too long")
        args, end = _LiteralParser(args_s).parse_prefix()
        if end != len(args_s):
            raise _ParseError("arguments string is not one object")
    if not isinstance(args, dict):
        raise _ParseError("arguments is not an object")
    name = args.get("action")
    if not isinstance(name, str):
        raise _ParseError("missing arguments.action")
    action = name.strip().lower()
    if action != name:
        tol.append(TOL_ACTION_CASE)
    if action not in _TOOLS[tool]:
        raise _ParseError(f"unknown action {action[:40]!r} for {tool}")
    point = _point(args.get("coordinate"), tol, "coordinate")
    end = _point(args.get("coordinate2"), tol, "coordinate2")
    if action in ("click", "long_press", "left_click", "right_click", "double_click", "triple_click",
                  "middle_click", "mouse_move", "left_click_drag") and point is None:
        raise _ParseError(f"action {action!r} needs a coordinate")
    if action == "swipe" and (point is None or end is None):
        raise _ParseError("swipe needs coordinate and coordinate2")
    keys = args.get("keys")
    text = _text(args.get("text")) if "text" in args else None
    if text is None and isinstance(keys, (list, tuple)) and keys:
        text = "+".join(str(k) for k in keys)
    if action in ("type", "open", "key") and not text:
        raise _ParseError(f"action {action!r} needs text")
    direction = None
    if action in ("scroll", "hscroll"):
        pixels = _num(args.get("pixels"))
        if pixels is None or pixels == 0:
            raise _ParseError(f"{action} needs non-zero pixels")
        # computer_use: positive pixels scroll up (or right for hscroll)
        direction = ("up" if pixels > 0 else "down") if action == "scroll" else ("right" if pixels > 0 else "left")
    return ParsedAction(action=action, point=point, end_point=end, text=text, direction=direction,
                        button=_opt_str(args.get("button")), status=_opt_str(args.get("status")),
                        duration=_num(args.get("time")), fmt="tool_call", raw=dict(call, arguments=args))


_COMPUTER_POINT_ACTIONS = {"left_click": "click", "right_click": "rightclick", "double_click": "doubleclick",
                           "triple_click": "click", "middle_click": "click", "mouse_move": "moveto"}


def _tool_call_to_action(pa: ParsedAction, pt, end, swipe_as_scroll: bool) -> Action:
    tool = pa.raw.get("name")
    name = pa.action
    if tool == "mobile_use":
        args = dict(pa.raw.get("arguments", {}), action=name)
        if pt is not None:
            args["coordinate"] = list(pt)
        if end is not None:
            args["coordinate2"] = list(end)
        if pa.text is not None:
            args["text"] = pa.text
        return from_mobile_use(args, swipe_as_scroll=swipe_as_scroll)
    if name in _COMPUTER_POINT_ACTIONS:
        return Action(type=_COMPUTER_POINT_ACTIONS[name], point=pt)
    if name == "left_click_drag":  # drags from the current mouse position, which the answer does not state
        return Action(type="drag", point=None, end_point=pt)
    if name in ("scroll", "hscroll"):
        return Action(type="scroll", point=pt, direction=pa.direction)
    if name == "key":
        return Action(type="hotkey", text=pa.text)
    if name == "type":
        return Action(type="type", text=pa.text)
    if name == "wait":
        return Action(type="wait", duration=pa.duration)
    if name == "answer":
        return Action(type="answer", text=pa.text or "")
    return Action(type="complete" if (pa.status or "success").lower() == "success" else "impossible")


_THOUGHT = re.compile(r"Thought:[ \t]*")
_ACTION_LINE = re.compile(r"\n[ \t]*Action:")


def _thought_before(prefix: str) -> str | None:
    """The ``Thought:`` text (up to an ``Action:`` line) or, without the label, the whole prefix."""
    m = _THOUGHT.search(prefix)
    if m is None:
        s = prefix.strip()
        return s or None
    rest = prefix[m.end():]
    a = _ACTION_LINE.search(rest)
    return (rest[:a.start()] if a else rest).strip() or None


def _parse_tool_call(text: str, strict: bool) -> ParseResult:
    tol: list[str] = []
    first = text.find("<tool_call>")
    if first < 0:
        raise _ParseError("no <tool_call> tag")
    thought = _thought_before(text[:first])
    actions: list[ParsedAction] = []
    pos = first
    while len(actions) < 16:
        found = _between(text, "<tool_call>", "</tool_call>", pos)
        if found is None:
            break
        content, pos, closed = found
        if not closed:
            tol.append(TOL_NO_CLOSE_TAG)
        payload = content.strip()
        if len(payload) > MAX_PAYLOAD_CHARS:
            raise _ParseError(f"too long (tool call of {len(payload)} chars)")
        call = _single_literal(payload, "tool call", "JSON object", "dq", tol)
        actions.append(_tool_call_action(call, tol))
    return _finish("tool_call", actions, thought, tol, strict)


def parse_tool_call(text: str, *, strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse Qwen ``<tool_call>{"name": "mobile_use"|"computer_use", "arguments": {...}}</tool_call>`` blocks.

    Optional ``Thought: ...`` / ``Action: ...`` lines before the first call give ``thought``.
    ``ParsedAction.action`` is the tool's own action name (``click``, ``system_button``, ``left_click`` ...).
    """
    return _guarded("tool_call", _parse_tool_call, text, strict, max_chars)


# --------------------------------------------------------------------------------------------- (c) pyautogui

_CODE_KEYWORDS = ("pyautogui.", "mobile.", "computer.", "answer(", "terminate(")
_CODE_CALL = re.compile(r"(?:(?:pyautogui|mobile|computer)\.[A-Za-z_]{1,32}|answer|terminate)\(")
_MAX_CANDIDATES = 256
_PRESS_KEYS = {"enter": "press_enter", "return": "press_enter", "tab": "press_tab", "space": "press_space",
               "down": "press_down", "pagedown": "press_pgdn", "pgdn": "press_pgdn"}
MAX_CODE_LINE = 4096


def _code_lines(text: str) -> list[tuple[int, int]]:
    """(line start, call start) of the lines that begin with a pyautogui/mobile call, in order, at most 16.

    Found with ``str.find`` per keyword (at most 256 candidates each) and a bounded look-back for the line
    start, so the cost stays linear in the text size whatever it holds.
    """
    found: set[tuple[int, int]] = set()
    for kw in _CODE_KEYWORDS:
        pos = 0
        for _ in range(_MAX_CANDIDATES):
            i = text.find(kw, pos)
            if i < 0:
                break
            pos = i + 1
            lo = max(0, i - MAX_CODE_LINE)
            nl = text.rfind("\n", lo, i)
            if nl < 0 and lo > 0:
                continue
            if text[nl + 1:i].strip(" \t") or _CODE_CALL.match(text, i) is None:
                continue
            found.add((nl + 1, i))
    return sorted(found)[:16]


def _literal(node: ast.expr, code: str) -> Any:
    """``ast.literal_eval`` of one argument of ``code`` whose every number is first read again from its source by
    :func:`_read_number`, so hex, ``1_000``, complex and out-of-range numbers are refused as in every format."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and type(sub.value) in (int, float, complex):
            _read_number(ast.get_source_segment(code, sub) or "", "argument")
    return ast.literal_eval(node)


def _call_args(call: ast.Call, names: tuple[str, ...], code: str) -> dict[str, Any]:
    """Literal arguments of ``call`` (parsed from ``code``): positionals bound to ``names`` in order, keywords by
    name. A number that is no whole decimal literal is a :class:`_ParseError`."""
    out: dict[str, Any] = {}
    if len(call.args) > len(names) and names and names[-1] != "*":
        raise _ParseError("too many positional arguments")
    for i, node in enumerate(call.args):
        key = names[min(i, len(names) - 1)] if names else f"arg{i}"
        value = _literal(node, code)
        if key == "*":
            out.setdefault("*", []).append(value)
        else:
            out[key] = value
    for kw in call.keywords:
        if kw.arg is None:
            raise _ParseError("non-literal argument: **kwargs are not allowed")
        out[kw.arg] = _literal(kw.value, code)
    return out


def _xy(args: dict[str, Any], tol: list[str]) -> tuple[float, float] | None:
    if "x" in args and "y" in args:
        return _point([args["x"], args["y"]], tol, "x, y", integer=False)
    return None


def _pyautogui_action(func: str, args: dict[str, Any], tol: list[str], raw: dict) -> ParsedAction:
    def pa(action: str, **kw: Any) -> ParsedAction:
        return ParsedAction(action=action, fmt="pyautogui", raw=raw, **kw)

    point_calls = {"click": "click", "doubleclick": "doubleclick", "rightclick": "rightclick", "moveto": "moveto",
                   "long_press": "long_press", "tripleclick": "click"}
    if func in point_calls:
        pt = _xy(args, tol)
        if pt is None:
            raise _ParseError(f"{func} needs x and y")
        return pa(point_calls[func], point=pt)
    if func in ("write", "typewrite", "type"):
        text = args.get("message", args.get("text"))
        if not isinstance(text, str) or not text:
            raise _ParseError(f"{func} needs a message")
        return pa("type", text=text)
    if func in ("press", "hotkey", "key"):
        keys = args.get("keys", args.get("*", args.get("key")))
        if isinstance(keys, str):
            keys = [keys]
        if not isinstance(keys, (list, tuple)) or not keys or not all(isinstance(k, str) for k in keys):
            raise _ParseError(f"{func} needs key names")
        if len(keys) == 1 and keys[0].lower() in _PRESS_KEYS:
            return pa(_PRESS_KEYS[keys[0].lower()])
        return pa("hotkey", text="+".join(keys))
    if func in ("scroll", "hscroll"):
        amount = _num(args.get("page", args.get("clicks", args.get("amount"))))
        if amount is None or amount == 0:
            raise _ParseError(f"{func} needs a non-zero amount")
        if func == "scroll":
            direction = "down" if amount < 0 else "up"
        else:
            direction = "left" if amount < 0 else "right"
        return pa("scroll", direction=direction, point=_xy(args, tol))
    if func in ("swipe", "dragto", "drag"):
        start = _point(args.get("from_coord"), tol, "from_coord", integer=False)
        end = _point(args.get("to_coord"), tol, "to_coord", integer=False)
        if func == "dragto":
            end = _xy(args, tol)
        if end is None or (func != "dragto" and start is None):
            raise _ParseError(f"{func} needs start and end coordinates")
        return pa("swipe" if func == "swipe" else "drag", point=start, end_point=end)
    if func == "home":
        return pa("press_home")
    if func == "back":
        return pa("press_back")
    if func in ("open_app", "open"):
        name = args.get("app_name", args.get("text"))
        if not isinstance(name, str) or not name:
            raise _ParseError("open_app needs app_name")
        return pa("open_app", text=name)
    if func == "wait":
        return pa("wait", duration=_num(args.get("seconds", args.get("time"))))
    if func == "terminate":
        status = str(args.get("status", "success")).lower()
        return pa("complete" if status == "success" else "impossible")
    if func == "answer":
        text = args.get("text", args.get("answer"))
        return pa("answer", text=None if text is None else str(text))
    raise _ParseError(f"unknown action {func[:40]!r}")


_POSITIONAL = {"click": ("x", "y"), "doubleclick": ("x", "y"), "rightclick": ("x", "y"), "moveto": ("x", "y"),
               "tripleclick": ("x", "y"), "long_press": ("x", "y"), "dragto": ("x", "y"), "write": ("message",),
               "typewrite": ("message",), "type": ("message",), "press": ("keys",), "hotkey": ("*",),
               "key": ("keys",), "scroll": ("page",), "hscroll": ("page",), "swipe": ("from_coord", "to_coord"),
               "open_app": ("app_name",), "wait": ("seconds",), "terminate": ("status",), "answer": ("text",)}


def _parse_pyautogui(text: str, strict: bool) -> ParseResult:
    tol: list[str] = []
    actions: list[ParsedAction] = []
    lines = _code_lines(text)
    if not lines:
        raise _ParseError("no pyautogui/mobile call")
    for _, start in lines:
        eol = text.find("\n", start, start + MAX_CODE_LINE + 1)
        if eol < 0:
            eol = len(text)
        if eol - start > MAX_CODE_LINE:
            raise _ParseError(f"too long (code line over {MAX_CODE_LINE} chars)")
        code = text[start:eol].strip()
        try:
            tree = ast.parse(code, mode="eval")
        except SyntaxError as e:
            raise _ParseError(f"code is not a call: {e.msg}") from None
        call = tree.body
        if not isinstance(call, ast.Call):
            raise _ParseError("code is not a single call")
        f = call.func
        func = (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "").lower()
        try:
            args = _call_args(call, _POSITIONAL.get(func, ()), code)
        except _ParseError:
            raise
        except (ValueError, TypeError, SyntaxError):
            raise _ParseError(f"non-literal argument in {func}()") from None
        actions.append(_pyautogui_action(func, args, tol, {"code": code, "function": func, "arguments": args}))
    prefix = text[:lines[0][0]]
    fence = prefix.rfind("```")
    thought = _thought_before(prefix[:fence] if fence >= 0 else prefix)
    return _finish("pyautogui", actions, thought, tol, strict)


def parse_pyautogui(text: str, *, strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse Aguvis-style code lines (``pyautogui.click(x=0.3, y=0.6)``, ``mobile.swipe(from_coord=[..],
    to_coord=[..])``, ``mobile.home()``, ``answer('..')`` ...). Only literal arguments are read; nothing runs.
    """
    return _guarded("pyautogui", _parse_pyautogui, text, strict, max_chars)


# --------------------------------------------------------------------------------------------- (d) JSON


def _parse_json(text: str, strict: bool) -> ParseResult:
    tol: list[str] = []
    value, pretty = _first_literal(text, tol)
    if pretty:
        tol.append(TOL_PRETTY)
    items = value if isinstance(value, list) else [value]
    if not items:
        raise _ParseError("empty JSON list")
    actions = [_action_from_dict(d, "json", tol) for d in items[:16]]
    return _finish("json", actions, None, tol, strict)


def parse_json_action(text: str, *, strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse a plain JSON action object or list (``{"action": "click", "point": [x, y]}``; a
    ``{"name": .., "arguments": ..}`` object is read as a tool call). Canonical: compact JSON, nothing around it.
    """
    return _guarded("json", _parse_json, text, strict, max_chars)


# --------------------------------------------------------------------------------------------- (e) public models

#: Longest action text (after ``Action:``) or answer the formats below look at.
MAX_ANSWER_CHARS = 4096
#: A UI-TARS ``<point>x y</point>`` / ``<bbox>x1 y1 x2 y2</bbox>`` written outside a string argument.
_COORD_TAG = re.compile(r"<(point|bbox)>([^<>]{0,256})</\1>")


def _numbers_point(text: str, tol: list[str], name: str) -> tuple[float, float] | None:
    """The point of a short coordinate text: 2 numbers -> (x, y), 4 numbers -> the box centre (a box answered
    where a point is expected, scored at its centre as SeeClick / OS-Atlas / UI-TARS do). Each number is read
    whole (:func:`_read_numbers`)."""
    if len(text) > 256:
        raise _ParseError(f"{name} too long")
    nums = _read_numbers(text, name)
    if len(nums) not in (2, 4):
        raise _ParseError(f"{name} must hold 2 or 4 numbers, got {len(nums)}")
    return _point(nums, tol, name, integer=False)


# UI-TARS action names -> this project's names (bytedance/UI-TARS codes/ui_tars/prompt.py action spaces).
_UITARS_NAMES = {"click": "click", "left_single": "click", "left_double": "doubleclick",
                 "right_single": "rightclick", "hover": "moveto", "long_press": "long_press", "drag": "drag",
                 "select": "drag", "hotkey": "hotkey", "press": "hotkey", "keydown": "hotkey", "type": "type",
                 "scroll": "scroll", "open_app": "open_app", "press_home": "press_home", "navigate_home": "press_home",
                 "press_back": "press_back", "navigate_back": "press_back", "wait": "wait", "finished": "complete",
                 "call_user": "impossible"}
_UITARS_POINT_KEYS = ("start_box", "point", "start_point")
_UITARS_END_KEYS = ("end_box", "end_point")


def _uitars_call(code: str, tol: list[str]) -> ParsedAction:
    """One UI-TARS call such as ``click(start_box='(x,y)')`` -> ParsedAction (numbers as written)."""
    code = _COORD_TAG.sub(lambda m: "(" + ",".join(t.group() for t in _RUN.finditer(m.group(2))) + ")", code)
    code = code.replace("<|box_start|>", "").replace("<|box_end|>", "")
    try:
        with warnings.catch_warnings():  # model text such as '\_' would warn about an invalid escape
            warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
            tree = ast.parse(code, mode="eval")
    except SyntaxError as e:
        raise _ParseError(f"action is not a call: {e.msg}") from None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise _ParseError("action is not a single call")
    func = call.func.id.lower()
    if func not in _UITARS_NAMES:
        raise _ParseError(f"unknown action {func[:40]!r}")
    if call.args:
        raise _ParseError(f"{func}() takes keyword arguments only")
    try:
        args = _call_args(call, (), code)
    except _ParseError:
        raise
    except (ValueError, TypeError, SyntaxError):
        raise _ParseError(f"non-literal argument in {func}()") from None
    if any(not isinstance(v, str) for v in args.values()):
        raise _ParseError(f"{func}() arguments must be strings")
    action = _UITARS_NAMES[func]
    box = next((args[k] for k in _UITARS_POINT_KEYS if args.get(k)), None)
    end = next((args[k] for k in _UITARS_END_KEYS if args.get(k)), None)
    point = _numbers_point(box, tol, "start_box") if box is not None else None
    end_point = _numbers_point(end, tol, "end_box") if end is not None else None
    text = args.get("content", args.get("key", args.get("app_name")))
    direction = None
    if action in POINT_ACTIONS and point is None:
        raise _ParseError(f"{func} needs start_box")
    if action == "drag" and end_point is None:
        raise _ParseError(f"{func} needs end_box")
    if action == "scroll":
        direction = str(args.get("direction", "")).strip().lower()
        if direction not in SCROLL_DIRECTIONS:
            raise _ParseError(f"scroll direction must be one of {SCROLL_DIRECTIONS}, got {direction[:40]!r}")
    if action == "hotkey":
        keys = (text or "").split()
        if not keys:
            raise _ParseError(f"{func} needs a key")
        if len(keys) == 1 and keys[0].lower() in _PRESS_KEYS:
            action, text = _PRESS_KEYS[keys[0].lower()], None
        else:
            text = "+".join(keys)
    if action == "type":
        text = (text or "").rstrip("\n")  # UI-TARS: a trailing \n submits the input
        if not text:
            raise _ParseError("type needs content")
    if action == "open_app" and not text:
        raise _ParseError("open_app needs app_name")
    if action in ("complete", "impossible", "wait"):
        text = None
    return ParsedAction(action=action, point=point, end_point=end_point, text=text, direction=direction,
                        duration=_num(_literal_number(args.get("time"))), fmt="uitars",
                        raw={"code": code, "function": func, "arguments": args})


def _literal_number(v: Any) -> float | None:
    """A number written as a string argument (UI-TARS ``time='2'``), read whole; None when empty or absent."""
    if not isinstance(v, str) or not v.strip():
        return None
    return _read_number(v.strip(), "time")


_ACTION_LABEL = "Action:"


def _parse_uitars(text: str, strict: bool) -> ParseResult:
    tol: list[str] = []
    at = text.rfind(_ACTION_LABEL)
    if at < 0:
        raise _ParseError("no 'Action:' line")
    body = text[at + len(_ACTION_LABEL):].strip().strip("`").strip()
    if len(body) > MAX_ANSWER_CHARS:
        raise _ParseError(f"too long (action of {len(body)} chars)")
    thought = _thought_before(text[:at]) if at else None
    calls = [c.strip() for c in body.split("\n\n") if c.strip()][:16]
    if not calls:
        raise _ParseError("empty action")
    actions = [_uitars_call(c if c.endswith(")") else c + ")", tol) for c in calls]
    return _finish("uitars", actions, thought, tol, strict)


def parse_uitars(text: str, *, strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse UI-TARS answers: ``Thought: ...\\nAction: click(start_box='<|box_start|>(x,y)<|box_end|>')`` (1.0),
    ``click(start_box='(x,y)')`` / ``click(point='<point>x y</point>')`` (1.5), several calls separated by a blank
    line. Numbers are kept as written (0-1000 for UI-TARS 1.0, resized pixels for 1.5); 4 numbers -> box centre."""
    return _guarded("uitars", _parse_uitars, text, strict, max_chars)


# OS-Atlas action words (OS-Atlas eval/data prompts: Basic Actions + Custom Actions) -> this project's names.
_OS_ATLAS_NAMES = {"CLICK": "click", "LONG_PRESS": "long_press", "TYPE": "type", "SCROLL": "scroll",
                   "PRESS_BACK": "press_back", "PRESS_HOME": "press_home", "PRESS_RECENT": "press_recent",
                   "PRESS_ENTER": "press_enter", "OPEN_APP": "open_app", "WAIT": "wait", "COMPLETE": "complete",
                   "IMPOSSIBLE": "impossible", "ENTER": "press_enter"}
_OS_ATLAS_LINE = re.compile(r"[ \t]{0,8}(CLICK|LONG_PRESS|TYPE|SCROLL|PRESS_BACK|PRESS_HOME|PRESS_RECENT|"
                            r"PRESS_ENTER|OPEN_APP|WAIT|COMPLETE|IMPOSSIBLE|ENTER)\b")
#: The section headers of an OS-Atlas answer (``thoughts:\n...\nactions:\n...``), each at the start of a line.
_OS_ATLAS_ACTIONS = re.compile(r"(?im)^[ \t]{0,8}actions:[ \t]{0,8}\n?")
_OS_ATLAS_THOUGHTS = re.compile(r"(?im)^[ \t]{0,8}thoughts:[ \t]{0,8}\n?")


def _os_atlas_box(text: str, tol: list[str]) -> tuple[float, float]:
    for open_tag, close_tag in (("<point>", "</point>"), ("<|box_start|>", "<|box_end|>"), ("<box>", "</box>")):
        found = _between(text, open_tag, close_tag)
        if found is not None:
            point = _numbers_point(found[0], tol, open_tag.strip("<|>"))
            if point is not None:
                return point
    raise _ParseError("no <point> or box")


def _os_atlas_section(text: str) -> tuple[str, str | None, bool]:
    """(action section, thought, whether an ``actions:`` header was found) of an OS-Atlas answer. Its format is
    ``thoughts:\n<thought>\nactions:\n<action>`` (OS-Atlas eval/data): the action is read only after the last
    ``actions:`` header, never from the thought. An answer without headers is one action line or a grounding
    answer, read from its start; ``thoughts:`` without an ``actions:`` section has no action."""
    headers = list(_OS_ATLAS_ACTIONS.finditer(text))
    thoughts = _OS_ATLAS_THOUGHTS.search(text)
    if not headers:
        if thoughts is not None:
            raise _ParseError("'thoughts:' without an 'actions:' section")
        return text.lstrip(), None, False
    last = headers[-1]
    thought = None
    if thoughts is not None and thoughts.end() <= last.start():
        thought = text[thoughts.end():last.start()].strip() or None
    return text[last.end():].lstrip(), thought, True


def _parse_os_atlas(text: str, strict: bool) -> ParseResult:
    tol: list[str] = []
    if len(text) > MAX_PAYLOAD_CHARS:
        raise _ParseError(f"too long ({len(text)} chars)")
    section, thought, headed = _os_atlas_section(text)
    m = _OS_ATLAS_LINE.match(section)
    if m is None:
        if headed:  # an 'actions:' section must hold an action
            raise _ParseError(f"no action word at the start of the 'actions:' section: {section[:40]!r}")
        # a grounding answer: the element's point or box, nothing else
        return _finish("os_atlas", [ParsedAction(action="click", point=_os_atlas_box(text, tol), fmt="os_atlas",
                                                 raw={"answer": text[:MAX_ANSWER_CHARS]})], None, tol, strict)
    word = m.group(1)
    eol = section.find("\n", m.end())
    line = section[m.end():eol if eol >= 0 else len(section)]
    if len(line) > MAX_ANSWER_CHARS:
        raise _ParseError("action line too long")
    action = _OS_ATLAS_NAMES[word]
    arg = _between(line, "[", "]")
    value = None
    if arg is not None and "<point>" not in line:
        value = line[line.find("[") + 1:line.rfind("]")].strip() if arg[2] else None
    point = _os_atlas_box(line, tol) if action in ("click", "long_press") else None
    direction = None
    if action == "scroll":
        direction = (value or "").lower()
        if direction not in SCROLL_DIRECTIONS:
            raise _ParseError(f"SCROLL direction must be one of {SCROLL_DIRECTIONS}, got {direction[:40]!r}")
        value = None
    if action in ("type", "open_app") and not value:
        raise _ParseError(f"{word} needs [text]")
    return _finish("os_atlas", [ParsedAction(action=action, point=point, text=value, direction=direction,
                                             fmt="os_atlas", raw={"line": (word + line)[:MAX_ANSWER_CHARS]})],
                   thought, tol, strict)


def parse_os_atlas(text: str, *, strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse OS-Atlas answers: ``thoughts:\\n...\\nactions:\\nCLICK <point>[[x,y]]</point>`` (Pro / navigation), or a
    grounding answer ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>`` / ``<point>[[x,y]]</point>`` (Base), 0-1000."""
    return _guarded("os_atlas", _parse_os_atlas, text, strict, max_chars)


def _first_literal(text: str, tol: list[str]) -> tuple[Any, bool]:
    """The first JSON/Python literal of ``text`` (inside a code fence when there is one), and whether it is written
    over several lines."""
    body = text.strip()
    fence = _between(body, "```", "```")
    if fence is not None and fence[2]:
        tol.append(TOL_CODE_FENCE)
        inner = fence[0]
        body = (inner[4:] if inner[:4].lower() == "json" else inner).strip()
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        raise _ParseError("no JSON object")
    start = min(starts)
    if len(body) - start > MAX_PAYLOAD_CHARS:
        raise _ParseError(f"too long (JSON of {len(body) - start} chars)")
    p = _LiteralParser(body)
    value, end = p.parse_prefix(start)
    if start > 0 or end != len(body):
        tol.append(TOL_SURROUNDING_TEXT)
    tol.extend(_quote_tolerances(p.features, "dq"))
    return value, "\n" in body[start:end].strip()


def _parse_qwen_grounding(text: str, strict: bool) -> ParseResult:
    if "<tool_call>" in text:  # an agent answer of the same models: Qwen's function-call format
        return _parse_tool_call(text, strict)
    tol: list[str] = []
    value, _ = _first_literal(text, tol)
    items = value if isinstance(value, list) else [value]
    for item in items[:16]:
        if isinstance(item, dict) and ("bbox_2d" in item or "point_2d" in item):
            key = "point_2d" if "point_2d" in item else "bbox_2d"
            value = item[key]
            if not isinstance(value, list) or len(value) != (2 if key == "point_2d" else 4):
                raise _ParseError(f"{key} must be {'[x, y]' if key == 'point_2d' else '[x1, y1, x2, y2]'}")
            point = _point(value, [], key, integer=False)  # a bbox_2d is read at its centre by design
            if point is None:
                raise _ParseError(f"{key} has no point")
            return _finish("qwen_grounding", [ParsedAction(action="click", point=point, fmt="qwen_grounding",
                                                           raw=item)], None, tol, strict)
    raise _ParseError("no bbox_2d or point_2d")


def parse_qwen_grounding(text: str, *, strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse Qwen2.5-VL / Qwen3-VL grounding JSON: ``[{"bbox_2d": [x1, y1, x2, y2], "label": ..}]`` (box centre)
    or ``{"point_2d": [x, y]}``, in a ```json fence or bare; ``<tool_call>`` answers go to :func:`parse_tool_call`."""
    return _guarded("qwen_grounding", _parse_qwen_grounding, text, strict, max_chars)


def _parse_point(text: str, strict: bool) -> ParseResult:
    tol: list[str] = []
    body = text.strip()
    if len(body) > MAX_ANSWER_CHARS:
        raise _ParseError(f"too long (answer of {len(body)} chars)")
    if body[:1] not in "([" or body[-1:] not in ")]":
        tol.append(TOL_SURROUNDING_TEXT)
    start = min((i for i in (body.find("("), body.find("[")) if i >= 0), default=0)
    point = _numbers_point(body[start:], tol, "point")
    if point is None:
        raise _ParseError("no point")
    return _finish("point", [ParsedAction(action="click", point=point, fmt="point", raw={"answer": body})],
                   None, tol, strict)


def parse_point(text: str, *, strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse a bare coordinate answer ``(x, y)`` / ``[x, y]`` (UGround, SeeClick); 4 numbers -> box centre."""
    return _guarded("point", _parse_point, text, strict, max_chars)


def _parse_seeclick(text: str, strict: bool) -> ParseResult:
    box = _between(text, "<box>", "</box>")
    if box is None:
        result = _parse_point(text, strict)
        return ParseResult(ok=result.ok, format="seeclick", actions=tuple(replace(a, fmt="seeclick")
                                                                           for a in result.actions),
                           error=result.error, tolerances=result.tolerances)
    # SeeClick pretrain/screenspot_test.py: a Qwen-VL box answer is on the 0-1000 grid; its centre / 1000. A box
    # cut short (no </box>) is on the same grid: never read as fractions.
    tol: list[str] = [] if box[2] else [TOL_NO_CLOSE_TAG]
    centre = _numbers_point(box[0], tol, "box")
    if centre is None:
        raise _ParseError("box has no point")
    x, y = centre
    return _finish("seeclick", [ParsedAction(action="click", point=(x / 1000, y / 1000), fmt="seeclick",
                                             raw={"box": box[0][:256]})], None, tol, strict)


def parse_seeclick(text: str, *, strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse SeeClick answers: ``(0.49,0.40)`` (fractions of the screenshot), or a Qwen-VL
    ``<box>(x1,y1),(x2,y2)</box>`` on the 0-1000 grid, returned as its centre in fractions."""
    return _guarded("seeclick", _parse_seeclick, text, strict, max_chars)


# --------------------------------------------------------------------------------------------- (f) 2025-26 grounding

#: The action a refusal is read as (UI-Venus-1.5 ``[-1,-1]``, InfiGUI-G1 ``[]``, GUI-Owl-1.5 ``terminate``
#: failure, GELab-Zero ``ABORT``): a miss on a row whose target is on the screen.
REFUSAL_ACTION = "impossible"


def _refusal(fmt: str, answer: str, thought: str | None, tol: list[str], strict: bool) -> ParseResult:
    return _finish(fmt, [ParsedAction(action=REFUSAL_ACTION, fmt=fmt, raw={"refusal": answer[:256]})], thought, tol,
                   strict)


def _bracket_answer(text: str, strict: bool, fmt: str) -> ParseResult:
    """``[x,y]`` / ``[x1,y1,x2,y2]`` alone (GUI-G2 and UI-Venus-Ground: a box, canonical; UI-Venus-1.5: a point,
    ``[-1,-1]`` its refusal). Numbers as written (the model's frame); a box is read at its centre."""
    tol: list[str] = []
    body = text.strip()
    if len(body) > MAX_ANSWER_CHARS:
        raise _ParseError(f"too long (answer of {len(body)} chars)")
    found = _between(body, "[", "]")
    if found is None or not found[2]:
        raise _ParseError("no [..] coordinates")
    inner, end, _ = found
    if not body.startswith("[") or end != len(body):
        tol.append(TOL_SURROUNDING_TEXT)
    if fmt == "venus" and [float(n) for n in _read_numbers(inner, "point")] == [-1.0, -1.0]:
        return _refusal(fmt, body, None, tol, strict)
    point = _numbers_point(inner, tol, "box" if fmt == "box" else "point")
    if point is None:
        raise _ParseError("no point")
    if fmt == "box":  # a box is this format's own answer, not a tolerance
        tol = [t for t in tol if t != TOL_BOX_POINT]
    return _finish(fmt, [ParsedAction(action="click", point=point, fmt=fmt, raw={"answer": body})], None, tol, strict)


def _parse_infigui(text: str, strict: bool) -> ParseResult:
    """InfiGUI-G1: ``<think>..</think>[{"point_2d": [x, y]}, ...]``; the first point is the answer (its eval.py
    scores the first), ``[]`` is its refusal (no element)."""
    tol: list[str] = []
    cut = text.rfind("</think>")
    thought = None
    if cut < 0:
        tol.append(TOL_NO_THINK)
        body = text
    else:
        start = text.find("<think>")
        thought = text[start + len("<think>"):cut].strip() or None if 0 <= start < cut else None
        body = text[cut + len("</think>"):]
    value, _ = _first_literal(body, tol)
    if value == []:
        return _refusal("infigui", body.strip(), thought, tol, strict)
    return _keyed_click("infigui", value[0] if isinstance(value, list) else value, "point_2d", thought, tol, strict)


def _keyed_click(fmt: str, item: Any, key: str, thought: str | None, tol: list[str], strict: bool) -> ParseResult:
    """A click at ``item[key]`` (a point, or a box read at its centre) of a JSON answer, numbers as written."""
    if not isinstance(item, dict) or key not in item:
        raise _ParseError(f"no {key!r} in the answer")
    point = _point(item[key], tol, key, integer=False)
    if point is None:
        raise _ParseError(f"{key} has no point")
    return _finish(fmt, [ParsedAction(action="click", point=point, fmt=fmt, raw=item)], thought, tol, strict)


def _parse_mai_ui(text: str, strict: bool) -> ParseResult:
    """MAI-UI: ``<grounding_think>..</grounding_think><answer>{"coordinate": [x,y]}</answer>`` (0-1000)."""
    tol: list[str] = []
    found = _between(text, "<answer>", "</answer>")
    if found is None:
        raise _ParseError("no <answer> tag")
    content, _, closed = found
    if not closed:
        tol.append(TOL_NO_CLOSE_TAG)
    if len(content) > MAX_PAYLOAD_CHARS:
        raise _ParseError(f"too long (answer of {len(content)} chars)")
    think = _between(text, "<grounding_think>", "</grounding_think>")
    thought = think[0].strip() or None if think is not None and think[2] else None
    value = _single_literal(content.strip(), "answer", "JSON object", "dq", tol)
    return _keyed_click("mai_ui", value, "coordinate", thought, tol, strict)


#: GELab-Zero's action words (stepfun-ai/gelab-zero copilot_tools/parser_0920_summary.py) -> this project's names;
#: ABORT (the task cannot go on) is its refusal.
_GELAB_NAMES = {"CLICK": "click", "LONGPRESS": "long_press", "TYPE": "type", "SLIDE": "swipe", "AWAKE": "open_app",
                "WAIT": "wait", "COMPLETE": "complete", "ABORT": REFUSAL_ACTION}
_GELAB_THINK_END = re.compile(r"</\s{0,4}think\s{0,4}>", re.I)


def _gelab_point(fields: dict[str, str], key: str, tol: list[str]) -> tuple[float, float] | None:
    value = fields.get(key)
    return None if value is None else _numbers_point(value.split("\n", 1)[0].replace(",", " "), tol, key)


def _parse_gelab(text: str, strict: bool) -> ParseResult:
    """GELab-Zero / Step-GUI: ``<THINK>..</THINK>\nexplain:..\taction:CLICK\tpoint:x,y\tsummary:..`` (0-1000), tab-
    separated ``key:value`` fields; a bare ``point:x,y`` (no action field) is a click."""
    tol: list[str] = []
    if len(text) > MAX_PAYLOAD_CHARS:
        raise _ParseError(f"too long ({len(text)} chars)")
    end = _GELAB_THINK_END.search(text)
    if end is None:
        tol.append(TOL_NO_THINK)
        thought, body = None, text
    else:
        start = text.upper().find("<THINK>", 0, end.start())
        thought = text[start + len("<THINK>"):end.start()].strip() or None if start >= 0 else None
        body = text[end.end():]
    fields: dict[str, str] = {}
    for item in body.split("\t")[:32]:
        key, sep, value = item.partition(":")
        if sep:
            fields.setdefault(key.strip().lower(), value.strip())
    word = fields.get("action", "CLICK" if "point" in fields else "")
    name = _GELAB_NAMES.get(word.upper().split("\n", 1)[0].strip())
    if name is None:
        raise _ParseError(f"no GELab action (action:{word[:40]!r})")
    if word != word.upper():
        tol.append(TOL_ACTION_CASE)
    if name == REFUSAL_ACTION:
        return _refusal("gelab", body.strip(), thought, tol, strict)
    point = _gelab_point(fields, "point1" if name == "swipe" else "point", tol)
    end_point = _gelab_point(fields, "point2", tol) if name == "swipe" else None
    value = fields.get("value")
    if name in POINT_ACTIONS and point is None:
        raise _ParseError(f"{word} needs a point")
    if name in ("type", "open_app") and not value:
        raise _ParseError(f"{word} needs a value")
    return _finish("gelab", [ParsedAction(
        action=name, point=point, end_point=end_point, text=value if name in ("type", "open_app") else None,
        duration=_literal_number(value) if name == "wait" else None, fmt="gelab",
        raw={"fields": dict(list(fields.items())[:8])})], thought, tol, strict)


# --------------------------------------------------------------------------------------------- auto

_PARSERS = {"guir1": _parse_guir1, "tool_call": _parse_tool_call, "pyautogui": _parse_pyautogui,
            "json": _parse_json, "uitars": _parse_uitars, "os_atlas": _parse_os_atlas,
            "qwen_grounding": _parse_qwen_grounding, "point": _parse_point, "seeclick": _parse_seeclick,
            "box": lambda text, strict: _bracket_answer(text, strict, "box"),
            "venus": lambda text, strict: _bracket_answer(text, strict, "venus"),
            "infigui": _parse_infigui, "mai_ui": _parse_mai_ui, "gelab": _parse_gelab}


def detect_format(text: str) -> str:
    """Which format ``text`` looks like: 'tool_call', 'guir1', 'pyautogui', 'json' or 'none'."""
    if "<tool_call>" in text:
        return "tool_call"
    if "<answer>" in text:
        return "guir1"
    if _code_lines(text):
        return "pyautogui"
    if "{" in text or "[" in text:
        return "json"
    return "none"


def parse_action(text: str, *, fmt: str = "auto", strict: bool = False, max_chars: int = 1_000_000) -> ParseResult:
    """Parse a model answer in ``fmt`` ('auto' detects it). Never raises; see :class:`ParseResult`."""
    if fmt != "auto" and fmt not in _PARSERS:
        return ParseResult(ok=False, format="none", error=f"unknown format {quoted(fmt)}; known: {list(FORMATS + MODEL_FORMATS)}")
    if not isinstance(text, str):
        return ParseResult(ok=False, format="none", error=f"input is {type(text).__name__}, not str")
    if len(text) > max_chars:
        return ParseResult(ok=False, format="none", error=f"too long ({len(text)} > {max_chars} chars)")
    try:
        chosen = detect_format(text) if fmt == "auto" else fmt
    except Exception as e:  # noqa: BLE001
        return ParseResult(ok=False, format="none", error=f"{type(e).__name__}: {e}"[:200])
    if chosen == "none":
        return ParseResult(ok=False, format="none", error="no action found")
    return _guarded(chosen, _PARSERS[chosen], text, strict, max_chars)


TOLERANCES: tuple[str, ...] = (
    TOL_WHITESPACE, TOL_DOUBLE_QUOTES, TOL_SINGLE_QUOTES, TOL_JSON_LITERALS, TOL_PY_LITERALS, TOL_FLOAT_POINT,
    TOL_NEGATIVE_POINT, TOL_PRETTY, TOL_NO_THINK, TOL_DICT_ANSWER, TOL_ACTION_CASE, TOL_BOX_POINT, TOL_STRING_POINT,
    TOL_KEY_ALIAS, TOL_NO_CLOSE_TAG, TOL_ARGS_STRING, TOL_CODE_FENCE, TOL_SURROUNDING_TEXT, TOL_MISSING_INPUT_TEXT,
)

__all__ = [
    "FORMATS", "MAX_PAYLOAD_CHARS", "REFUSAL_ACTION", "TOLERANCES", *(n for n in dir() if n.startswith("TOL_")),
    "ParseResult", "ParsedAction", "detect_format", "parse_action",
    "MODEL_FORMATS", "parse_guir1_answer", "parse_json_action", "parse_literal", "parse_os_atlas", "parse_point",
    "parse_pyautogui", "parse_qwen_grounding", "parse_seeclick", "parse_tool_call", "parse_uitars",
]
