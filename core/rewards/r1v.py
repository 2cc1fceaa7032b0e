"""R1-V-GUI-agent's GRPO rewards, as published (github.com/kokolerk/R1-V-GUI-agent @ ee820b2,
``r1-v/src/open_r1/grpo_gui.py``: ``accuracy_reward`` and ``format_reward``).

* accuracy: the gold call is the ``<answer>`` body of the ``solution`` string; the predicted call is the text
  after ``assistantos`` (Aguvis' ``<|recipient|>os`` once special tokens are dropped) or the whole completion,
  stripped (:func:`core.eval.aitw.pred_call` without ``<answer>`` extraction); both are split by
  ``(.+?)\\((.+?)\\)`` (:func:`core.eval.aitw.identical_match`): 0.5 when the names before ``(`` are equal, plus
  0.5 when the parameter texts are identical too; 0 when either call does not split. Published quirks kept: a
  call with empty parentheses (``mobile.home()``) never scores, and an ``<answer>``-tagged completion gets the
  name ``<answer>pyautogui.click``, which never equals the gold name.
* format (R1-V's "think format", Aguvis' inner monologue): 0.5 when the whole completion matches
  :data:`FORMAT_PATTERN` (``re.fullmatch``, DOTALL), else 0. The regex backtracks for minutes on some 30 kB
  texts, so :func:`think_format` decides the same language in linear time: the text starts with ``content:``
  and holds ``Thought:``, ``Action:`` and ``assistantos`` in that order without overlap (every ``(.*?)`` may
  take anything, whitespace included); a test checks the two agree.

``overall = accuracy + format`` (trl adds its reward functions with weight 1 each). Completions longer than
:data:`MAX_COMPLETION_CHARS` (far beyond R1-V's 2048 completion tokens) score 0: nothing is matched on them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.eval.aitw import gold_call, identical_match, pred_call
from core.rewards.common import RewardInputError

KEYS = ("overall", "accuracy", "format", "type_match", "param_match")
FORMAT_PATTERN = re.compile(r"content:\s*(.*?)\s*Thought:\s*(.*?)\s*Action:\s*(.*?)\s*assistantos\s*(.*)", re.DOTALL)
MAX_COMPLETION_CHARS = 32_768


def think_format(text: str) -> bool:
    """Whether ``FORMAT_PATTERN.fullmatch(text)`` would match, in linear time (earliest occurrences suffice)."""
    if not text.startswith("content:"):
        return False
    pos = len("content:")
    for marker in ("Thought:", "Action:", "assistantos"):
        pos = text.find(marker, pos)
        if pos < 0:
            return False
        pos += len(marker)
    return True


def r1v_score(completion: str, ground_truth: Any, extra_info: Mapping | None = None) -> dict[str, float]:
    """Score one completion against R1-V's ``solution`` string (``<answer>pyautogui.click(x=0.1, y=0.2)</answer>``)."""
    if not isinstance(ground_truth, str) or not ground_truth.strip():
        raise RewardInputError("solution", f"R1-V's ground truth is the solution call string, got {ground_truth!r:.80}")
    out = dict.fromkeys(KEYS, 0.0)
    if not isinstance(completion, str) or len(completion) > MAX_COMPLETION_CHARS:
        return out
    type_eq, params_eq = identical_match(pred_call(completion, answer_tags=False), gold_call(ground_truth))
    out["type_match"], out["param_match"] = float(type_eq), float(params_eq)
    out["accuracy"] = 0.5 * type_eq + 0.5 * (type_eq and params_eq)
    out["format"] = 0.5 if think_format(completion) else 0.0
    out["overall"] = out["accuracy"] + out["format"]
    return out


__all__ = ["FORMAT_PATTERN", "KEYS", "MAX_COMPLETION_CHARS", "r1v_score", "think_format"]
