"""Generation backends. Each takes a batch of ready :class:`~core.inference.requests.InferenceRequest` and
returns one :class:`Generation` per request, in order; a failure on one request is that request's ``error``.

- ``hf``: transformers ``generate`` on CPU or one GPU (:mod:`.hf`)
- ``vllm``: offline ``vllm.LLM.generate``, tensor parallel, data parallel over Ray actors (:mod:`.vllm`)
- ``openai``: any OpenAI-compatible ``/v1/chat/completions`` server (:mod:`.openai`)
- ``baseline``: no model; ``random`` or ``centre`` answers, the trivial baselines (:mod:`.baseline`)
"""

from __future__ import annotations

from typing import Any

from core.console import quoted
from core.inference.backends.base import (
    BACKENDS,
    DEFAULT_BATCH_SIZE,
    DEFAULT_GENERATION,
    Backend,
    Generation,
    GenerationConfig,
    describe,
    generate_isolating_failures,
)


def make_backend(name: str, model: str, *, gen: GenerationConfig, batch_size: int | None, **options: Any) -> Backend:
    """The backend called ``name`` (one of :data:`BACKENDS`) for ``model`` (a folder, hub id or server URL);
    ``batch_size`` None: :data:`DEFAULT_BATCH_SIZE`, or for hf on CUDA from the free GPU memory."""
    if name == "hf":
        from core.inference.backends.hf import HFBackend

        return HFBackend(model, gen=gen, batch_size=batch_size, **options)
    batch_size = DEFAULT_BATCH_SIZE if batch_size is None else batch_size
    if name == "vllm":
        from core.inference.backends.vllm import VLLMBackend

        return VLLMBackend(model, gen=gen, batch_size=batch_size, **options)
    if name == "openai":
        from core.inference.backends.openai import OpenAIBackend

        return OpenAIBackend(model, gen=gen, batch_size=batch_size, **options)
    if name == "baseline":
        from core.inference.backends.baseline import BaselineBackend

        return BaselineBackend(model, gen=gen, batch_size=batch_size)
    raise ValueError(f"unknown backend {quoted(name)}; choose one of {', '.join(BACKENDS)}")


__all__ = ["BACKENDS", "DEFAULT_BATCH_SIZE", "DEFAULT_GENERATION", "Backend", "Generation", "GenerationConfig", "describe", "generate_isolating_failures",
           "make_backend"]
