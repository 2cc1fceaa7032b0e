"""Names the inference command line and library share, with no import beyond the standard library (the CLI
modules read them to build ``--help``, which must stay light: ``tests/test_help_imports.py``)."""

from __future__ import annotations

from enum import Enum

#: ``--prompt`` value meaning each step's training template (``core.prompts.default_template_for``).
TRAINING_TEMPLATE = "train"


class BackendName(str, Enum):
    """``--backend`` of ``gui-agent infer`` and ``rollout`` (:data:`core.inference.backends.BACKENDS`)."""

    hf = "hf"
    vllm = "vllm"
    openai = "openai"
    baseline = "baseline"


__all__ = ["TRAINING_TEMPLATE", "BackendName"]
