"""Dense reward for Qwen3-VL tool-call agents (verl mobile-agent recipe style).

Completion: ``Thought: ... Action: ... <tool_call>{"name": "mobile_use", "arguments": {...}}</tool_call>``.
Ground truth: any flavour :func:`core.records.from_reward_inputs` reads: GUI-R1's ``{"action", "gt_bbox",
"input_text"}`` or the ``mobile_use`` export's ``{"action": "click", "coordinate": [...]}`` /
``terminate``+``status`` / ``type``+``text`` / ``system_button``+``button``; coordinates in the frame given by
the ground truth or ``extra_info["frame"]`` (default 'grid1000', Qwen3-VL's). Judged by :func:`core.matching.match`.

Parts, each in [0, 1]:

* ``type``: canonical action names agree (``terminate`` -> complete/impossible, ``system_button`` ->
  press_back/press_home/..., ``swipe`` -> scroll, ``open`` -> open_app, ``key`` -> hotkey);
* ``coord``: 1 inside the box, then falling linearly to 0 at ``coord_radius`` (fraction of the screen,
  0.14 = 140 in the 0-1000 frame) from it; distances are measured in the normalized frame;
* ``text``: token F1 (:func:`core.text_match.text_f1`) for typed/opened/answered text, direction equality
  for scroll;
* ``format``: the recipe's answer layout, strictly (:func:`strict_format`): ``Thought: ...`` then a line
  ``Action: ...`` then exactly one ``<tool_call>...</tool_call>`` and nothing after it, the call parsing with no
  format-breaking leniency;
* ``completion``: on a last step (ground truth complete/impossible/answer: how an episode's last step is
  written) the model ended the episode the same way.

``overall`` is the weighted mean over the parts that apply to the step (type and format always; coord for
point actions; text for text/scroll actions; completion on last steps). Parts that do not apply are 0.
``accuracy`` is 1 when the step is fully right (type, point inside the box, text match). A completion that is not
exactly one ``mobile_use`` call (:func:`tool_call_problem`: none, several, another tool) scores 0 on every part:
the agent loop does not execute it either.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.actions import FREE_TEXT_ACTIONS, POINT_ACTIONS
from core.geometry import Frame
from core.matching import POINT_RADIUS, match
from core.parsers import (
    TOL_ARGS_STRING,
    TOL_BOX_POINT,
    TOL_KEY_ALIAS,
    TOL_NO_CLOSE_TAG,
    TOL_STRING_POINT,
    ParseResult,
    parse_tool_call,
)
from core.records import from_reward_inputs
from core.rewards.common import RewardInputError, predicted

KEYS = ("overall", "format", "accuracy", "type", "coord", "text", "completion")
#: The recipe's one tool (verl GUI-agent README, "Mobile Use Tool").
TOOL_NAME = "mobile_use"
TERMINAL_ACTIONS = frozenset({"complete", "impossible", "answer"})
_BREAKING = frozenset({TOL_ARGS_STRING, TOL_BOX_POINT, TOL_KEY_ALIAS, TOL_NO_CLOSE_TAG, TOL_STRING_POINT})


def strict_format(completion: str) -> bool:
    """``Thought: <text>`` first, a later line ``Action: <text>``, then exactly one ``<tool_call>...</tool_call>``
    ending the answer (surrounding whitespace allowed). Linear-time string checks (model text is untrusted)."""
    text = completion.strip()
    if not text.startswith("Thought:") or not text.endswith("</tool_call>"):
        return False
    if text.count("<tool_call>") != 1 or text.count("</tool_call>") != 1:
        return False
    head = text[:text.index("<tool_call>")]
    action_at = head.find("\nAction:")
    if action_at < 0:
        return False
    thought, action = head[len("Thought:"):action_at], head[action_at + len("\nAction:"):]
    return bool(thought.strip()) and bool(action.strip()) and head.endswith("\n")


def tool_call_problem(result: ParseResult) -> str | None:
    """Why a parsed answer is not exactly one ``mobile_use`` call (None when it is). A turn with a problem is not
    executed and earns nothing: several calls in one turn must not collect credit from the first one."""
    if not result.ok:
        return result.error or "no tool call"
    if len(result.actions) != 1:
        return f"expected exactly one tool call, got {len(result.actions)}"
    name = result.actions[0].raw.get("name")
    if name != TOOL_NAME:
        return f"unknown tool {name!r}"
    return None


@dataclass(frozen=True)
class DenseWeights:
    """Weights of the parts in ``overall`` (renormalised over the parts that apply)."""

    type: float = 0.3
    coord: float = 0.3
    text: float = 0.2
    format: float = 0.1
    completion: float = 0.1


def gui_agent_score(completion: str, ground_truth: Any, extra_info: Mapping | None = None, *,
                    weights: DenseWeights | None = None, coord_radius: float = POINT_RADIUS) -> dict[str, float]:
    """Dense reward with every part (:data:`KEYS`). Raises :class:`RewardInputError` on bad ground truth."""
    w = weights or DenseWeights()
    extra = extra_info or {}
    gold = from_reward_inputs(ground_truth, extra)
    if gold.frame_inferred and gold.frame is Frame.RESIZED:
        gold = replace(gold, frame=Frame.GRID1000)  # nothing said: Qwen3-VL's 0-1000 grid is this reward's default
    last_step = gold.action in TERMINAL_ACTIONS
    needs_point = gold.action in POINT_ACTIONS
    needs_text = gold.action in FREE_TEXT_ACTIONS or gold.action == "scroll"
    if needs_point and not gold.has_target:
        raise RewardInputError("gt_bbox", "a point action needs gt_bbox, coordinate or extra_info.bbox_original")

    parts = dict.fromkeys(KEYS, 0.0)
    res = parse_tool_call(completion) if isinstance(completion, str) else None
    pred = None
    if res is not None and tool_call_problem(res) is None:
        try:
            pred = predicted(res.action, extra, Frame.GRID1000)
        except ValueError:
            pred = None
        if pred is not None and strict_format(completion) and not _BREAKING.intersection(res.tolerances):
            parts["format"] = 1.0
    if pred is not None:
        m = match(pred, gold, radius=coord_radius)
        if m.type_ok:
            parts["type"] = 1.0
            if needs_point:
                d = m.distance
                parts["coord"] = 1.0 if m.in_box or d == 0 else (max(0.0, 1.0 - d / coord_radius) if d else 0.0)
            if m.direction_ok is not None:
                parts["text"] = float(m.direction_ok)
            elif m.text_score is not None:
                parts["text"] = m.text_score
            if last_step:
                parts["completion"] = 1.0
            hit_point = not needs_point or parts["coord"] == 1.0
            parts["accuracy"] = float(hit_point and m.text_ok is not False and m.direction_ok is not False)
    applicable = [("type", w.type), ("format", w.format)]
    if needs_point:
        applicable.append(("coord", w.coord))
    if needs_text:
        applicable.append(("text", w.text))
    if last_step:
        applicable.append(("completion", w.completion))
    total = sum(wt for _, wt in applicable)
    parts["overall"] = sum(parts[k] * wt for k, wt in applicable) / total if total > 0 else 0.0
    return parts


__all__ = ["KEYS", "TOOL_NAME", "DenseWeights", "gui_agent_score", "strict_format", "tool_call_problem"]
