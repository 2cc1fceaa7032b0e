"""Who answers in an episode. A policy takes the sessions waiting for an answer (batched, so a model backend
generates for many episodes in one call) and returns one :class:`Reply` per session, in order.

- :class:`BackendPolicy`: a ``core.inference`` backend (hf, vllm, openai) prompted with the session's request.
- :class:`ScriptedPolicy`: the env's next gold action written as model text in the session template's answer
  format (GUI-R1 JSON for ``guir1-*``, a ``mobile_use`` tool call for ``qwen3vl-mobile-use``): the upper bound
  that proves parser + frames + env agree.
- :class:`RandomPolicy`: a uniformly random action kind with a uniformly random screen point, written in the
  same format: the floor that proves the success metric discriminates.
- :class:`CentrePolicy`: always taps the screen centre (the other trivial baseline).

Scripted and random text goes through the same parser and frame mapping as a model's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from core.actions import Action
from core.inference.backends import Backend
from core.inference.backends.baseline import RANDOM_ACTIONS, centre_action, random_action
from core.rollout.session import EpisodeSession


class Reply(NamedTuple):
    """The model text of one turn, or why generation produced none."""

    text: str | None
    error: str | None = None


class Policy(Protocol):
    name: str

    def __call__(self, sessions: Sequence[EpisodeSession]) -> list[Reply]: ...


class ScriptedPolicy:
    """Answers with the env's gold action (``info["gold_action"]``) in the template's format and frame."""

    name = "scripted"

    def __call__(self, sessions: Sequence[EpisodeSession]) -> list[Reply]:
        return [Reply(s.gold_text()) for s in sessions]


class RandomPolicy:
    """Uniformly random actions (:func:`~core.inference.backends.baseline.random_action`); the draw depends only
    on (``seed``, episode id, step), not on batching."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def action(self, session: EpisodeSession) -> Action:
        """The random action for the session's next turn (screen pixels)."""
        return random_action(f"{self.seed}|{session.episode.id}|{len(session.episode.steps)}",
                             session.episode.screen_size)

    def __call__(self, sessions: Sequence[EpisodeSession]) -> list[Reply]:
        return [Reply(s.gold_text(self.action(s))) for s in sessions]


class CentrePolicy:
    """Always taps the centre of the screen (the trivial grounding baseline of the learning demo, issue 16)."""

    name = "centre"

    def __call__(self, sessions: Sequence[EpisodeSession]) -> list[Reply]:
        return [Reply(s.gold_text(centre_action(s.episode.screen_size))) for s in sessions]


class BackendPolicy:
    """A ``core.inference`` backend; one ``generate`` call per batch of waiting sessions."""

    name = "model"

    def __init__(self, backend: Backend):
        self.backend = backend

    def __call__(self, sessions: Sequence[EpisodeSession]) -> list[Reply]:
        gens = self.backend.generate([s.request() for s in sessions])
        return [Reply(g.text, g.error) for g in gens]


__all__ = ["RANDOM_ACTIONS", "BackendPolicy", "CentrePolicy", "Policy", "RandomPolicy", "Reply", "ScriptedPolicy"]
