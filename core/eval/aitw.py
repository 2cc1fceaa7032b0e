"""AITW type / parameter accuracy as R1-V-GUI-agent reports it (``eval/test_aitw.py``), plus a tolerant variant.

Rows carry the gold call string in ``solution`` (its ``<answer>`` body when tagged) and the raw model text in
``pred`` (``model_output`` is accepted too), e.g. ``pyautogui.click(x=0.36, y=0.13)`` or ``mobile.home()``.

* identical (the paper's numbers): both strings are split by R1-V's pattern ``(.+?)\\((.+?)\\)``; type = the
  names before the first ``(`` are equal, param = the texts between the first ``(`` and the next ``)`` are
  identical, sr = both.  Quirk kept: a call with empty parentheses never matches the pattern, so ``mobile.home()``
  scores 0 even against itself.
* tolerant: names equal (empty parentheses allowed); arguments parsed as ``key=value`` / positional literals
  (never evaluated); a coordinate pair (``x``/``y`` or a 2-number list) within 14% of the screen
  (``hypot(dx, dy) < 0.14`` in normalized units; values above 1 are pixels divided by ``image_size``), text
  arguments by the corrected token F1 >= 0.5, anything else equal after lower-casing.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from core.eval.io import PredictionFileError, Record, pred_point
from core.eval.tally import NO_PRED, Failures, Unparseable
from core.matching import POINT_RADIUS

MAX_CALL_CHARS = 4096
_CALL = re.compile(r"(.+?)\((.+?)\)")
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_ASSISTANT_OS = re.compile(r"assistantos\s*(.*)", re.DOTALL)


def gold_call(solution: str) -> str:
    """R1-V: the ``<answer>`` body of the solution, else the solution, stripped."""
    m = _ANSWER.search(solution[: MAX_CALL_CHARS * 4])
    return (m.group(1) if m else solution).strip()[:MAX_CALL_CHARS]


def pred_call(output: str, *, answer_tags: bool = True) -> str:
    """R1-V takes the text after ``assistantos`` (Aguvis' recipient) or the whole output; an ``<answer>`` body is
    taken as well (``answer_tags``), since this project's models tag their answers; R1-V's training reward does
    not (``answer_tags=False``, :mod:`core.rewards.r1v`)."""
    text = output[: MAX_CALL_CHARS * 4]
    m = _ASSISTANT_OS.search(text)
    text = (m.group(1) if m else text).strip()
    m = _ANSWER.search(text) if answer_tags else None
    return (m.group(1) if m else text).strip()[:MAX_CALL_CHARS]


def split_call(call: str) -> tuple[str, str] | None:
    """(name, parameter text) as ``_CALL.search`` gives them (R1-V's pattern), or None when it does not match
    (e.g. empty parentheses). Linear time: the regex backtracks quadratically (a minute on ``"a(" * 2048``).
    ``.`` stops at newlines, so the match lies in the first line that has a ``(`` after its first character and
    a ``)`` at least two characters after that ``(``; a later ``(`` never helps when the first one fails."""
    for line in call.strip()[:MAX_CALL_CHARS].split("\n"):
        i = line.find("(", 1)
        j = line.find(")", i + 2) if i > 0 else -1
        if j > 0:
            return line[:i], line[i + 1:j]
    return None


def identical_match(pred: str, gold: str) -> tuple[bool, bool]:
    """R1-V's ``action_reward``: (type equal, parameters identical); both False when either does not split."""
    if not pred or not gold:
        return False, False
    a, b = split_call(pred), split_call(gold)
    if a is None or b is None:
        return False, False
    return a[0] == b[0], a[1] == b[1]


# ------------------------------------------------------------------------------------------- tolerant match

_TOKEN = re.compile(r"""\s*(?:(?P<key>[A-Za-z_]\w*)\s*=\s*)?(?P<val>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\[[^\[\]]*\]|[^,\[\]'"]+)\s*(?:,|$)""")
_LOOSE_CALL = re.compile(r"^\s*([\w.]+)\s*\((.*)\)\s*$", re.DOTALL)


def _literal(v: str) -> Any:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    if v.startswith("[") and v.endswith("]"):
        return [_literal(x) for x in v[1:-1].split(",") if x.strip()]
    try:
        return float(v)
    except ValueError:
        return v


def parse_args(params: str) -> dict[str, Any] | None:
    """``key=value`` / positional arguments of a call as Python values (strings, floats, lists); None if malformed."""
    out: dict[str, Any] = {}
    pos, i = 0, 0
    params = params.strip()
    while i < len(params):
        m = _TOKEN.match(params, i)
        if not m or m.end() == i:
            return None
        key = m.group("key")
        if key is None:
            key = f"_{pos}"
            pos += 1
        out[key] = _literal(m.group("val"))
        i = m.end()
    return out


def _norm_xy(xy: tuple[float, float], size: tuple[float, float] | None) -> tuple[float, float] | None:
    x, y = xy
    if abs(x) <= 1.0 and abs(y) <= 1.0:
        return x, y
    if size is None:
        return None
    return x / size[0], y / size[1]


def _coords(args: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[float, float]]]:
    rest, pts = dict(args), []
    if isinstance(rest.get("x"), float) and isinstance(rest.get("y"), float):
        pts.append((rest.pop("x"), rest.pop("y")))
    for k in sorted(rest):
        p = pred_point(rest[k])
        if isinstance(rest[k], list) and len(rest[k]) == 2 and p is not None:
            pts.append(p)
            rest.pop(k)
    return rest, pts


def tolerant_match(pred: str, gold: str, size: tuple[float, float] | None = None) -> tuple[bool, bool]:
    """(type equal, parameters equal within tolerance)."""
    from core.text_match import text_match

    a, b = _LOOSE_CALL.match(pred[:MAX_CALL_CHARS]), _LOOSE_CALL.match(gold[:MAX_CALL_CHARS])
    if not a or not b:
        return False, False
    if a.group(1) != b.group(1):
        return False, False
    pa, ga = parse_args(a.group(2)), parse_args(b.group(2))
    if pa is None or ga is None:
        return True, False
    (prest, ppts), (grest, gpts) = _coords(pa), _coords(ga)
    if len(ppts) != len(gpts) or set(prest) != set(grest):
        return True, False
    for p, g in zip(ppts, gpts, strict=False):
        pn, gn = _norm_xy(p, size), _norm_xy(g, size)
        if pn is None or gn is None or math.hypot(pn[0] - gn[0], pn[1] - gn[1]) >= POINT_RADIUS:
            return True, False
    for k, gv in grest.items():
        pv = prest[k]
        if isinstance(gv, str) and isinstance(pv, str):
            if not text_match(pv, gv):
                return True, False
        elif str(pv).strip().lower() != str(gv).strip().lower():
            return True, False
    return True, True


def _name(call: str) -> str:
    m = _LOOSE_CALL.match(call)
    return m.group(1) if m else "(unparseable)"


def score_aitw(records: Iterable[Record], fails: Failures) -> dict[str, Any]:
    """Stream AITW rows: identical (R1-V) and tolerant type / param / step accuracy over ALL rows."""
    n = t = p = s = tp = ts = 0
    confusion: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    unp = Unparseable()
    for rec in records:
        n += 1
        sol = rec.row.get("solution", rec.row.get("gt_call"))
        if not isinstance(sol, str) or not sol.strip():
            raise PredictionFileError(rec.where, "solution", "missing (the gold call string, e.g. "
                                      "'<answer>pyautogui.click(x=0.3, y=0.5)</answer>')")
        out = rec.row.get("pred", rec.row.get("model_output"))
        gold = gold_call(sol)
        size = pred_point(rec.row.get("image_size"))
        if not isinstance(out, str):
            unp.add(rec, "pred missing or not a string")
            pred = ""
        else:
            pred = pred_call(out)
            if split_call(pred) is None and _LOOSE_CALL.match(pred) is None:
                unp.add(rec, "no call found in the prediction")
        confusion[_name(gold)][_name(pred) if pred else NO_PRED] += 1
        ti, pi = identical_match(pred, gold)
        tt, pt = tolerant_match(pred, gold, size)
        t, p, s = t + ti, p + pi, s + (ti and pi)
        tp, ts = tp + pt, ts + (tt and pt)
        if not (tt and pt):
            fails.add(rec, reason="type mismatch" if not tt else "parameters differ", point=None,
                      pred_action=_name(pred) if pred else None, gt_box=None)

    def frac(k):
        return k / n if n else None

    metrics = {"type": frac(t), "param": frac(p), "sr": frac(s), "param_tolerant": frac(tp),
               "sr_tolerant": frac(ts)}
    counts = {"type": {"hits": t, "n": n}, "param": {"hits": p, "n": n}, "sr": {"hits": s, "n": n},
              "param_tolerant": {"hits": tp, "n": n}, "sr_tolerant": {"hits": ts, "n": n}}
    return {"n_rows": n, "metrics": metrics, "counts": counts,
            "confusion": {k: dict(v) for k, v in confusion.items()}, "unparseable": unp.as_dict(), "warnings": []}
