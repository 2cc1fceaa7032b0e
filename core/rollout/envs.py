"""The environments ``gui-agent rollout --env`` knows: how to make one and list its tasks.

Every env follows the shared contract of ``core.world`` (gymnasium API, screenshot observations in screen pixels,
``core.actions.Action`` actions, the ``info`` keys :class:`core.rollout.session.EpisodeSession` reads). A new env
adds one entry to :data:`ENVS`; imports happen only when the env is used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.console import quoted

# names only: selenium / miniwob load when the env starts (missing_setup imports them to check)
from core.envs.miniwob import DEFAULT_SUITE, SUITES, missing_setup


@dataclass(frozen=True)
class EnvEntry:
    """``make(**options)`` returns a fresh env; ``tasks(spec)`` the tasks of a split, in a fixed order, or of
    comma-separated task ids (all validated first: ``ValueError`` naming the unknown ones, before anything runs);
    ``default_split`` is what ``--tasks`` means when omitted (the held-out tasks); ``missing_setup()`` says in one
    line why the env cannot start here (a package or program missing, naming the setup command), None when it
    can."""

    make: Callable[..., Any]
    tasks: Callable[[str], list[Any]]
    default_split: str
    splits: tuple[str, ...]
    missing_setup: Callable[[], str | None] = lambda: None


def _sim_phone(**options: Any) -> Any:
    import gymnasium

    import core.world  # noqa: F401 - registers gui_agent/SimPhone-v0

    return gymnasium.make("gui_agent/SimPhone-v0", **options)


def _sim_phone_tasks(spec: str) -> list[Any]:
    from core.world import SPLIT_NAMES, get_task, list_tasks

    if spec in SPLIT_NAMES:
        return list(list_tasks(spec))
    ids = [t.strip() for t in spec.split(",") if t.strip()]
    tasks, bad = [], []
    for task_id in ids:
        try:
            tasks.append(get_task(task_id))
        except ValueError as e:
            bad.append(str(e))
    if bad or not ids:
        raise ValueError(f"{len(bad) or 'no'} unknown task(s) in {spec[:200]!r}: {'; '.join(bad[:5]) or 'empty'}; "
                         f"splits: {', '.join(SPLIT_NAMES)}")
    return tasks


def _miniwob(**options: Any) -> Any:
    from core.envs.miniwob import MiniWoBEnv

    return MiniWoBEnv(**options)  # the browser starts on the first reset


def _miniwob_tasks(split: str) -> list[Any]:
    from core.envs.miniwob import resolve_tasks

    return resolve_tasks(split)


ENVS: dict[str, EnvEntry] = {
    "sim-phone": EnvEntry(make=_sim_phone, tasks=_sim_phone_tasks, default_split="test",
                          splits=("train", "test_seed", "val_seed", "test_family", "test", "curriculum_train",
                                  "curriculum_val", "curriculum_test", "agent_train", "agent_val", "agent_test")),
    "miniwob": EnvEntry(make=_miniwob, tasks=_miniwob_tasks, default_split=DEFAULT_SUITE, splits=tuple(SUITES),
                        missing_setup=missing_setup),
}


def get_env(name: str) -> EnvEntry:
    """The entry of env ``name``; ``ValueError`` listing the known names otherwise."""
    try:
        return ENVS[name]
    except KeyError:
        raise ValueError(f"unknown env {quoted(name)}; known: {', '.join(sorted(ENVS))}") from None


__all__ = ["ENVS", "EnvEntry", "get_env"]
