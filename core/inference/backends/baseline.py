"""The trivial baselines as a backend: ``gui-agent infer --backend baseline --model random|centre`` answers every
step without a model, in the step's answer format and frame, so baselines go through the same prediction files,
parser, metrics and rewards as a model (the learning demo, issue 16, reports them beside every stage).

- ``centre``: always taps the centre of the screenshot;
- ``random``: a uniformly random action kind (:data:`RANDOM_ACTIONS`) with a uniformly random point; the draw
  depends only on a key (the seed and the step's id), never on batching or order.

:func:`random_action` and :func:`centre_action` are also the rollout's ``random`` / ``centre`` policies
(:mod:`core.rollout.policies`), and :func:`answer_text` writes any action as a template's answer for both.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from dataclasses import replace

from core.actions import ACTION_NAMES, Action, from_mobile_use, to_mobile_use
from core.geometry import ImageGeometry
from core.inference.backends import Generation, GenerationConfig
from core.prompts import PromptTemplate
from core.schema import Step

BASELINES: tuple[str, ...] = ("random", "centre")
#: The action kinds the random baseline draws from, uniformly.
RANDOM_ACTIONS: tuple[str, ...] = ("click", "long_press", "scroll", "type", "press_back", "press_home",
                                   "press_enter", "wait", "complete")
_RANDOM_WORDS = ("hello", "alarm", "wifi", "alice", "on my way", "notes", "7", "search")


def random_action(key: str, screen_size: tuple[int, int]) -> Action:
    """The random baseline's action for ``key`` on a ``(width, height)`` screen (points in screen pixels)."""
    rng = random.Random(zlib.crc32(key.encode()))
    kind = rng.choice(RANDOM_ACTIONS)
    w, h = screen_size
    point = (rng.uniform(0, w - 1), rng.uniform(0, h - 1))
    if kind in ("click", "long_press"):
        return Action(type=kind, point=point)
    if kind == "scroll":
        return Action(type="scroll", direction=rng.choice(("up", "down", "left", "right")))
    if kind == "type":
        return Action(type="type", text=rng.choice(_RANDOM_WORDS))
    return Action(type=kind)


def centre_action(screen_size: tuple[int, int]) -> Action:
    """A tap on the centre of a ``(width, height)`` screen (screen pixels)."""
    return Action(type="click", point=(screen_size[0] / 2, screen_size[1] / 2))


def answer_text(template: PromptTemplate, step: Step, geometry: ImageGeometry, action: Action) -> str:
    """``action`` (screen pixels of ``step``) written as ``template`` writes a gold answer, in its format and
    frame. Any action name of the format is allowed, also one the prompt does not list (the parser accepts every
    known name); ``system_button`` / ``terminate`` become the format's ``press_*`` / ``complete``."""
    if action.type in ("system_button", "terminate"):
        action = from_mobile_use(to_mobile_use(action, *step.image_size) or {})
    relaxed: PromptTemplate = replace(template, actions=tuple(sorted(ACTION_NAMES)))
    return relaxed.gold_answer(step.model_copy(update={"action": action}), geometry)


class BaselineBackend:
    """A backend whose ``model`` is a baseline name; answers need ``template_obj`` and ``geometry`` of each
    request (every ready request has them)."""

    name = "baseline"

    def __init__(self, model: str, *, gen: GenerationConfig, batch_size: int | None = None):
        if model not in BASELINES:
            raise ValueError(f"--model {model!r}: the baseline backend answers as one of {', '.join(BASELINES)}")
        self.model = model
        self.seed = gen.seed
        self.batch_rows = batch_size or 64

    def action(self, step: Step) -> Action:
        size = step.image_size
        return centre_action(size) if self.model == "centre" else random_action(f"{self.seed}|{step.id}", size)

    def generate(self, requests: Sequence) -> list[Generation]:
        return [Generation(text=answer_text(r.template_obj, r.step, r.geometry, self.action(r.step)))
                for r in requests]

    def close(self) -> None:
        pass


__all__ = ["BASELINES", "RANDOM_ACTIONS", "BaselineBackend", "answer_text", "centre_action", "random_action"]
