"""The trivial baselines as a backend: ``gui-agent infer --backend baseline --model random|centre`` answers every
step without a model, in the step's answer format and frame, so baselines go through the same prediction files,
parser, metrics and rewards as a model (the learning demo, issue 16, reports them beside every stage).

- ``centre``: always taps the centre of the screenshot;
- ``random``: a uniformly random action kind (:data:`RANDOM_ACTIONS`) with a uniformly random point; the draw
  depends only on a key (the seed and the step's id), never on batching or order.

:func:`random_action` and :func:`centre_action` are also the rollout's ``random`` / ``centre`` policies
(:mod:`core.rollout.policies`); both write their action with :meth:`core.prompts.PromptTemplate.answer_for`.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

from core.actions import Action
from core.inference.backends.base import Generation, GenerationConfig
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
        return [Generation(text=r.template_obj.answer_for(r.step, r.geometry, self.action(r.step))) for r in requests]

    def close(self) -> None:
        pass


__all__ = ["BASELINES", "RANDOM_ACTIONS", "BaselineBackend", "centre_action", "random_action"]
