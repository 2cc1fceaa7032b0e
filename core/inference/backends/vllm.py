"""vLLM backend: offline ``LLM.generate``, batched, greedy by default, tensor parallel inside an engine and data
parallel over GPUs through Ray actors (one engine per actor), results put back in input order.

Everything that needs vLLM sits behind ONE function, :func:`create_engine`; request building, sharding,
ordering and error isolation are plain Python and run (and are tested) without vLLM or a GPU.
Sharding follows GUI-R1's scripts: row ``i`` of a batch goes to worker ``i % data_parallel_size``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from core.inference.backends.base import (
    DEFAULT_GENERATION,
    Generation,
    GenerationConfig,
    describe,
    generate_isolating_failures,
)
from core.inference.requests import InferenceRequest, hf_messages

#: ``create_engine(engine_args, sampling_args) -> generate(inputs) -> texts``
EngineFactory = Callable[[dict[str, Any], dict[str, Any]], Callable[[list[dict[str, Any]]], list[str]]]

VLLM_MISSING = ("the vllm backend needs the 'vllm' package (a CUDA machine: make setup-gpu); use --backend hf "
                "for CPU / one GPU")
RAY_MISSING = "data parallel vLLM (--data-parallel-size > 1) needs the 'ray' package (pip install ray)"


def create_engine(engine_args: dict[str, Any], sampling_args: dict[str, Any]
                  ) -> Callable[[list[dict[str, Any]]], list[str]]:
    """Build a ``vllm.LLM`` from ``engine_args`` and return ``generate(inputs) -> [text, ...]`` (first sample
    of each input, in input order). The only function of this package that imports vLLM."""
    try:
        from vllm import LLM, SamplingParams
    except ImportError as e:
        raise RuntimeError(VLLM_MISSING) from e
    llm = LLM(**engine_args)
    params = SamplingParams(**sampling_args)

    def generate(inputs: list[dict[str, Any]]) -> list[str]:
        outputs = llm.generate(inputs, sampling_params=params, use_tqdm=False)
        return [o.outputs[0].text for o in outputs]

    return generate


def sampling_args(gen: GenerationConfig) -> dict[str, Any]:
    """``vllm.SamplingParams`` keyword arguments for ``gen`` (temperature 0 = greedy)."""
    args: dict[str, Any] = {"max_tokens": gen.max_new_tokens, "temperature": max(gen.temperature, 0.0),
                            "repetition_penalty": gen.repetition_penalty, "seed": gen.seed}
    if not gen.greedy:
        args["top_p"] = gen.top_p
    return args


def shard_round_robin(n: int, shards: int) -> list[list[int]]:
    """Indices ``0..n-1`` dealt to ``shards`` workers: worker ``k`` gets ``k, k + shards, ...``."""
    return [list(range(k, n, shards)) for k in range(shards)]


def merge_shards(shards: list[list[int]], results: list[list[Generation]], n: int) -> list[Generation]:
    """Per-worker results back in input order; raises when a worker returned the wrong number of results."""
    out: list[Generation | None] = [None] * n
    for idx, res in zip(shards, results, strict=False):
        if len(idx) != len(res):
            raise RuntimeError(f"a worker returned {len(res)} results for {len(idx)} inputs")
        for i, g in zip(idx, res, strict=False):
            out[i] = g
    missing = [i for i, g in enumerate(out) if g is None]
    if missing:
        raise RuntimeError(f"no result for inputs {missing[:10]}")
    return out  # type: ignore[return-value]


class EngineWorker:
    """One engine (one GPU, or ``tensor_parallel_size`` GPUs); run in-process or as a Ray actor."""

    def __init__(self, engine_factory: EngineFactory, engine_args: dict[str, Any], sampling: dict[str, Any]):
        self._generate = engine_factory(engine_args, sampling)

    def generate(self, inputs: list[dict[str, Any]]) -> list[Generation]:
        return generate_isolating_failures(self._generate, inputs)


class VLLMBackend:
    name = "vllm"

    def __init__(self, model: str, *, gen: GenerationConfig = DEFAULT_GENERATION, batch_size: int = 64,
                 tensor_parallel_size: int = 1, data_parallel_size: int = 1, gpus_per_worker: float | None = None,
                 gpu_memory_utilization: float = 0.9, max_model_len: int | None = None,
                 limit_mm_per_prompt: dict[str, int] | None = None, dtype: str = "auto",
                 use_ray: bool = True, engine_factory: EngineFactory | None = None,
                 chat_template_fn: Callable[[list], str] | None = None):
        """``batch_size`` rows per engine per call (``batch_rows = batch_size * data_parallel_size``).
        ``gpus_per_worker``: GPUs each Ray actor reserves (default ``tensor_parallel_size``; 0 runs actors on
        CPU, only useful with a fake engine); ``use_ray=False`` keeps every engine in this process (debugging).
        ``engine_factory`` defaults to :func:`create_engine`;
        ``chat_template_fn(messages) -> prompt`` defaults to the model's processor chat template."""
        if tensor_parallel_size < 1 or data_parallel_size < 1:
            raise ValueError("tensor_parallel_size and data_parallel_size must be >= 1")
        self.model, self.gen = str(model), gen
        self.batch_size = max(1, batch_size)
        self.dp = data_parallel_size
        self.batch_rows = self.batch_size * self.dp
        self.engine_args: dict[str, Any] = {
            "model": self.model,
            "tensor_parallel_size": tensor_parallel_size,
            "limit_mm_per_prompt": limit_mm_per_prompt or {"image": 1},
            "gpu_memory_utilization": gpu_memory_utilization,
            "dtype": dtype,
            "seed": gen.seed,
        }
        if max_model_len:
            self.engine_args["max_model_len"] = max_model_len
        self.sampling = sampling_args(gen)
        self._chat_template_fn = chat_template_fn or _processor_chat_template(self.model)
        factory = engine_factory or create_engine
        gpus = float(tensor_parallel_size if gpus_per_worker is None else gpus_per_worker)
        if self.dp == 1 or not use_ray:
            self._workers: list[Any] = [EngineWorker(factory, self.engine_args, self.sampling)
                                        for _ in range(self.dp)]
            self._ray = None
        else:
            try:
                import ray
            except ImportError as e:
                raise RuntimeError(RAY_MISSING) from e
            if not ray.is_initialized():
                ray.init(ignore_reinit_error=True)
            actor = ray.remote(num_gpus=gpus)(EngineWorker)
            self._workers = [actor.remote(factory, self.engine_args, self.sampling) for _ in range(self.dp)]
            self._ray = ray

    def engine_inputs(self, requests: Sequence[InferenceRequest]) -> list[dict[str, Any]]:
        """vLLM prompt dicts: chat-template text, the resized images in placeholder order, and the resize bounds
        as ``mm_processor_kwargs`` (a no-op on an image already at that size). ``ValueError`` when a request has
        more images than ``limit_mm_per_prompt`` allows."""
        limit = self.engine_args["limit_mm_per_prompt"].get("image", 1)
        out = []
        for r in requests:
            if len(r.images) > limit:
                raise ValueError(f"a prompt with {len(r.images)} images, but limit_mm_per_prompt allows {limit}; "
                                 "raise limit_mm_per_prompt['image']")
            out.append({
                "prompt": self._chat_template_fn(hf_messages(r.messages), **({"tools": r.tools} if r.tools else {})),
                "multi_modal_data": {"image": list(r.images)},
                "mm_processor_kwargs": {"min_pixels": r.policy.min_pixels, "max_pixels": r.policy.max_pixels},
            })
        return out

    def generate(self, requests: Sequence[InferenceRequest]) -> list[Generation]:
        try:
            inputs = self.engine_inputs(requests)
        except Exception as exc:  # noqa: BLE001 - a template failure fails the rows, not the run
            return [Generation(error=describe(exc))] * len(requests)
        shards = shard_round_robin(len(inputs), len(self._workers))
        parts = [[inputs[i] for i in idx] for idx in shards]
        if self._ray is None:
            results = [w.generate(p) if p else [] for w, p in zip(self._workers, parts, strict=False)]
        else:
            futures = [w.generate.remote(p) for w, p in zip(self._workers, parts, strict=False) if p]
            got = iter(self._ray.get(futures))
            results = [next(got) if p else [] for p in parts]
        return merge_shards(shards, results, len(inputs))

    def close(self) -> None:
        if self._ray is not None:
            for w in self._workers:
                self._ray.kill(w)
        self._workers = []


def _processor_chat_template(model: str) -> Callable[[list], str]:
    """``messages -> prompt`` with the model's own chat template (generation prompt appended)."""
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(model)

    def render(messages: list, tools: list | None = None) -> str:
        return processor.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)

    return render


__all__ = ["EngineWorker", "VLLMBackend", "create_engine", "merge_shards", "sampling_args", "shard_round_robin"]
