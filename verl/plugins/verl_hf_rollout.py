"""verl's ``hf`` rollout backend: generation with transformers for verl 0.9.1's agent loop, where vLLM is absent
(every CPU machine; a GPU machine without vLLM).

Registered through verl's own extension points (nothing of verl is copied or patched): the replica class in
``verl.workers.rollout.replica.RolloutReplicaRegistry`` (``RolloutReplicaRegistry.register("hf", loader)``, as
vLLM, SGLang and TensorRT-LLM are) and the in-worker adapter in ``verl.workers.rollout.base``'s rollout table,
which ``ActorRolloutRefWorker.init_model`` reads for ``(rollout.name, rollout.mode)``. verl imports this module in
every process when ``VERL_USE_EXTERNAL_MODULES`` names it; select it with ``actor_rollout_ref.rollout.name=hf``
(``ROLLOUT_ENGINE=hf`` in the run scripts).

How it works, in verl's hybrid (colocated) mode:

- :class:`HFReplica` launches one Ray actor per replica, :class:`HFRolloutServer`, on the node (and, on CUDA, the
  GPU) of the replica's first training worker. The server holds its own copy of the policy, loaded from
  ``actor_rollout_ref.model.path`` in ``rollout.dtype``.
- :class:`HFServerAdapter` (the worker's ``rollout``) receives verl's weight sync after every actor update
  (``update_weights``: the FSDP engine's full tensors by Hugging Face name) and loads them into the server, so the
  rollout always samples from the actor's current weights, as vLLM's server does. Every name must match a
  parameter or buffer of the server's model (a mismatch is an error naming the keys, never a silent skip).
- :meth:`HFRolloutServer.generate` is verl's token-in-token-out call (``prompt_ids``, ``sampling_params``,
  ``image_data``): one ``model.generate`` per request, requests served one at a time. It takes the sampling
  parameters verl passes (``temperature`` (0 = greedy), ``top_p``, ``top_k`` (-1 or 0 = off), ``max_tokens`` /
  ``max_new_tokens``, ``stop`` (matched on the generated text, as vLLM does), ``stop_token_ids`` (kept as the
  answer's last token), ``repetition_penalty``, ``seed``, ``logprobs``) and Qwen2.5-VL
  and Qwen3-VL images (the prompt already holds the expanded image tokens; the image processor gives the pixels
  and grid). Log-probs are vLLM's default ``processed_logprobs``: the log-softmax of the logits after temperature,
  top-k and top-p, i.e. exactly what verl's actor recomputes when top-k/top-p are off.

Limits: tensor, data and pipeline parallel sizes of 1 per replica; ``n`` > 1 in one request is not taken (verl's
agent loop sends one request per sample); ``ignore_eos`` is refused.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import ray
import torch

from core.inference.backends.base import checked_sampling
from verl.plugin.platform import get_platform
from verl.workers.rollout import base as rollout_base
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutReplica, RolloutReplicaRegistry, TokenOutput

logger = logging.getLogger(__name__)

#: ``actor_rollout_ref.rollout.name`` of this backend.
ROLLOUT_NAME = "hf"
#: Sampling parameters verl may pass that this backend reads (anything else is refused, naming it).
SAMPLING_KEYS = frozenset({"temperature", "top_p", "top_k", "max_tokens", "max_new_tokens", "stop", "stop_token_ids",
                           "repetition_penalty", "seed", "logprobs", "ignore_eos", "n"})


def server_name(replica_rank: int) -> str:
    """Ray actor name of replica ``replica_rank``'s server (unique within a Ray job's namespace)."""
    return f"hf_rollout_server_{replica_rank}"


def full_tensor(tensor: torch.Tensor) -> torch.Tensor:
    """A CPU copy of ``tensor``, gathered when it is a sharded DTensor (FSDP2)."""
    if hasattr(tensor, "full_tensor"):
        tensor = tensor.full_tensor()
    return tensor.detach().to("cpu", copy=True)


def processed_logprobs(scores: torch.Tensor, tokens: torch.Tensor) -> list[float]:
    """Log-probability of each sampled token under the processed distribution of its step.

    ``scores``: (steps, vocab) logits after the generation's processors (temperature, top-k, top-p; filtered
    tokens are -inf), ``tokens``: (steps,) the sampled ids."""
    logp = torch.log_softmax(scores.float(), dim=-1)
    return logp.gather(-1, tokens.view(-1, 1)).view(-1).tolist()


class StopOnText:
    """A transformers stopping criterion: stop once the GENERATED text holds any of ``stops`` (vLLM's rule;
    transformers' own ``stop_strings`` also match across the end of the prompt)."""

    def __init__(self, tokenizer, prompt_len: int, stops: list[str]):
        self.tokenizer, self.prompt_len, self.stops = tokenizer, prompt_len, stops

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
        text = self.tokenizer.decode(input_ids[0, self.prompt_len:], skip_special_tokens=False)
        return torch.tensor([any(stop in text for stop in self.stops)], device=input_ids.device)


class HFRolloutServer:
    """One transformers copy of the policy that serves verl's token-in-token-out ``generate`` (a Ray actor)."""

    def __init__(self, config, model_config, replica_rank: int, device: str):
        from transformers import AutoModelForImageTextToText, GenerationConfig

        from verl.utils.config import omega_conf_to_dataclass
        from verl.workers.config import HFModelConfig

        model_config = omega_conf_to_dataclass(model_config, dataclass_type=HFModelConfig)
        self.config, self.model_config, self.replica_rank = config, model_config, replica_rank
        self.device = torch.device(device)
        dtype = getattr(torch, str(config.dtype)) if self.device.type != "cpu" else torch.float32
        self.model = AutoModelForImageTextToText.from_pretrained(
            model_config.local_path, dtype=dtype, attn_implementation="sdpa",
            trust_remote_code=model_config.trust_remote_code,
        ).to(self.device).eval()
        self.tokenizer, self.processor = model_config.tokenizer, model_config.processor
        self.generation_config = GenerationConfig.from_model_config(self.model.config)
        eos = self.model.generation_config.eos_token_id
        self.eos_token_ids = sorted({*(eos if isinstance(eos, list) else [eos] if eos is not None else []),
                                     *([self.tokenizer.eos_token_id] if self.tokenizer.eos_token_id is not None
                                       else [])})
        self.max_model_len = int(config.max_model_len or (config.prompt_length + config.response_length))
        self.global_steps: int | None = None
        self._lock = asyncio.Lock()

    # -- verl's server interface ------------------------------------------------------------------------------
    def get_server_address(self) -> tuple[str, int]:
        return f"hf-rollout-{self.replica_rank}", 0

    async def generate(self, prompt_ids: list[int], sampling_params: dict[str, Any], request_id: str,
                       image_data: list[Any] | None = None, video_data: list[Any] | None = None,
                       mm_processor_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> TokenOutput:
        if video_data:
            raise ValueError("the hf rollout takes images, not videos")
        async with self._lock:
            token_ids, log_probs = await asyncio.to_thread(self._generate, list(map(int, prompt_ids)),
                                                           dict(sampling_params), image_data,
                                                           dict(mm_processor_kwargs or {}))
        return TokenOutput(token_ids=token_ids, log_probs=log_probs, stop_reason="completed",
                           extra_fields={"global_steps": self.global_steps})

    async def update_weights(self, named_tensors: dict[str, torch.Tensor], global_steps: int | None = None) -> None:
        """Load the actor's full weights (Hugging Face names) into the server's model."""
        own = self.model.state_dict()
        unknown = sorted(set(named_tensors) - set(own))
        if unknown:
            raise KeyError(f"hf rollout: the actor sent weights the rollout model does not have: {unknown[:5]}")
        with torch.no_grad():
            for name, tensor in named_tensors.items():
                own[name].copy_(tensor.to(own[name].dtype))
        self.global_steps = global_steps

    async def wake_up(self, tags: list[str] | None = None) -> None:
        return None

    async def sleep(self) -> None:
        return None

    async def clear_kv_cache(self) -> None:
        return None

    async def release_kv_cache(self) -> None:
        return None

    async def resume_kv_cache(self) -> None:
        return None

    async def wait_for_requests_to_drain(self) -> None:
        async with self._lock:
            return None

    async def abort_all_requests(self, reset_prefix_cache: bool = True, reject_request: bool = False) -> dict:
        return {"aborted_count": 0, "request_ids": []}

    async def resume_generation(self) -> None:
        return None

    async def start_profile(self, **kwargs: Any) -> None:
        return None

    async def stop_profile(self) -> None:
        return None

    # -- generation -------------------------------------------------------------------------------------------
    def _max_tokens(self, prompt_len: int, params: dict[str, Any]) -> int:
        """vLLM server's budget rule: the request's ``max_tokens``, else what the response and context leave."""
        room = self.max_model_len - prompt_len
        if room < 1:
            raise ValueError(f"prompt length {prompt_len} leaves no room within the context of {self.max_model_len}")
        if "max_tokens" in params:
            wanted = params.pop("max_tokens")
        elif "max_new_tokens" in params:
            wanted = params.pop("max_new_tokens")
        else:
            wanted = min(self.config.response_length,
                         self.config.prompt_length + self.config.response_length - prompt_len)
        return max(1, min(int(wanted), room))

    def _vision_inputs(self, prompt_ids: list[int], images: list[Any] | None,
                       mm_processor_kwargs: dict[str, Any] | None = None) -> dict[str, torch.Tensor]:
        """Pixels and grid of ``images`` for a prompt whose image tokens are already expanded (checked), with the
        processor settings the prompt was built with (``data.mm_processor_kwargs``: pixel bounds)."""
        image_token = getattr(self.model.config, "image_token_id", None)
        if not images:
            found = sum(1 for t in prompt_ids if t == image_token) if image_token is not None else 0
            if found:  # answering without the picture the prompt points at would be answering something else
                raise ValueError(f"the prompt holds {found} image tokens but the request carries no image")
            return {}
        if self.processor is None or not hasattr(self.processor, "image_processor"):
            raise ValueError("the rollout model has no image processor, but the request holds images")
        vision = self.processor.image_processor(images=images, return_tensors="pt", **(mm_processor_kwargs or {}))
        merge = getattr(self.processor.image_processor, "merge_size", 2)
        expected = int(vision["image_grid_thw"].prod(dim=-1).sum()) // (merge * merge)
        found = sum(1 for t in prompt_ids if t == image_token)
        if found != expected:
            raise ValueError(f"the prompt holds {found} image tokens, its {len(images)} image(s) need {expected}")
        return {key: value.to(self.device) for key, value in vision.items()}

    @torch.no_grad()
    def _generate(self, prompt_ids: list[int], params: dict[str, Any], images: list[Any] | None,
                  mm_processor_kwargs: dict[str, Any] | None = None) -> tuple[list[int], list[float] | None]:
        unknown = sorted(set(params) - SAMPLING_KEYS)
        if unknown:
            raise ValueError(f"the hf rollout does not take sampling parameters {unknown}")
        if params.get("ignore_eos"):
            raise ValueError("the hf rollout does not take ignore_eos")
        if int(params.get("n", 1)) != 1:
            raise ValueError("the hf rollout samples one sequence per request (n=1)")
        params = checked_sampling(params)  # vLLM's rules, by name: never turned into something else
        max_new = self._max_tokens(len(prompt_ids), params)
        temperature = float(params.get("temperature", 1.0))
        top_k = max(int(params.get("top_k") or 0), 0)  # verl: -1 = off; transformers: 0 = off
        top_p = float(params.get("top_p", 1.0))
        eos = sorted({*self.eos_token_ids, *map(int, params.get("stop_token_ids") or [])})
        stop = params.get("stop") or []
        stop = [stop] if isinstance(stop, str) else list(stop)
        if params.get("seed") is not None:
            torch.manual_seed(int(params["seed"]))
        sample = temperature > 0
        # Every sampling knob set explicitly: transformers would otherwise fill in its own defaults (top_k 50).
        generation = self.generation_config.__class__(
            do_sample=sample, temperature=temperature if sample else 1.0, top_k=top_k if sample else 0,
            top_p=top_p if sample else 1.0, repetition_penalty=float(params.get("repetition_penalty", 1.0)),
            max_new_tokens=max_new, eos_token_id=eos, pad_token_id=self.tokenizer.pad_token_id or eos[0],
            return_dict_in_generate=True, output_scores=bool(params.get("logprobs")))
        input_ids = torch.tensor([prompt_ids], device=self.device)
        out = self.model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                  generation_config=generation,
                                  stopping_criteria=[StopOnText(self.tokenizer, len(prompt_ids), stop)] if stop
                                  else None,
                                  **self._vision_inputs(prompt_ids, images, mm_processor_kwargs))
        tokens = out.sequences[0, len(prompt_ids):]
        log_probs = None
        if params.get("logprobs"):
            log_probs = processed_logprobs(torch.cat(out.scores, dim=0), tokens)
        return tokens.tolist(), log_probs


class HFServerAdapter(BaseRollout):
    """The training worker's handle on its replica's :class:`HFRolloutServer` (verl's ``rollout`` in the worker):
    weight sync after every update; nothing to free or resume (the server keeps its weights)."""

    def __init__(self, config, model_config, device_mesh, replica_rank: int = -1):
        super().__init__(config, model_config, device_mesh)
        size = (self.config.tensor_model_parallel_size * self.config.data_parallel_size
                * self.config.pipeline_model_parallel_size)
        if size != 1:
            raise ValueError("the hf rollout runs one process per replica: set rollout tensor_model_parallel_size, "
                             "data_parallel_size and pipeline_model_parallel_size to 1")
        rank = int(os.environ.get("RANK", "0"))
        self.replica_rank = rank if replica_rank == -1 else replica_rank
        self.sleep_level = 1

    async def resume(self, tags: list[str]) -> None:
        return None

    async def release(self) -> None:
        return None

    async def update_weights(self, weights, wire_format: str = "named_tensors", **kwargs: Any) -> None:
        if wire_format != "named_tensors":
            raise ValueError(f"the hf rollout takes full named tensors, not {wire_format!r}")
        if kwargs.get("peft_config") is not None:
            raise ValueError("the hf rollout takes merged weights (actor_rollout_ref.model.lora.merge=True)")
        state = {name: full_tensor(tensor) for name, tensor in weights}
        server = ray.get_actor(server_name(self.replica_rank))
        await server.update_weights.remote(ray.put(state), global_steps=kwargs.get("global_steps"))


class HFReplica(RolloutReplica):
    """A replica of the ``hf`` backend: one :class:`HFRolloutServer` beside its training worker."""

    def rollout_worker_use_gpu(self) -> bool:
        return get_platform().device_name != "cpu"

    async def launch_servers(self) -> None:
        if self.world_size != 1:
            raise ValueError("the hf rollout runs one process per replica (tensor/data/pipeline parallel 1)")
        platform = get_platform()
        worker = self.workers[0]
        node_id, devices = await worker.__ray_call__.remote(
            lambda w: (ray.get_runtime_context().get_node_id(),
                       ray.get_runtime_context().get_accelerator_ids().get(platform.ray_resource_name(), [])))
        env_vars = {}
        device = platform.device_name
        if device != "cpu":
            env_vars = {var: "1" for var in platform.ray_noset_envvars()}
            env_vars[platform.visible_devices_envvar()] = ",".join(map(str, devices))
            device = f"{device}:0"
        server = ray.remote(HFRolloutServer).options(
            scheduling_strategy=ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(node_id=node_id,
                                                                                              soft=False),
            runtime_env={"env_vars": env_vars}, name=server_name(self.replica_rank), num_cpus=0,
            max_concurrency=self.max_concurrency,
        ).remote(config=self.config, model_config=self.model_config, replica_rank=self.replica_rank, device=device)
        self.servers = [server]
        address, port = await server.get_server_address.remote()
        self._server_handle = server
        self._server_address = f"{address}:{port}"


def register() -> None:
    """Register the backend under :data:`ROLLOUT_NAME` (idempotent)."""
    RolloutReplicaRegistry.register(ROLLOUT_NAME, lambda: HFReplica)
    rollout_base._ROLLOUT_REGISTRY[(ROLLOUT_NAME, "async")] = f"{__name__}.HFServerAdapter"


register()
