"""Hugging Face transformers backend: batched ``generate`` on CPU or one GPU.

Images arrive already resized to the training size (multiples of the patch factor), so the processor is called
with ``do_resize=False``: the model sees exactly ``request.geometry``'s resized frame.

A LoRA adapter folder from either trainer loads as it is: transformers attaches the adapter to the base model
named in ``adapter_config.json`` (``base_model_name_or_path``), and the processor comes from the adapter folder
when it holds one (LLaMA-Factory saves it) or else from that base model (ms-swift checkpoints hold none).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core.inference.backends.base import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_GENERATION,
    Generation,
    GenerationConfig,
    generate_isolating_failures,
)
from core.inference.requests import DEFAULT_POLICY, InferenceRequest, ResizePolicy, hf_messages


PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")

#: Largest batch picked from free GPU memory: the largest measured (H100, Qwen2.5-VL-3B architecture, 128 new
#: tokens, ``bench/infer_memory.py``): 0.73 screens/s at batch 8, 1.84 at 32, 3.28 at 64, 24.6 GiB peak.
MAX_AUTO_BATCH = 64
#: Fraction of the free GPU memory (read after the model is loaded) the batch may fill.
FREE_MEMORY_FRACTION = 0.9
#: Prompt text tokens besides the screenshot: the longest GUI-R1-style prompt over ../shared/data has 635 (README,
#: "Prompt length").
PROMPT_TEXT_TOKENS = 640
#: Prefill activation bytes per prompt token per unit of the language model's ``intermediate_size``: fitted to the
#: measured peak (3B, bf16, sdpa: 280 MiB a row over the weights at 1,836 prompt tokens, the same at 128 and 512
#: new tokens, so the prefill sets the peak) minus its KV cache, rounded up (11.2 -> 12).
PREFILL_BYTES_PER_INTERMEDIATE = 12


def max_prompt_tokens(policy: ResizePolicy, screenshots: int = 1) -> int:
    """Upper bound of a prompt's tokens: ``screenshots`` images at ``policy.max_pixels`` (one token per
    ``factor`` x ``factor`` pixels) plus :data:`PROMPT_TEXT_TOKENS`."""
    return screenshots * (policy.max_pixels // policy.factor ** 2) + PROMPT_TEXT_TOKENS


def row_bytes(text_config: Any, *, prompt_tokens: int, new_tokens: int, dtype_bytes: int) -> int:
    """GPU bytes one batch row needs beyond the weights: the KV cache of ``prompt_tokens + new_tokens`` tokens
    plus the prefill activations of the prompt (see :data:`PREFILL_BYTES_PER_INTERMEDIATE`). ``text_config``: the
    language model's config (``num_hidden_layers``, ``num_key_value_heads``, ``hidden_size``,
    ``num_attention_heads``, ``intermediate_size``, optional ``head_dim``)."""
    head_dim = getattr(text_config, "head_dim", None) or text_config.hidden_size // text_config.num_attention_heads
    kv_per_token = 2 * text_config.num_hidden_layers * text_config.num_key_value_heads * head_dim * dtype_bytes
    prefill_per_token = PREFILL_BYTES_PER_INTERMEDIATE * text_config.intermediate_size
    return prompt_tokens * (kv_per_token + prefill_per_token) + new_tokens * kv_per_token


def auto_batch_size(free_bytes: int, per_row_bytes: int) -> int:
    """Rows that fit :data:`FREE_MEMORY_FRACTION` of ``free_bytes`` GPU memory at ``per_row_bytes`` each, between
    1 and :data:`MAX_AUTO_BATCH`."""
    return max(1, min(MAX_AUTO_BATCH, int(free_bytes * FREE_MEMORY_FRACTION) // max(1, per_row_bytes)))


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


def pick_batch_size(batch_size: int | None, device: str, free_bytes: Callable[[], int], per_row_bytes: int
                    ) -> tuple[int, str]:
    """``(rows per generate call, how they were chosen)``: ``batch_size`` when given; else on CPU
    :data:`DEFAULT_BATCH_SIZE`; else on CUDA :func:`auto_batch_size` of ``free_bytes()`` (read only then)."""
    if batch_size is not None:
        return max(1, batch_size), "given"
    if not device.startswith("cuda"):
        return DEFAULT_BATCH_SIZE, "CPU default"
    free = free_bytes()
    return auto_batch_size(free, per_row_bytes), (f"{free / 2**30:.1f} GiB free GPU memory at "
                                                  f"{per_row_bytes / 2**20:.0f} MiB a row, at most {MAX_AUTO_BATCH}")


class HFBackend:
    name = "hf"

    def __init__(self, model: str, *, gen: GenerationConfig = DEFAULT_GENERATION, batch_size: int | None = None,
                 prompt_tokens: int | None = None, device: str | None = None, dtype: str = "auto",
                 attn_implementation: str | None = None):
        """Load ``model`` (folder, LoRA adapter folder or hub id). ``device``: ``cpu``, ``cuda``, ``cuda:1``... (default: cuda when
        available); ``dtype``: ``auto`` (bfloat16 on GPU, float32 on CPU), ``float32``, ``bfloat16``...
        ``batch_size`` None: :data:`DEFAULT_BATCH_SIZE` on CPU; on CUDA :func:`auto_batch_size` of the free GPU memory
        after loading, for prompts of at most ``prompt_tokens`` tokens (default: :func:`max_prompt_tokens` of one
        screenshot at GUI-R1's training bounds) and ``gen.max_new_tokens``."""
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.model, self.gen = str(model), gen
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
        per_row = row_bytes(getattr(self._model.config, "text_config", self._model.config),
                            prompt_tokens=prompt_tokens or max_prompt_tokens(DEFAULT_POLICY),
                            new_tokens=gen.max_new_tokens,
                            dtype_bytes=torch.empty((), dtype=torch_dtype).element_size())
        #: ``batch_source``: how ``batch_rows`` was chosen, for the log
        self.batch_rows, self.batch_source = pick_batch_size(
            batch_size, self.device, lambda: torch.cuda.mem_get_info(torch.device(self.device))[0], per_row)

    def prompt_text(self, request: InferenceRequest) -> str:
        """The chat-template string of ``request`` (with the generation prompt)."""
        return self.processor.apply_chat_template(hf_messages(request.messages), tools=request.tools,
                                                  tokenize=False, add_generation_prompt=True)

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
