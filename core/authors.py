"""The authors' own reading of a model preset's answer (issue 51): how each model's published grounding code turns
the model's text into a point, and that point into pixels of the screenshot.

``gui-agent eval --preset NAME`` scores with this reading by default (``--reading authors``); the project's own
tolerant parsers (:mod:`core.parsers`, chosen by ``Preset.parser``) stay available as ``--reading tolerant``.
A preset without an entry in :data:`AUTHORS` reads the same in both modes.

Each rule names its source (repo @ commit, file:lines; docs/presets.md "Authors' reading" lists them). The code
here is this project's own: model text is untrusted, so nothing is ``eval()``-ed (where a script evaluates the
answer as Python, the project's bounded literal reader reads the literal it would give), every regex is bounded, and
a failure is a :class:`~core.parsers.ParseResult` with its reason, never an exception.
"""

from __future__ import annotations

import ast
import json
import re
import struct
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from core.actions import POINT_ACTIONS
from core.geometry import Frame, ImageGeometry, fetch_image_resize
from core.parsers import (
    MAX_ANSWER_CHARS,
    MAX_PAYLOAD_CHARS,
    REFUSAL_ACTION,
    ParsedAction,
    ParseResult,
    _guarded,
    _LiteralParser,
    _UITARS_NAMES,
    parse_action,
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
    (where it was read), and ``to_original`` (the authors' own arithmetic from that frame to ORIGINAL pixels for
    a parsed action with a point; None, or a None result: :meth:`core.geometry.ImageGeometry.point`)."""

    parse: Callable[[str], ParseResult]
    source: str
    to_original: Callable[[ParsedAction, ImageGeometry], Point | None] | None = None
    #: Read so on grounding benchmarks only (the rule is a grounding harness's; navigation answers: tolerant).
    grounding_only: bool = False
    #: The authors' reading of navigation answers where it is another code's (the Qwen3-VL cookbook's mobile
    #: agent); None: ``parse`` / ``to_original`` read both kinds of answer.
    navigation: Reading | None = None
    #: The prompt template this reading's answers were asked with; a row recording another template (a run made
    #: before the preset sent it) is read with the tolerant parser. None: any.
    template: str | None = None


class _Wrong(ValueError):
    """The authors' code rejects the answer (wrong format): the reason."""


def _click(fmt: str, x: float, y: float, raw: dict[str, Any]) -> ParseResult:
    return ParseResult(ok=True, format=fmt, actions=(ParsedAction(action="click", point=(float(x), float(y)),
                                                                  fmt=fmt, raw=raw),))


def _refusal(fmt: str, answer: str, negative_point: bool = False) -> ParseResult:
    """The model's refusal. ``negative_point``: the answer is a point with negative coordinates (UI-Venus-1.5's
    ``[-1,-1]``), which OSWorld-G's evaluator counts as a refusal; any other refusal has no coordinate and reaches
    that evaluator as a click at the origin (:func:`core.presets.reparse_row`)."""
    return ParseResult(ok=True, format=fmt, actions=(ParsedAction(
        action=REFUSAL_ACTION, fmt=fmt, raw={"refusal": answer[:256], "negative_point": negative_point}),))


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
        if len(candidate) > MAX_PAYLOAD_CHARS:
            break
        reader = _LiteralParser(candidate)
        try:
            value, end = reader.parse_prefix()
        except (ValueError, RecursionError):
            continue
        if end == len(candidate):
            if "json_lit" in reader.features:  # true / false / null: names Python does not know
                raise _Wrong("JSON true / false / null are not Python")
            return value
    raise _Wrong("the answer is not a Python literal")


# ------------------------------------------------------------------------------------------------ mappings


def _int_of_grid(a: ParsedAction, g: ImageGeometry) -> Point | None:
    """A 0-1000 point k -> ``int(k / 1000 * W)`` pixels (truncated, as the authors' code does)."""
    if a.point is None:
        return None
    return float(int(a.point[0] / 1000 * g.width)), float(int(a.point[1] / 1000 * g.height))


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
    its point is ``[0, 0]``: a click at the origin, whatever the answer says. A ``terminate`` with status failure
    (the refusal its OSWorld-G prompt asks for) is such an answer: the script turns it into ``[0, 0]``
    (eval_grounding_benchmarks.py:402-410) and the benchmark's official evaluator judges that point, a click
    (issue 51: a benchmark's refusal rule is its evaluator's; OSWorld-G's refusal is a negative point), so it
    is never a refusal here."""
    matches = _OWL_PAREN.findall(text) or _OWL_BRACKET.findall(text)
    if matches:
        x, y = matches[-1]
        if len(x) <= _MAX_INT_DIGITS and len(y) <= _MAX_INT_DIGITS:
            return _click("guiowl15", int(x), int(y), {"answer": text.strip()[:256]})
    return _click("guiowl15", 0, 0, {"answer": text.strip()[:256], "fallback": "no coordinate: [0, 0]"})


# ------------------------------------------------------------------------------------------------ UI-Venus-1.5

_V15_INT = r"\s*-?[0-9]+\s*"
_V15_BOX = re.compile(rf"\[{_V15_INT},{_V15_INT},{_V15_INT},{_V15_INT}\]")
_V15_POINT = re.compile(rf"\[{_V15_INT},{_V15_INT}\]")
_V15_TWO_POINTS = re.compile(rf"\[{_V15_INT},{_V15_INT}\],\s*\[{_V15_INT},{_V15_INT}\]")
_LEADING_ZERO = re.compile(r"\s*-?0[0-9]*[1-9][0-9]*\s*")


def _literal_ints(parts: list[str]) -> list[int]:
    """The integers of a matched pattern as ``eval`` reads them (``07`` is a syntax error there)."""
    if any(_LEADING_ZERO.fullmatch(p) for p in parts):
        raise _Wrong("an integer with a leading zero")
    return [_py_int(p) for p in parts]


def _parse_venus15(text: str) -> ParseResult:
    """UI-Venus-1.5's ``_parse_point``: the stripped answer is exactly ``[x1,y1,x2,y2]`` (its centre), ``[x,y]``
    or ``[x1,y1],[x2,y2]`` (spaces removed; the centre), integers only; else the integers between the first ``[``
    and the first ``]`` (``int()`` of each comma-separated part: a decimal is wrong format, so ``[-1.0, -1.0]`` is
    no refusal), of which the first two are the point (three numbers: the first two). ``[-1, -1]`` is its refusal."""
    body = text.strip()
    if _V15_BOX.fullmatch(body):
        x1, y1, x2, y2 = _literal_ints(body[1:-1].split(","))
        point: list[float] = [(x1 + x2) / 2, (y1 + y2) / 2]
    elif _V15_POINT.fullmatch(body):
        point = list(_literal_ints(body[1:-1].split(",")))
    elif _V15_TWO_POINTS.fullmatch(body.replace(" ", "")):
        a, b = body.replace(" ", "").split("]", 1)
        x1, y1 = _literal_ints(a.strip().lstrip("[").split(","))
        x2, y2 = _literal_ints(b.strip().lstrip(",").strip().lstrip("[").rstrip("]").split(","))
        point = [(x1 + x2) / 2, (y1 + y2) / 2]
    else:
        parts = body.split("]")[0].split("[")
        if len(parts) < 2:
            raise _Wrong("no [ before the first ]")
        point = [_py_int(p) for p in parts[1].split(",")]
    if point == [-1, -1]:
        return _refusal("venus", body, negative_point=True)
    if len(point) < 2:
        raise _Wrong("fewer than two numbers")
    return _click("venus", point[0], point[1], {"answer": body[:256]})


# ------------------------------------------------------------------------------------------------ GUI-G2, UI-Venus 1.0

def _parse_eval_box(text: str) -> ParseResult:
    """GUI-G2's README ``infer()`` and UI-Venus-Ground-7B: ``box = eval(answer)``, then ``box[0..3]`` divided by the
    input size; when that raises (text around the box, two numbers, nothing) the box is ``[0, 0, 0, 0]``. The
    answer is the box centre, or the point (0, 0)."""
    try:
        value = _python_value(text)
    except _Wrong:
        value = None
    if isinstance(value, (list, tuple)) and len(value) >= 4 and all(_is_number(v) for v in value[:4]):
        x1, y1, x2, y2 = (float(v) for v in value[:4])
        return _click("box", (x1 + x2) / 2, (y1 + y2) / 2, {"answer": text.strip()[:256]})
    return _click("box", 0, 0, {"answer": text.strip()[:256], "fallback": "not a box: [0, 0, 0, 0]"})


# ------------------------------------------------------------------------------------------------ GTA1

_GTA1_PAIR = re.compile(r"\((-?[\d.]+),\s*(-?[\d.]+)\)")
_GTA1_NUMBER = re.compile(r"-?\d*\.?\d+")


def _parse_gta1(text: str) -> ParseResult:
    """GTA1's README ``extract_coordinates``: every ``(x, y)`` (optionally signed decimals), each converted with
    ``int()``; the first is the answer. No pair, or any pair with a decimal (``int('1.5')`` raises), is (0, 0)."""
    pairs = [p for p in _GTA1_PAIR.findall(text) if all(_GTA1_NUMBER.fullmatch(v) for v in p)]
    try:
        points = [(_py_int(x), _py_int(y)) for x, y in pairs]
    except _Wrong:
        points = []
    if not points:
        return _click("point", 0, 0, {"answer": text.strip()[:256], "fallback": "no integer (x, y): (0, 0)"})
    return _click("point", *points[0], {"answer": text.strip()[:256]})


def _gta1_pixels(a: ParsedAction, g: ImageGeometry) -> Point | None:
    """GTA1's README: ``pred_x *= width / resized_width`` (in that order)."""
    if a.point is None:
        return None
    return a.point[0] * (g.width / g.resized_width), a.point[1] * (g.height / g.resized_height)


# ------------------------------------------------------------------------------------------------ MAI-UI

_MAI_POINT = re.compile(r"\[(\d+),(\d+)\]")


def _parse_mai_ui(text: str) -> ParseResult:
    """MAI-UI's ``parse_coordinates``: the first ``[x,y]`` (integers, no spaces) anywhere in the answer, with or
    without its ``<answer>`` tag; none is wrong format."""
    found = _MAI_POINT.search(text)
    if found is None:
        raise _Wrong("no [x,y] of integers")
    return _click("mai_ui", _py_int(found.group(1)), _py_int(found.group(2)), {"answer": text.strip()[:256]})


# ------------------------------------------------------------------------------------------------ InfiGUI-G1

def _parse_infigui(text: str) -> ParseResult:
    """InfiGUI-G1's ``extract_coordinates`` and ``calculate_metrics``: the text after the last ``</think>``, from
    its first ``[`` to its last ``]``, read as JSON (``json.loads``); ``[]`` is its refusal; otherwise the first
    prediction's ``point_2d`` (its first two numbers) is the answer."""
    body = text.split("</think>")[-1]
    start, end = body.find("["), body.rfind("]")
    if start < 0 or end < 0 or start >= end:
        raise _Wrong("no [...] list")
    try:
        predictions = json.loads(body[start:end + 1])
    except ValueError as e:
        raise _Wrong(f"not JSON: {str(e)[:80]}") from None
    if isinstance(predictions, list) and not predictions:
        return _refusal("infigui", body.strip())
    first = predictions[0] if isinstance(predictions, list) else None
    point = first.get("point_2d") if isinstance(first, dict) else None
    if not isinstance(point, list) or len(point) < 2 or not all(_is_number(v) for v in point[:2]):
        raise _Wrong("the first prediction has no point_2d [x, y]")
    return _click("infigui", point[0], point[1], {"answer": body.strip()[:256]})


# ------------------------------------------------------------------------------------------------ GUI-R1

_GUIR1_SOURCE = "icey-zhang/GUI-R1 @ 0ec02be guir1/inference/inference_vllm_screenspot.py"
_GUIR1_FMT = "guir1_screenspot"
#: From a ``[`` on: the part of the script's ``\{.*\[(\d+),\s*(\d+)]\s*.*\}`` after its ``.*`` (no backtracking
#: into it: each ``\d+`` / ``\s*`` run is followed by a character it cannot hold).
_GUIR1_BRACKET = re.compile(r"\[(\d+),\s*(\d+)]\s*")


def _guir1_coord(answer: str) -> tuple[str, str] | None:
    r"""The two groups of ``re.search(r"\{.*\[(\d+),\s*(\d+)]\s*.*\}", answer)`` (the script's ``bbox_pattern``,
    no flags), found in linear time: ``.`` stops at a newline, so the match starts at the first ``{`` of a line
    that has, after that ``{``, a ``[x, y]`` (``\s*`` may cross lines) followed by optional whitespace and then a
    line holding a ``}``; the greedy ``.*`` takes the last such ``[`` of that line. None: no match."""
    if "{" not in answer or "[" not in answer:
        return None
    n = len(answer)
    closes = [False] * (n + 1)  # closes[k]: a '}' at k or after it on k's line
    seen = False
    for k in range(n - 1, -1, -1):
        ch = answer[k]
        seen = False if ch == "\n" else seen or ch == "}"
        closes[k] = seen
    start = 0
    while start <= n:
        end = answer.find("\n", start)
        end = n if end < 0 else end
        brace = answer.find("{", start, end)
        if brace >= 0:
            at = answer.rfind("[", brace + 1, end)
            while at > brace:
                found = _GUIR1_BRACKET.match(answer, at)
                if found is not None and closes[found.end()]:
                    return found.group(1), found.group(2)
                at = answer.rfind("[", brace + 1, at)
        start = end + 1
    return None


def _parse_guir1_screenspot(text: str) -> ParseResult:
    r"""GUI-R1's ScreenSpot ``extract_coord``: the first ``<answer>...</answer>`` (stripped), in it the first match
    of ``\{.*\[(\d+),\s*(\d+)]\s*.*\}`` (:func:`_guir1_coord`), its two integers the point. No match, an
    integer ``int()`` refuses (its ``except``), and any answer without both tags (its other pattern,
    ``\{.*\((\d+),\s*(\d+))\s*.*\}``, has an unbalanced parenthesis: ``re.error``, caught) are its ``[0, 0, 0,
    0]``: the point (0, 0). The action is not read: the script scores the point as a click."""
    answer = text.strip()[:256]
    start = text.find("<answer>")
    end = -1 if start < 0 else text.find("</answer>", start + len("<answer>"))
    if end < 0:
        return _click(_GUIR1_FMT, 0, 0, {"answer": answer, "fallback": "no <answer>...</answer>: (0, 0)"})
    found = _guir1_coord(text[start + len("<answer>"):end].strip())
    if found is None:
        return _click(_GUIR1_FMT, 0, 0, {"answer": answer, "fallback": "no {..[x, y]..}: (0, 0)"})
    if any(len(v) > _MAX_INT_DIGITS for v in found):
        return _click(_GUIR1_FMT, 0, 0, {"answer": answer, "fallback": "int() refuses the number: (0, 0)"})
    return _click(_GUIR1_FMT, int(found[0]), int(found[1]), {"answer": answer})


def _float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (round half to even, as IEEE float32 arithmetic rounds)."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _torch_int_over_tensor(numerator: int, denominator: int) -> float:
    """``numerator / t`` for a Python int and a 0-dim int64 torch tensor ``t`` holding ``denominator``, then
    ``.item()``: torch's ``Tensor.__rtruediv__`` is ``t.reciprocal() * numerator``, the reciprocal a float32 and
    the product rounded to float32, which is not always the rounded quotient (1176 / 980 gives 1.1999999284744263,
    float32(1.2) is 1.2000000476837158). Exact here: ``1 / d`` in double rounded to float32 is the float32
    division, and a float32 times an integer below 2 ** 29 is exact in double before its rounding."""
    return _float32(_float32(1 / denominator) * numerator)


def _guir1_screenspot_scale(g: ImageGeometry) -> tuple[float, float]:
    """GUI-R1's ScreenSpot ``scale`` (``:117-123``): "origin" (the size of the image qwen-vl-utils' ``fetch_image``
    returns, :func:`core.geometry.fetch_image_resize` of the screenshot) over "resized" (the processor's grid
    times the patch size, an int64 tensor: the size the model saw), computed by torch in float32
    (:func:`_torch_int_over_tensor`), then ``.item()``."""
    origin_w, origin_h = fetch_image_resize(g.width, g.height)
    return (_torch_int_over_tensor(origin_w, g.resized_width), _torch_int_over_tensor(origin_h, g.resized_height))


def _guir1_screenspot_pixels(a: ParsedAction, g: ImageGeometry) -> Point | None:
    """``pred_coord = [x * scale[0], y * scale[1]]`` (``:195``): a point in the "origin" frame (qwen-vl-utils'
    size, e.g. 1932 x 1092 for a 1920 x 1080 screenshot), which the script compares with the gold boxes, screenshot
    pixels, unmapped; so does this reading."""
    if a.fmt != _GUIR1_FMT or a.point is None:
        return None
    sx, sy = _guir1_screenspot_scale(g)
    return a.point[0] * sx, a.point[1] * sy


# ------------------------------------------------------------------------------------------------ Qwen3-VL

_QWEN_POINTS = "qwen_point_2d"


def _qwen_point_value(v: Any) -> float:
    """One coordinate as the cookbook's ``int(point[0])`` takes it: a number, or a string of an integer."""
    if _is_number(v):
        return float(v)
    if isinstance(v, str):
        return float(_py_int(v))
    raise _Wrong("a point_2d coordinate is not a number")


def _parse_qwen3vl(text: str) -> ParseResult:
    """The Qwen3-VL cookbook's ``decode_json_points`` for an answer with ``point_2d``: the part inside a ```json
    fence (when there is one), read with ``json.loads``; every item with a ``point_2d`` key gives ``x, y`` (exactly
    two values); any failure gives no point at all (unparseable). The first point is the answer. An answer
    without ``point_2d`` (``bbox_2d``, a tool call) is read by the tolerant parser, as before."""
    if "point_2d" not in text:
        return parse_action(text, fmt="qwen_grounding")
    body = text.split("```json")[1].split("```")[0] if "```json" in text else text
    try:
        data = json.loads(body)
    except ValueError as e:
        raise _Wrong(f"not JSON: {str(e)[:80]}") from None
    items = list(data) if isinstance(data, (list, dict, str)) else None
    if items is None:
        raise _Wrong("the JSON is not a list")
    points = []
    for item in items:
        if not isinstance(item, (dict, list, str)):
            raise _Wrong("an item is not an object")
        if "point_2d" in item:
            value = item["point_2d"] if isinstance(item, dict) else None
            if not isinstance(value, list) or len(value) != 2:
                raise _Wrong("point_2d is not [x, y]")
            points.append((_qwen_point_value(value[0]), _qwen_point_value(value[1])))
    if not points:
        raise _Wrong("no point_2d")
    return _click(_QWEN_POINTS, *points[0], {"answer": text.strip()[:256]})


def _qwen3vl_pixels(a: ParsedAction, g: ImageGeometry) -> Point | None:
    """The cookbook's ``int(point[0]) / 1000 * width`` for a point_2d answer; other answers: the default."""
    if a.fmt != _QWEN_POINTS or a.point is None:
        return None
    return int(a.point[0]) / 1000 * g.width, int(a.point[1]) / 1000 * g.height


_QWEN3VL_AGENT = "QwenLM/Qwen3-VL @ 9658872 cookbooks/mobile_agent.ipynb"
#: The cookbook's agent prompt: ``core.prompts`` ``qwen3vl-mobile-agent`` (the 999 x 999 screen it states).
QWEN3VL_AGENT_TEMPLATE = "qwen3vl-mobile-agent"


def _parse_qwen3vl_agent(text: str) -> ParseResult:
    """The cookbook's read of the agent's answer (cell 7): ``json.loads`` of the text between the first
    ``"<tool_call>\\n"`` and the next ``"\\n</tool_call>"`` (no such split: the notebook raises, so the answer is
    unparseable); that one call is then read as the project's ``mobile_use`` tool call."""
    parts = text.split("<tool_call>\n")
    if len(parts) < 2:
        raise _Wrong("no '<tool_call>' followed by a newline")
    body = parts[1].split("\n</tool_call>")[0]
    try:
        call = json.loads(body)
    except ValueError as e:
        raise _Wrong(f"the tool call is not JSON: {str(e)[:80]}") from None
    if not isinstance(call, dict) or not isinstance(call.get("arguments"), dict) or "action" not in call["arguments"]:
        raise _Wrong("the tool call has no arguments.action")
    return parse_action(f"<tool_call>\n{body}\n</tool_call>", fmt="tool_call")


def _qwen3vl_agent_pixels(a: ParsedAction, g: ImageGeometry) -> Point | None:
    """The cookbook's ``rescale_coordinates`` (cell 4): ``round(p / 999 * W)`` of a point on its 999 x 999 screen
    (``p / 999 * W`` is :meth:`ImageGeometry.point` from ``grid999``; Python's round, half to even)."""
    if a.point is None:
        return None
    x, y = g.point(a.point, Frame.GRID999, Frame.ORIGINAL)
    return float(round(x)), float(round(y))


# ------------------------------------------------------------------------------------------------ UI-TARS

_UITARS_SOURCE = "bytedance/UI-TARS @ 582f3a7 codes/ui_tars/action_parser.py"
#: ``convert_point_to_coordinates`` (action_parser.py:15): ``<point>x y</point>`` of integers.
_UITARS_POINT = re.compile(r"<point>(\d+)\s+(\d+)</point>")
_UITARS_TYPE = re.compile(r"type\(content='(.*?)'\)")
_UNESCAPED_QUOTE = re.compile(r"(?<!\\)'")
#: Qwen2-VL's box tokens, which the decode (``skip_special_tokens``, vLLM's and this project's) leaves out.
_BOX_TOKENS = ("<|box_start|>", "<|box_end|>")
#: The actions whose ``start_box`` the pyautogui step turns into a click (action_parser.py:468-483).
_UITARS_CLICKS = ("click", "left_single", "left_double", "right_single", "hover")


def _digits(s: str) -> int:
    """``int()`` of a ``\\d+`` match (any Unicode digits, as Python's ``re`` and ``int()`` read them);
    :class:`_Wrong` where ``int()`` refuses its length."""
    if len(s) > _MAX_INT_DIGITS:
        raise _Wrong("an integer of over 4,300 digits")
    return int(s)


def _uitars_call(code: str) -> tuple[str | None, dict[Any, Any]]:
    """``parse_action`` (action_parser.py:31-72): the text as one Python expression (``ast.parse``, never run),
    a call; its function's name (a name or an attribute) and its keyword arguments, a constant's value or None."""
    if len(code) > MAX_ANSWER_CHARS:
        raise _Wrong(f"action of {len(code)} characters (over {MAX_ANSWER_CHARS} read)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call = ast.parse(code, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise _Wrong(f"action can't parse: {type(e).__name__}") from None
    if not isinstance(call, ast.Call):
        raise _Wrong("action can't parse: not a function call")
    func = call.func.id if isinstance(call.func, ast.Name) else \
        call.func.attr if isinstance(call.func, ast.Attribute) else None
    return func, {kw.arg: kw.value.value if isinstance(kw.value, ast.Constant) else None for kw in call.keywords}


def _uitars_box(value: str) -> list[float]:
    """A ``start_box`` / ``end_box`` value (action_parser.py:241-265): parentheses removed, split on commas,
    ``float()`` of each part (as Python reads a float: whitespace, ``1e2``, ``inf``); 2 numbers become the box
    ``[x, y, x, y]``."""
    numbers = []
    for part in value.replace("(", "").replace(")", "").split(","):
        try:
            numbers.append(float(part))
        except ValueError:
            raise _Wrong(f"{part.strip()[:40]!r} is not a number") from None
    return numbers * 2 if len(numbers) == 2 else numbers


def _uitars_action(code: str, whole: str) -> ParsedAction:
    """One action: :func:`_uitars_call`, then ``parse_action_to_structure_output``'s arguments (an empty string
    skipped, any other non-string value fails at its ``lstrip()``; boxes read by :func:`_uitars_box`) and the
    pyautogui step's reading of a box (exactly 4 numbers, the click family needs one). The action's name maps to
    this project's as the tolerant parser maps it, whose other fields (text, direction) it keeps."""
    func, kwargs = _uitars_call(code)
    boxes: dict[str, list[float]] = {}
    for key, value in kwargs.items():
        if value == "":
            continue
        if not isinstance(value, (str, bytes)) or not isinstance(key, str):
            raise _Wrong(f"argument {str(key)[:40]!r} is not a string")
        if "start_box" in key or "end_box" in key:
            if not isinstance(value, str):
                raise _Wrong(f"{key[:40]} is not a string")
            boxes[key.strip()] = _uitars_box(value.lstrip())
    if func in _UITARS_CLICKS and "start_box" not in boxes:
        raise _Wrong(f"{func} has no start_box")
    if any(len(b) != 4 for b in boxes.values()):
        raise _Wrong("a box of other than 2 or 4 numbers")
    name = _UITARS_NAMES.get(func) if isinstance(func, str) else None
    if name is None:
        raise _Wrong(f"unrecognized action {str(func)[:40]!r}")
    centre = {k: ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for k, b in boxes.items()}
    raw = {"function": func, "boxes": boxes, "answer": whole[:256]}
    tolerant = parse_action(f"Action: {code}", fmt="uitars")
    if tolerant.ok and tolerant.action is not None:
        base = tolerant.action
    elif name in POINT_ACTIONS and "start_box" in centre:
        base = ParsedAction(action=name, fmt="uitars")
    else:
        raise _Wrong(f"{func}: {tolerant.error}")
    return replace(base, point=centre.get("start_box"), end_point=centre.get("end_box"), raw=raw)


def _parse_uitars(text: str) -> ParseResult:
    """``parse_action_to_structure_output`` (action_parser.py:146-276): ``<point>x y</point>`` -> ``(x,y)`` (and
    ``[EOS]`` removed), ``start_point=`` / ``end_point=`` / ``point=`` renamed to the boxes; ``Action:`` required;
    the text after the last ``Action: `` split into actions at ``)`` + blank line, each closed with ``)``, a
    ``type(content='...')`` rewritten with its quotes escaped; every action must parse (:func:`_uitars_action`)."""
    text = text.strip()
    for token in _BOX_TOKENS:
        text = text.replace(token, "")
    if "<point>" in text:
        text = _UITARS_POINT.sub(lambda m: f"({_digits(m.group(1))},{_digits(m.group(2))})",
                                 text.replace("[EOS]", "")).strip()
    text = text.replace("start_point=", "start_box=").replace("end_point=", "end_box=").replace("point=", "start_box=")
    if "Action:" not in text:
        raise _Wrong("no 'Action:'")
    actions = []
    for code in text.split("Action: ")[-1].split(")\n\n"):
        if "type(content" in code:
            code = code if code.strip().endswith(")") else code.strip() + ")"
            if _UITARS_TYPE.search(code) is None:
                raise _Wrong("type(content='...') not found")
            code = "type(content='" + _UNESCAPED_QUOTE.sub(r"\\'", _UITARS_TYPE.sub(lambda m: m.group(1), code)) + "')"
        code = code if code.strip().endswith(")") else code.strip() + ")"
        actions.append(_uitars_action(code.replace("\n", "\\n").lstrip(), text))
    return ParseResult(ok=True, format="uitars", actions=tuple(actions))


#: UI-TARS 1.0's grounding answer ("Output only the coordinate of one point", README_v1.md:320): the point alone.
_UITARS10_BARE = re.compile(r"\(\s*(\d{1,9})\s*,\s*(\d{1,9})\s*\)")


def _parse_uitars10(text: str) -> ParseResult:
    """UI-TARS 1.0: its grounding prompt (bytedance/UI-TARS @ 582f3a7 README_v1.md:320) asks for the point alone,
    which has no ``Action:``; the README's example of that output is ``(235, 512)`` on the 0-1000 grid
    (README_v1.md:452-457). So an answer that is exactly ``(x, y)`` (integers; box tokens removed, as
    :func:`_parse_uitars` removes them) is that click, mapped by :func:`_uitars10_bare_pixels`; any other answer
    is read as ``action_parser.py`` reads it (:func:`_parse_uitars`)."""
    body = text.strip()
    for token in _BOX_TOKENS:
        body = body.replace(token, "")
    m = _UITARS10_BARE.fullmatch(body.strip())
    if m is None:
        return _parse_uitars(text)
    x, y = int(m.group(1)), int(m.group(2))
    return _click("uitars", x, y, {"bare_point": [x, y]})


def _uitars10_bare_pixels(a: ParsedAction, g: ImageGeometry) -> Point | None:
    """README_v1.md:452-457: the bare point k divided by 1000 and times the image size, rounded to an integer
    (its example ``round(1920*235/1000)=451``); an ``Action:`` answer maps as action_parser.py does."""
    bare = a.raw.get("bare_point") if a.fmt == "uitars" else None
    if bare is None:
        return _UITARS10_PIXELS(a, g)
    return float(round(g.width * bare[0] / 1000)), float(round(g.height * bare[1] / 1000))


def _uitars_pixels(frame: Callable[[ImageGeometry], tuple[float, float]]) -> Callable[
        [ParsedAction, ImageGeometry], Point | None]:
    """``parsing_response_to_pyautogui_code`` (action_parser.py:474-483): the box's numbers divided by the frame's
    size (``frame``: 1000 for UI-TARS 1.0, ``factor``; the smart-resized size for 1.5, model_type ``qwen25vl``:
    :247-259), then ``round((x1 + x2) / 2 * W, 3)``."""

    def pixels(a: ParsedAction, g: ImageGeometry) -> Point | None:
        box = a.raw.get("boxes", {}).get("start_box") if a.fmt == "uitars" else None
        if box is None:
            return None
        fw, fh = frame(g)
        x1, y1, x2, y2 = box[0] / fw, box[1] / fh, box[2] / fw, box[3] / fh
        return round(float((x1 + x2) / 2) * g.width, 3), round(float((y1 + y2) / 2) * g.height, 3)

    return pixels


_UITARS10_PIXELS = _uitars_pixels(lambda g: (1000, 1000))


# ------------------------------------------------------------------------------------------------ SeeClick

_SEECLICK_SOURCE = "njucckevin/SeeClick @ 661ff1b pretrain/"
_SEECLICK_BOX = re.compile(r"<box>\((\d+),(\d+)\),\((\d+),(\d+)\)</box>")
_SEECLICK_NUMBER = re.compile(r"-?\d+\.?\d*")


def _parse_seeclick(text: str) -> ParseResult:
    """SeeClick's ScreenSpot script: an answer containing ``box`` anywhere is read by ``extract_bbox`` (every
    ``<box>(x1,y1),(x2,y2)</box>`` of integers without spaces; the first box's centre, divided by 1000); none
    there is wrong format. Any other answer by ``pred_2_point``: every number ``-?\\d+\\.?\\d*`` of the text,
    2 of them the point, 4 the centre of the box, any other count wrong format; fractions of the screenshot."""
    answer = {"answer": text.strip()[:256]}
    if "box" in text:
        found = _SEECLICK_BOX.search(text)
        if found is None:
            raise _Wrong("'box' in the answer without a <box>(x1,y1),(x2,y2)</box> of integers")
        x1, y1, x2, y2 = (_digits(v) for v in found.groups())
        return _click("seeclick", (x1 + x2) / 2 / 1000, (y1 + y2) / 2 / 1000, answer)
    numbers = [float(n) for n in _SEECLICK_NUMBER.findall(text)]
    if len(numbers) == 2:
        return _click("seeclick", numbers[0], numbers[1], answer)
    if len(numbers) == 4:
        return _click("seeclick", (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2, answer)
    raise _Wrong(f"{len(numbers)} numbers (2 or 4 read)")


# ------------------------------------------------------------------------------------------------ Qwen2.5-VL

_QWEN25_SOURCE = ("QwenLM/Qwen2.5-VL cookbooks/spatial_understanding.ipynb as copied in the fork "
                  "jaylim13/Qwen2.5-VL-fork @ 40239aa (QwenLM @ f0af299's blob e28ff778 is not in the snapshot)")
_QWEN25_BOXES = "qwen25_bbox_2d"


def _qwen25_boxes(text: str) -> list[list[float]]:
    """The cookbook's ``parse_json`` (the lines after a line that is exactly ```` ```json ````, up to the next
    ```` ``` ````), then ``ast.literal_eval`` of that (here the bounded literal reader: no expression is
    computed), else of it cut after its last ``"}`` and closed with ``]``; then ``plot_bounding_boxes``'s loop:
    every item's ``bbox_2d``, its first four numbers (a dict answer iterates its keys and fails there)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line == "```json":
            text = "\n".join(lines[i + 1:]).split("```")[0]
            break
    try:
        value = _python_value(text)
    except _Wrong:
        value = _python_value(text[:text.rfind('"}') + len('"}')] + "]")
    if not isinstance(value, (list, tuple)):
        raise _Wrong("the answer is not a list of boxes")
    boxes = []
    for item in value:
        box = item.get("bbox_2d") if isinstance(item, dict) else None
        if not isinstance(box, (list, tuple)) or len(box) < 4 or not all(_is_number(v) for v in box[:4]):
            raise _Wrong("an item without a bbox_2d of four numbers")
        boxes.append([float(v) for v in box[:4]])
    if not boxes:
        raise _Wrong("no box")
    return boxes


def _parse_qwen25vl(text: str) -> ParseResult:
    """Qwen2.5-VL's cookbook reading of a ``bbox_2d`` answer (:func:`_qwen25_boxes`); the first box is the
    answer, scored at its centre."""
    box = _qwen25_boxes(text)[0]
    return ParseResult(ok=True, format="qwen_grounding", actions=(ParsedAction(
        action="click", point=((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), fmt=_QWEN25_BOXES,
        raw={"bbox_2d": box, "answer": text.strip()[:256]}),))


def _qwen25vl_pixels(a: ParsedAction, g: ImageGeometry) -> Point | None:
    """``plot_bounding_boxes``: each corner ``int(x / input_width * width)`` (truncated; input_width the
    smart-resized width), corners swapped when reversed; the centre of that box."""
    box = a.raw.get("bbox_2d") if a.fmt == _QWEN25_BOXES else None
    if box is None:
        return None
    x1, x2 = sorted((int(box[0] / g.resized_width * g.width), int(box[2] / g.resized_width * g.width)))
    y1, y2 = sorted((int(box[1] / g.resized_height * g.height), int(box[3] / g.resized_height * g.height)))
    return (x1 + x2) / 2, (y1 + y2) / 2


# ------------------------------------------------------------------------------------------------ Aguvis

_AGUVIS_XY = re.compile(r"x=([\d.]+), y=([\d.]+)")


def _parse_aguvis(text: str) -> ParseResult:
    """VLMEvalKit's ``parse_bbox_aguvis`` (Aguvis publishes no evaluation code): the first ``x=<digits and
    dots>, y=<digits and dots>`` (one space), ``float()`` of each (``1.2.3`` raises: wrong format); none is the
    point (0.0, 0.0)."""
    found = _AGUVIS_XY.search(text)
    if found is None:
        return _click("aguvis", 0.0, 0.0, {"answer": text.strip()[:256], "fallback": "no x=.., y=..: [0.0, 0.0]"})
    try:
        x, y = float(found.group(1)), float(found.group(2))
    except ValueError:
        raise _Wrong(f"{found.group()[:60]!r} is not two numbers") from None
    return _click("aguvis", x, y, {"answer": text.strip()[:256]})


def _aguvis_pixels(a: ParsedAction, g: ImageGeometry) -> Point | None:
    """VLMEvalKit's ``evaluate_point``: a point with a coordinate above 1 is in pixels of the screenshot (both
    divided by its size there), else fractions of it."""
    if a.fmt != "aguvis" or a.point is None:
        return None
    x, y = a.point
    return (x, y) if x > 1 or y > 1 else (x * g.width, y * g.height)


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
    "uivenus15": Reading(
        _guard("venus", _parse_venus15),
        "inclusionAI/UI-Venus @ c3a1442 models/grounding/eval_screenspot_pro.py:147-175 (_parse_point), :134-139 "
        "([-1, -1] infeasible, None wrong format)"),
    "uivenus": Reading(
        _guard("box", _parse_eval_box),
        "inclusionAI/UI-Venus @ fc7670d models/grounding/ui_venus_ground_7b.py:88-98 (eval, [0, 0, 0, 0], centre)"),
    "guig2": Reading(
        _guard("box", _parse_eval_box),
        "ZJU-REAL/GUI-G2 @ 5c5c365 README.md:213-223 (infer(): eval, [0, 0, 0, 0], centre)"),
    "gta1": Reading(
        _guard("point", _parse_gta1),
        "Yan98/GTA1 @ 81f0c4c README.md:132-137 (extract_coordinates), :196-198 (pred_x *= scale_x)",
        _gta1_pixels),
    "mai_ui": Reading(
        _guard("mai_ui", _parse_mai_ui),
        "Tongyi-MAI/MAI-UI @ 4dd07b9 evaluation/grounding/eval_server.py:35-41 (parse_coordinates), :95-104"),
    "infigui_g1": Reading(
        _guard("infigui", _parse_infigui),
        "InfiXAI/InfiGUI-G1 @ 22208e4 eval/prompts.py:5-27 (extract_and_parse_json), :148-156 "
        "(extract_coordinates), :187-214 ([] right only without a target; the first point_2d)"),
    "qwen3vl": Reading(
        _guard("qwen_grounding", _parse_qwen3vl),
        "QwenLM/Qwen3-VL @ 9658872 cookbooks/spatial_understanding.ipynb:91-116 (decode_json_points), :140-141 "
        "(int(point[0]) / 1000 * width)",
        _qwen3vl_pixels,
        navigation=Reading(
            _guard("tool_call", _parse_qwen3vl_agent),
            f"{_QWEN3VL_AGENT} (a one-line file): cell 7 (the system prompt's 999x999 screen; json.loads of the first "
            "<tool_call>), cell 4 (rescale_coordinates: round(p / 999 * W))",
            _qwen3vl_agent_pixels, template=QWEN3VL_AGENT_TEMPLATE)),
    "uitars": Reading(
        _guard("uitars", _parse_uitars10),
        f"{_UITARS_SOURCE}:146-276 (parse_action_to_structure_output; 1.0: numbers / factor 1000, :259), "
        ":468-483 (round((x1 + x2) / 2 * W, 3)); the bare grounding point (x, y): bytedance/UI-TARS @ 582f3a7 "
        "README_v1.md:320 (prompt), :452-457 (round(W * x / 1000))",
        _uitars10_bare_pixels),
    "uitars15": Reading(
        _guard("uitars", _parse_uitars),
        f"{_UITARS_SOURCE}:146-276 (parse_action_to_structure_output; model_type qwen25vl: numbers / the "
        "smart_resize size, :164-170, :248-257), :468-483 (round((x1 + x2) / 2 * W, 3))",
        _uitars_pixels(lambda g: (g.resized_width, g.resized_height))),
    "seeclick": Reading(
        _guard("seeclick", _parse_seeclick),
        f"{_SEECLICK_SOURCE}screenspot_test.py:80-86 ('box' in the answer: extract_bbox, centre / 1000; else "
        "pred_2_point), process_utils.py:27-34 (pred_2_point: 2 or 4 numbers), :37-42 (extract_bbox)"),
    "qwen25vl": Reading(
        _guard("qwen_grounding", _parse_qwen25vl),
        f"{_QWEN25_SOURCE}: first code cell, parse_json (the ```json fence), plot_bounding_boxes (ast.literal_eval, "
        "the cut after the last '\"}', int(bbox_2d[0] / input_width * width))",
        _qwen25vl_pixels),
    "aguvis": Reading(
        _guard("aguvis", _parse_aguvis),
        "open-compass/VLMEvalKit @ e8e78f05 vlmeval/dataset/GUI/screenspot.py:44-50 (parse_bbox_aguvis), :384-387 "
        "(above 1: pixels); Aguvis publishes no evaluation code",
        _aguvis_pixels, grounding_only=True),
    "guir1": Reading(
        _guard(_GUIR1_FMT, _parse_guir1_screenspot),
        f"{_GUIR1_SOURCE}:37-58 (extract_coord: the first <answer>, the regex, else [0, 0, 0, 0]), :106 and "
        ":120-121 (origin: qwen-vl-utils' fetch_image size), :117-123 (scale = origin / resized: torch's "
        "reciprocal(resized) * origin in float32), :195 "
        "(pred_coord = point * scale, compared unmapped); navigation answers: the guir1 parser (its extract_action)",
        _guir1_screenspot_pixels, grounding_only=True),
    "guiowl15": Reading(
        _guard("guiowl15", _parse_guiowl),
        "X-PLUG/MobileAgent @ 11cea57 Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py:382-383 "
        "(a 1000 x 1000 frame), :388-393 (the two regexes), :402-410 (the last match, [0, 0], a terminate too)"),
}


def authors_reading(preset: str) -> Reading | None:
    """The authors' reading of ``preset``'s answers; None when it has none of its own (its parser is the authors'
    format already)."""
    return AUTHORS.get(preset)


def read_answer(text: str, preset: str, parser: str, reading: str, grounding: bool = True,
                template: str | None = None) -> tuple[ParseResult, Reading | None]:
    """``text`` parsed as ``reading`` says (``authors``: the preset's :data:`AUTHORS` entry when it has one, else
    ``parser``; ``tolerant``: ``parser``), and the :class:`Reading` used (None: the tolerant parser). A
    ``grounding_only`` reading applies only when ``grounding`` (the row's benchmark is a grounding one); a reading
    with a ``navigation`` one reads other answers with that; a reading of one ``template`` only reads rows that
    record it, or record none (``template``: the row's)."""
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}; known: {', '.join(READINGS)}")
    chosen = authors_reading(preset) if reading == "authors" else None
    if chosen is not None and chosen.grounding_only and not grounding:
        chosen = None
    if chosen is not None and chosen.navigation is not None and not grounding:
        chosen = chosen.navigation
    if chosen is not None and chosen.template is not None and template is not None and template != chosen.template:
        chosen = None
    if chosen is None:
        return parse_action(text, fmt=parser), None
    return chosen.parse(text), chosen


__all__ = ["AUTHORS", "DEFAULT_READING", "QWEN3VL_AGENT_TEMPLATE", "READINGS", "Reading", "authors_reading", "read_answer"]
