"""GUI-R1's ``r1gui`` reward: ``overall = 0.8 * accuracy + 0.2 * format``, in two modes.

``mode="guir1"`` gives the published reward (ritzz-ai/GUI-R1 ``verl/utils/reward_score/r1gui.py`` at
d43eea2) number for number, without evaluating anything:

* format: the whole text must match ``<think>.*?</think>\\s*<answer>.*?</answer>`` (no surrounding
  whitespace); the first ``<answer>`` body, stripped, must be a list of dicts each with ``action`` (str),
  ``point`` whose items 0 and 1 are ints (bools count), ``input_text`` (str); type/select/open_app must not
  say ``'no input text'``; scroll must say exactly up/down/left/right. An empty list passes.
* accuracy: ground truth ``{"action", "gt_bbox", "input_text"}`` as JSON; the predicted action is
  ``'action':\\s*'(\\w+)'`` in the first answer body (single quotes only), lower-cased; a click point is the
  last ``[int,\\s*int]`` on the first line that has a ``{`` before it and a ``}`` after it, else (0, 0); a
  4-number box must contain it strictly, a 2-number point be nearer than 140 (squared distance < 19600);
  type/select/scroll compare ``'input_text':\\s*'(.*?)'`` with GUI-R1's float F1 >= 0.5; any other
  action scores 1 when the names match.

Deliberate differences of the compat mode, both only on inputs the reference would *execute*:

1. The reference calls ``eval()`` on the answer. Here the answer is read with ``ast`` as a literal only;
   answers that need real evaluation (arithmetic such as ``[1+1, 2]``, ``--5``, ``+True``, names other than
   True/False/None, calls, comprehensions, f-strings, ``*`` unpacking) score format 0 where the reference
   would run them and possibly score 1.
2. Answer bodies longer than :data:`GUIR1_MAX_ANSWER_CHARS` score 0 for format and accuracy (the reference
   would ``eval`` them and run a backtracking regex that is quadratic in their length).

``mode="default"`` fixes what the reference gets wrong (each has a test in ``tests/test_rewards_r1gui.py``):

* answers are read by :func:`core.parsers.parse_action` (JSON or Python literal, either quote style,
  pretty-printed, whitespace around the tags and around the whole completion);
* names with punctuation (``close/delete``) and double-quoted answers are understood;
* negative and float points are read as numbers (a negative point is simply outside every box);
* a missing point is a miss, not (0, 0);
* long_press, doubleclick, rightclick, moveto check their point; open_app checks its text;
* scroll directions compare case-insensitively; ``enter`` == ``press_enter``;
* text F1 has no float edge (:func:`core.text_match.text_match`);
* boxes are inclusive (a click on the edge hits);
* the ground truth is read through :func:`core.records.from_reward_inputs` (any flavour, any frame:
  ``extra_info`` ``frame``, ``image_size``, ``resized_size``) and judged by :func:`core.matching.match`; a point
  ground truth is hit within 14% of the screen (:data:`core.matching.POINT_RADIUS`), not 140 pixels of
  whatever size the image was resized to; bad ground truth raises :class:`RewardInputError` instead of
  scoring 0 silently;
* an empty answer list or an unknown action name fails the format.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.actions import NO_INPUT_TEXT, POINT_ACTIONS
from core.parsers import (
    TOL_ARGS_STRING,
    TOL_BOX_POINT,
    TOL_CODE_FENCE,
    TOL_KEY_ALIAS,
    TOL_MISSING_INPUT_TEXT,
    TOL_NO_CLOSE_TAG,
    TOL_NO_THINK,
    TOL_STRING_POINT,
    TOL_SURROUNDING_TEXT,
    parse_action,
)
from core.matching import GUIR1_PIXEL_RADIUS, POINT_RADIUS, Match, Predicted, match
from core.records import GoldRecord, from_reward_inputs
from core.rewards.common import Knobs, RewardInputError, load_ground_truth, predicted
from core.text_match import guir1_text_match

MODES = ("default", "guir1")
#: Keys of every r1gui result, in order (the same for every sample and both modes).
KEYS = ("overall", "format", "accuracy", "action_match", "arg_match", "parsed")
#: Longest answer body the compat mode reads (characters); see the module docstring.
GUIR1_MAX_ANSWER_CHARS = 32_768
#: Longest completion the default mode parses (characters).
MAX_COMPLETION_CHARS = 2_000_000

_OPEN, _CLOSE = "<answer>", "</answer>"
_THINK_TO_ANSWER = re.compile(r"</think>\s*<answer>")
_WS = re.compile(r"\s*")
_ACTION = re.compile(r"'action':\s*'(\w+)'")
_INPUT_TEXT = re.compile(r"'input_text':\s*'(.*?)'")
_COORD = re.compile(r"\[(\d+),\s*(\d+)]")


# --------------------------------------------------------------------------------------------- shared text


def outer_format_ok(text: str) -> bool:
    """``<think>.*?</think>\\s*<answer>.*?</answer>`` matches the WHOLE text (DOTALL), in linear time."""
    if not (text.startswith("<think>") and text.endswith(_CLOSE)):
        return False
    m = _THINK_TO_ANSWER.search(text, len("<think>"))
    return m is not None and m.end() <= len(text) - len(_CLOSE)


def first_answer_body(text: str) -> str | None:
    """The text between the first ``<answer>`` and the next ``</answer>`` (unstripped), or None."""
    i = text.find(_OPEN)
    if i < 0:
        return None
    j = text.find(_CLOSE, i + len(_OPEN))
    return None if j < 0 else text[i + len(_OPEN):j]


# --------------------------------------------------------------------------------------------- guir1 mode


def _literal_action_list(src: str) -> list | None:
    """The value of ``src`` when it is a literal list whose items are literal dicts, else None.

    Anything else scores format 0 in the reference too (not a list, or an item not a dict) except
    non-literal Python, which the reference would evaluate and we refuse to.
    """
    try:
        node = ast.parse(src, mode="eval").body
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError (NUL), RecursionError, MemoryError
        return None
    if not isinstance(node, ast.List):
        return None
    out = []
    for item in node.elts:
        if not isinstance(item, ast.Dict):
            return None
        try:
            out.append(ast.literal_eval(item))
        except Exception:  # noqa: BLE001 - non-literal, unhashable key, too deep
            return None
    return out


def _guir1_item_ok(item: dict) -> bool:
    if "action" not in item or "point" not in item or "input_text" not in item:
        return False
    action, point, text = item["action"], item["point"], item["input_text"]
    if not isinstance(action, str):
        return False
    try:  # indexing a literal (list, tuple, str, bytes, dict ...) runs no model code
        if not (isinstance(point[0], int) and isinstance(point[1], int)):
            return False
    except Exception:  # noqa: BLE001 - IndexError, KeyError, TypeError
        return False
    if not isinstance(text, str):
        return False
    if action in ("type", "select", "open_app") and text == NO_INPUT_TEXT:
        return False
    return not (action == "scroll" and text not in ("left", "right", "up", "down"))


def guir1_format(completion: str) -> float:
    """GUI-R1's format reward (0.0 or 1.0); see the module docstring."""
    if not isinstance(completion, str) or not outer_format_ok(completion):
        return 0.0
    body = first_answer_body(completion)
    if body is None or len(body) > GUIR1_MAX_ANSWER_CHARS:
        return 0.0
    actions = _literal_action_list(body.strip())
    if actions is None:
        return 0.0
    return 1.0 if all(_guir1_item_ok(a) for a in actions) else 0.0


class _NextIndex:
    """``text.find(ch, pos)`` for non-decreasing ``pos``, amortised linear over all queries."""

    def __init__(self, text: str, ch: str):
        self.text, self.ch, self.found = text, ch, -2

    def at(self, pos: int) -> int:
        if self.found == -1 or self.found >= pos:
            return self.found
        self.found = self.text.find(self.ch, pos)
        return self.found


def guir1_point(body: str) -> tuple[int, int] | None:
    """GUI-R1's click point: ``re.search(r'\\{.*\\[(\\d+),\\s*(\\d+)]\\s*.*\\}', body)`` without backtracking.

    That search picks the first line holding a ``{`` followed (same line) by a ``[d,\\s*d]`` that has a
    ``}`` after it (after whitespace that may span lines, then on one line), and on that line the LAST such
    ``[d, d]``. None when there is none or a number exceeds ``int``'s digit limit (the reference then uses
    (0, 0)).
    """
    best: re.Match | None = None
    best_line = last_nl = last_brace = -1
    scanned = 0
    next_close, next_nl = _NextIndex(body, "}"), _NextIndex(body, "\n")
    for m in _COORD.finditer(body):
        start = m.start()
        nl = body.rfind("\n", scanned, start)
        if nl >= 0:
            last_nl = nl
        br = body.rfind("{", scanned, start)
        if br >= 0:
            last_brace = br
        scanned = start
        if best is not None and last_nl != best_line:
            break  # a later line: the earlier line's last candidate wins
        if last_brace <= last_nl:
            continue  # no '{' earlier on this line
        k = _WS.match(body, m.end()).end()  # type: ignore[union-attr]
        eol = next_nl.at(k)
        close = next_close.at(k)
        if close < 0 or (0 <= eol < close):
            continue
        best, best_line = m, last_nl
    if best is None:
        return None
    try:
        return int(best.group(1)), int(best.group(2))
    except ValueError:  # more digits than int() accepts
        return None


def _guir1_box_hit(point: tuple[int, int], gt_bbox: Any) -> bool:
    """GUI-R1's click check, same Python operators (so the same TypeError/OverflowError -> miss)."""
    x, y = point
    try:
        if len(gt_bbox) == 2:
            return (x - gt_bbox[0]) ** 2 + (y - gt_bbox[1]) ** 2 < GUIR1_PIXEL_RADIUS ** 2
        if len(gt_bbox) == 4:
            return (gt_bbox[0] < x < gt_bbox[2]) and (gt_bbox[1] < y < gt_bbox[3])
    except Exception:  # noqa: BLE001 - whatever the reference's bare except swallowed
        return False
    return False


def guir1_accuracy(completion: str, ground_truth: Any) -> dict[str, float]:
    """GUI-R1's accuracy reward with its parts: ``accuracy``, ``action_match``, ``arg_match``, ``parsed``."""
    out = {"accuracy": 0.0, "action_match": 0.0, "arg_match": 0.0, "parsed": 0.0}
    try:
        gt = load_ground_truth(ground_truth)
    except RewardInputError:
        return out
    if not all(k in gt for k in ("action", "gt_bbox", "input_text")) or not isinstance(gt["action"], str):
        return out
    gt_action, gt_bbox, gt_text = gt["action"].lower(), gt["gt_bbox"], gt["input_text"]
    body = first_answer_body(completion) if isinstance(completion, str) else None
    if body is not None and len(body) > GUIR1_MAX_ANSWER_CHARS:
        return out
    m = _ACTION.search(body) if body is not None else None
    out["parsed"] = 1.0 if m is not None else 0.0
    pred_action = (m.group(1) if m else "no action").lower()
    if pred_action != gt_action:
        return out
    out["action_match"] = 1.0
    if gt_action == "click":
        point = (guir1_point(body) if body is not None else None) or (0, 0)
        hit = _guir1_box_hit(point, gt_bbox)
    elif gt_action in ("type", "select", "scroll"):
        t = _INPUT_TEXT.search(body) if body is not None else None
        pred_text = t.group(1) if t else NO_INPUT_TEXT
        hit = isinstance(gt_text, str) and guir1_text_match(pred_text, gt_text)
    else:
        hit = True
    out["arg_match"] = out["accuracy"] = 1.0 if hit else 0.0
    return out


# --------------------------------------------------------------------------------------------- default mode

#: Parser tolerances that break the format in the default mode (the rest are accepted spellings).
FORMAT_BREAKING = frozenset({TOL_NO_THINK, TOL_NO_CLOSE_TAG, TOL_SURROUNDING_TEXT, TOL_CODE_FENCE, TOL_KEY_ALIAS,
                             TOL_MISSING_INPUT_TEXT, TOL_ARGS_STRING, TOL_STRING_POINT, TOL_BOX_POINT})


def default_format(completion: str) -> float:
    """1.0 when the completion is ``<think>..</think> <answer>[..]</answer>`` (whitespace around the tags
    allowed) and the answer parses as valid actions without a format-breaking tolerance."""
    if not isinstance(completion, str) or len(completion) > MAX_COMPLETION_CHARS:
        return 0.0
    if not outer_format_ok(completion.strip()):
        return 0.0
    res = parse_action(completion, fmt="guir1", max_chars=MAX_COMPLETION_CHARS)
    return 1.0 if res.ok and not FORMAT_BREAKING.intersection(res.tolerances) else 0.0


@dataclass(frozen=True)
class Judged:
    """One completion read and compared with its gold record: ``parts`` (accuracy and its sub-checks, 0/1),
    the prediction (None when the answer did not parse) and :class:`core.matching.Match` (None likewise)."""

    parts: dict[str, float]
    gold: GoldRecord
    pred: Predicted | None
    match: Match | None


def judge(completion: str, ground_truth: Any, extra_info: Mapping | None = None, *,
          point_radius: float | None = None) -> Judged:
    """Parse ``completion`` and compare it with the gold record (:func:`core.matching.match`; ``point_radius`` in
    fractions of the screen for point ground truths, default :data:`core.matching.POINT_RADIUS`). Raises
    :class:`RewardInputError` on unusable ground truth."""
    gold = from_reward_inputs(ground_truth, extra_info)
    if gold.action in POINT_ACTIONS and not gold.has_target:
        raise RewardInputError("gt_bbox", "a point action needs gt_bbox (or extra_info.bbox_original)")
    out = {"accuracy": 0.0, "action_match": 0.0, "arg_match": 0.0, "parsed": 0.0}
    res = parse_action(completion, fmt="auto", max_chars=MAX_COMPLETION_CHARS) if isinstance(completion, str) \
        else None
    if res is None or not res.ok or res.action is None:
        return Judged(out, gold, None, None)
    out["parsed"] = 1.0
    try:
        pred = predicted(res.action, extra_info)
    except ValueError:  # a tool call whose arguments are no action
        return Judged(out, gold, None, None)
    m = match(pred, gold, radius=POINT_RADIUS if point_radius is None else point_radius)
    if m.type_ok:
        out["action_match"] = 1.0
        out["arg_match"] = out["accuracy"] = 1.0 if m.ok else 0.0
    return Judged(out, gold, pred, m)


def default_accuracy(completion: str, ground_truth: Any, extra_info: Mapping | None = None, *,
                     point_radius: float | None = None) -> dict[str, float]:
    """Corrected accuracy with parts (see :func:`judge`). Raises :class:`RewardInputError` on unusable ground
    truth."""
    return judge(completion, ground_truth, extra_info, point_radius=point_radius).parts


# --------------------------------------------------------------------------------------------- public


def r1gui_score(completion: str, ground_truth: Any, extra_info: Mapping | None = None, *, mode: str = "default",
                knobs: Knobs | None = None, point_radius: float | None = None) -> dict[str, float]:
    """Score one completion; returns :data:`KEYS` (``overall``, ``format``, ``accuracy`` and the parts).

    ``mode="guir1"``: the published reward (never raises; bad ground truth scores accuracy 0).
    ``mode="default"``: the corrected reward (raises :class:`RewardInputError` on bad ground truth).
    """
    knobs = knobs or Knobs()
    if mode == "guir1":
        fmt = guir1_format(completion)
        acc = guir1_accuracy(completion, ground_truth)
    elif mode == "default":
        fmt = default_format(completion)
        acc = default_accuracy(completion, ground_truth, extra_info, point_radius=point_radius)
    else:
        raise ValueError(f"unknown r1gui mode {mode!r}; known: {list(MODES)}")
    return {"overall": knobs.overall(acc["accuracy"], fmt), "format": fmt, **acc}


__all__ = ["FORMAT_BREAKING", "GUIR1_MAX_ANSWER_CHARS", "KEYS", "MODES", "Judged", "default_accuracy",
           "default_format", "first_answer_body", "guir1_accuracy", "guir1_format", "guir1_point", "judge",
           "outer_format_ok", "r1gui_score"]
