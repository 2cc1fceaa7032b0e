"""What ``gui-agent rollout`` is asked to do, as one object: :class:`RolloutOptions` (the command parses its flags
into it and calls :func:`core.rollout.run.run_rollout`). Standard library only, so the command's ``--help`` stays
light."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from core.inference.options import BackendName


class PolicyName(str, Enum):
    model = "model"
    scripted = "scripted"
    random = "random"
    centre = "centre"


class RolloutError(Exception):
    """A rollout that cannot start as asked: one line for the user (``--flag: why``), exit 2."""


@dataclass(frozen=True)
class RolloutOptions:
    """Every ``gui-agent rollout`` flag, by its flag name (``json_path`` is ``--json``); None: the default the
    run picks (``--recipe``'s, the env's, the template's)."""

    output: Path
    env: str | None = None
    tasks: str | None = None
    policy: PolicyName = PolicyName.model
    backend: BackendName | None = None
    model: str | None = None
    template: str | None = None
    recipe: Path | None = None
    level: str | None = None
    episodes: int | None = None
    max_steps: int | None = None
    max_screenshots: int | None = None
    workers: int = 1
    json_path: Path | None = None
    gallery: int = 20
    seed: int = 0
    max_pixels: int | None = None
    min_pixels: int | None = None
    factor: int | None = None
    max_new_tokens: int = 512
    temperature: float = 0.0
    device: str | None = None
    dtype: str = "auto"
    tensor_parallel_size: int = 1
    served_model_name: str | None = None
    api_key: str | None = None
    overwrite: bool = False


__all__ = ["PolicyName", "RolloutError", "RolloutOptions"]
