"""Online episodes: a model (or a scripted / random policy) acting in an environment, judged by task success.

- :mod:`core.rollout.session`: :class:`EpisodeSession`, the one implementation of the episode loop (prompt from
  the env's screenshot and info, parse the answer, map frames, step the env, record the turn). ``gui-agent
  rollout`` and the verl agent loop both drive it.
- :mod:`core.rollout.policies`: model backends, the scripted (gold) and the random policy.
- :mod:`core.rollout.runner`: many episodes, resumable ``episodes.jsonl``, the summary and the episode gallery.
- :mod:`core.rollout.envs`: the environments ``--env`` names.

Importing the package imports none of them (``gui-agent rollout --help`` stays light): the names below load
:mod:`core.rollout.session` when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.rollout.session import Episode, EpisodeSession, StepRecord

__all__ = ["Episode", "EpisodeSession", "StepRecord"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("core.rollout.session"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
