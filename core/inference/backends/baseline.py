"""The trivial baselines as a backend: ``gui-agent infer --backend baseline --model random|centre|gold`` answers
every step without a model, in the step's answer format and frame, so baselines go through the same prediction
files, parser, metrics and rewards as a model (the learning demo, issue 16, reports them beside every stage).

- ``centre``: always taps the centre of the image the request shows;
- ``random``: a uniformly random action kind (:data:`RANDOM_ACTIONS`) with a uniformly random point; the draw
  depends only on a key (the seed and the step's id), never on batching or order;
- ``gold``: the step's gold action (an oracle: the ceiling of the pipeline, and a known answer for tests).

The image a request shows is the screenshot, or under ``--zoom`` the crop of the second stage (``request.crop``):
then ``centre`` taps the crop's centre, ``random`` draws in the crop and ``gold`` gives the gold point in the
crop's pixels (outside the crop when the crop missed it).

:func:`random_action` and :func:`centre_action` are also the rollout's ``random`` / ``centre`` policies
(:mod:`core.rollout.policies`); both write their action with :meth:`core.prompts.PromptTemplate.answer_for`.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

from core.actions import Action
from core.geometry import to_crop
from core.inference.backends.base import Generation, GenerationConfig, describe
from core.schema import Step

BASELINES: tuple[str, ...] = ("random", "centre", "gold")
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


def gold_action(step: Step, crop: tuple[int, int, int, int] | None = None) -> Action:
    """``step``'s gold action, its points in ORIGINAL pixels of the screenshot, or with ``crop`` (x1, y1, x2, y2,
    ORIGINAL pixels) in pixels of that crop."""
    a = step.action
    if crop is None:
        return a
    return a.model_copy(update={"point": None if a.point is None else to_crop(a.point, crop),
                                "end_point": None if a.end_point is None else to_crop(a.end_point, crop)})


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

    def action(self, request) -> Action:
        """The answer to ``request`` in pixels of the image it shows (:attr:`InferenceRequest.geometry`'s ORIGINAL
        size: the screenshot, or zoom's crop)."""
        size = (request.geometry.width, request.geometry.height)
        if self.model == "centre":
            return centre_action(size)
        if self.model == "random":
            return random_action(f"{self.seed}|{request.step.id}", size)
        return gold_action(request.step, request.crop)

    def generate(self, requests: Sequence) -> list[Generation]:
        out = []
        for r in requests:
            try:
                out.append(Generation(text=r.template_obj.answer_for(r.step, r.geometry, self.action(r))))
            except ValueError as e:  # a gold action the template's format cannot write (TemplateError)
                out.append(Generation(error=describe(e)))
        return out

    def close(self) -> None:
        pass


__all__ = ["BASELINES", "RANDOM_ACTIONS", "BaselineBackend", "centre_action", "gold_action", "random_action"]
