"""Inference: prompts + images at the training resize -> a backend (transformers, vLLM, OpenAI HTTP) -> one
prediction row per benchmark step, with predicted coordinates mapped back to ORIGINAL pixels.

Modules, bottom up (each imports only those before it; ``tests/test_import_cycles.py``):
:mod:`.backends.base` (generation settings and results), :mod:`.requests` (what the model sees), :mod:`.rows`
(gold columns, parsed answers), :mod:`.bench` (benchmark files), :mod:`.backends` (who generates), :mod:`.zoom`
(crop-then-ground's second request), :mod:`.runner` (resumable prediction files), :mod:`.agent` (step-by-step
use), :mod:`.cli` (``gui-agent infer``). Heavy libraries
(torch, transformers, vllm, ray, httpx) are imported inside the functions that need them.
"""
