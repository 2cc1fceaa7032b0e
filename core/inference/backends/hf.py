"""Hugging Face transformers backend: batched ``generate`` on CPU or one GPU.

Images arrive already resized to the training size (multiples of the patch factor), so the processor is called
with ``do_resize=False``: the model sees exactly ``request.geometry``'s resized frame.

A LoRA adapter folder from either trainer loads as it is: transformers attaches the adapter to the base model
named in ``adapter_config.json`` (``base_model_name_or_path``), and the processor comes from the adapter folder
when it holds one (LLaMA-Factory saves it) or else from that base model (ms-swift checkpoints hold none).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.inference.backends import (
    DEFAULT_GENERATION,
    Generation,
    GenerationConfig,
    generate_isolating_failures,
)
from core.inference.requests import InferenceRequest, hf_messages


PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")


def processor_source(model: str | Path) -> str:
    """Where the processor of ``model`` is: the folder itself, or for an adapter folder without processor files
    (an ms-swift LoRA checkpoint) the base model its ``adapter_config.json`` names; a hub id is returned as is."""
    folder = Path(model)
    if not (folder / "adapter_config.json").is_file() or any((folder / f).is_file() for f in PROCESSOR_FILES):
        return str(model)
    try:
        base = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))["base_model_name_or_path"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{folder / 'adapter_config.json'}: no base_model_name_or_path to load the processor "
                         f"from ({type(e).__name__}); merge the adapter first (swift export --merge_lora true)") from None
    if not isinstance(base, str) or not base:
        raise ValueError(f"{folder / 'adapter_config.json'}: base_model_name_or_path is empty")
    return base


class HFBackend:
    name = "hf"

    def __init__(self, model: str, *, gen: GenerationConfig = DEFAULT_GENERATION, batch_size: int = 4,
                 device: str | None = None, dtype: str = "auto", attn_implementation: str | None = None):
        """Load ``model`` (folder, LoRA adapter folder or hub id). ``device``: ``cpu``, ``cuda``, ``cuda:1``... (default: cuda when
        available); ``dtype``: ``auto`` (bfloat16 on GPU, float32 on CPU), ``float32``, ``bfloat16``..."""
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.model, self.gen, self.batch_rows = str(model), gen, max(1, batch_size)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if dtype == "auto":
            torch_dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        else:
            torch_dtype = getattr(torch, dtype)
        self.processor = AutoProcessor.from_pretrained(processor_source(self.model))
        self.processor.tokenizer.padding_side = "left"  # decoder-only batching pads on the left
        kwargs: dict[str, Any] = {"dtype": torch_dtype}
        if attn_implementation:
            kwargs["attn_implementation"] = attn_implementation
        self._model = AutoModelForImageTextToText.from_pretrained(self.model, **kwargs).to(self.device).eval()
        self._torch = torch

    def prompt_text(self, request: InferenceRequest) -> str:
        """The chat-template string of ``request`` (with the generation prompt)."""
        return self.processor.apply_chat_template(hf_messages(request.messages), tokenize=False,
                                                  add_generation_prompt=True)

    def _generate(self, requests: list[InferenceRequest]) -> list[str]:
        texts = [self.prompt_text(r) for r in requests]
        images = [im for r in requests for im in r.images]  # in placeholder order, request after request
        inputs = self.processor(text=texts, images=images, padding=True,
                                return_tensors="pt", do_resize=False).to(self.device)
        kwargs: dict[str, Any] = {"max_new_tokens": self.gen.max_new_tokens,
                                  "repetition_penalty": self.gen.repetition_penalty}
        if self.gen.greedy:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            self._torch.manual_seed(self.gen.seed)
            kwargs.update(do_sample=True, temperature=self.gen.temperature, top_p=self.gen.top_p)
        with self._torch.inference_mode():
            out = self._model.generate(**inputs, **kwargs)
        new_tokens = out[:, inputs["input_ids"].shape[1]:]
        return self.processor.batch_decode(new_tokens, skip_special_tokens=True)

    def generate(self, requests: Sequence[InferenceRequest]) -> list[Generation]:
        return generate_isolating_failures(self._generate, list(requests))

    def close(self) -> None:
        del self._model
