"""verl's actor and reference passes on the CPU with the output layer computed only where a log-prob is used.

verl 0.9.1's FSDP engine (``verl/workers/engine/fsdp/transformer_impl.py``, ``FSDPEngineWithLMHead``) computes the
log-prob and entropy of the next token at every position of every sequence, prompt included, and the PPO loss then
keeps the response tokens (``verl/workers/utils/padding.py``, ``no_padding_2_padding``) under the response mask. For
a small model the output layer over the 151,936-token Qwen vocabulary is nearly all of that work (the `ci` agent step
of docs/demo-agent.md: 2,818 positions a batch, about a tenth of them trained response tokens; 97% of the step in
log-probs and update).

:class:`ResponseLogprobEngine` is verl's engine with one change: before each forward pass it marks the positions
whose next token is a response token with response mask 1 (``prompts`` / ``responses`` / ``response_mask`` of the
micro-batch, verl's no-padding layout), and the model's forward (verl's own fused-kernel forward, wrapped) runs the
decoder as verl does, then the output layer, ``log_softmax`` and entropy at those positions alone; every other
position gets log-prob 0 and entropy 0, values the loss masks out. The numbers at the marked positions are verl's
(the same hidden states, weights, temperature and formulas: tests/test_verl_response_logprobs.py compares log-probs,
entropies and gradients with verl's forward). Both the actor and the reference model use it.

Where: ``verl_cpu_platform.register_fsdp_engines`` registers it as the ``language_model`` engine of device ``cpu``
(verl's ``EngineRegistry``, the extension point the platform already uses), for the model types whose decoder call is
known here (:data:`DECODER_CALLS`: Qwen2-VL, Qwen2.5-VL, Qwen3-VL); other models, the remove-padding layout and
runs without ``use_fused_kernels`` keep verl's forward unchanged. ``VERL_CPU_RESPONSE_LOGPROBS=0`` registers verl's
own engine instead (``bench/verl_step.py`` measures both in one run). Upstream: an engine option to gather the
response positions before the output layer.
"""

from __future__ import annotations

import contextvars
import functools
import os
from dataclasses import dataclass
from typing import Any

import torch
from transformers.utils import ModelOutput

#: Environment switch: "0" keeps verl's own engine on the CPU.
SWITCH = "VERL_CPU_RESPONSE_LOGPROBS"

#: The positions of the running forward pass whose log-prob is used: bool (batch, padded sequence length), or None.
_POSITIONS: contextvars.ContextVar[torch.Tensor | None] = contextvars.ContextVar("response_positions", default=None)


def _qwen2_vl_decoder(model: Any, input_ids: torch.Tensor, **kwargs: Any) -> Any:
    from verl.models.transformers.qwen2_vl import qwen2_vl_forward

    return qwen2_vl_forward(model, input_ids, **kwargs)


def _qwen3_vl_decoder(model: Any, input_ids: torch.Tensor, **kwargs: Any) -> Any:
    return model.model(input_ids, **kwargs)


#: model_type -> the decoder call verl's torch-backend forward makes for it (``verl/models/transformers/qwen2_vl.py``
#: ``forward_with_torch_backend``: ``qwen2_vl_forward``; ``qwen3_vl.py``: ``self.model``).
DECODER_CALLS = {"qwen2_vl": _qwen2_vl_decoder, "qwen2_5_vl": _qwen2_vl_decoder, "qwen3_vl": _qwen3_vl_decoder}


@dataclass
class ResponseLogprobOutput(ModelOutput):
    """What verl's fused forward returns, read by ``prepare_model_outputs``: (batch, sequence) log-probs and
    entropies of the next token (0 off the marked positions)."""

    log_probs: torch.Tensor | None = None
    entropy: torch.Tensor | None = None
    hidden_states: Any = None


def response_positions(prompt_lens: torch.Tensor, response_masks: list[torch.Tensor], seq_len: int) -> torch.Tensor:
    """Bool (batch, ``seq_len``): position ``p`` of sequence ``i`` (prompt then response, no padding in between) is
    marked when the token at ``p + 1`` is a response token whose mask is 1, i.e. ``p = prompt_len - 1 + j`` for
    every response token ``j`` with ``response_masks[i][j]`` set."""
    out = torch.zeros(len(response_masks), seq_len, dtype=torch.bool)
    for i, (start, mask) in enumerate(zip(prompt_lens.tolist(), response_masks, strict=True)):
        cols = int(start) - 1 + torch.nonzero(mask.reshape(-1).bool(), as_tuple=True)[0]
        out[i, cols] = True
    return out


def logprobs_at(hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, positions: torch.Tensor,
                temperature: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(log-probs, entropies), each (batch, sequence) float32, of ``labels`` under ``hidden @ weight.T /
    temperature`` at the marked ``positions`` (0 elsewhere): verl's ``_fused_linear_for_ppo_fwd`` formulas
    (``verl/utils/experimental/torch_functional.py``), on the marked rows only."""
    rows = hidden[positions]  # (n, hidden)
    logits = ((rows @ weight.t()) / temperature).float()
    log_probs = logits.log_softmax(dim=-1)
    picked = log_probs.gather(-1, labels[positions].unsqueeze(-1)).squeeze(-1)
    entropy = torch.logsumexp(logits, dim=-1) - (log_probs.exp() * logits).sum(dim=-1)
    full = hidden.new_zeros(positions.shape, dtype=torch.float32)
    return full.masked_scatter(positions, picked), full.masked_scatter(positions, entropy)


def wrap_forward(model_class: type, decoder: Any) -> None:
    """Wrap ``model_class.forward`` (verl's fused-kernel forward, set by its ``apply_monkey_patch``) once: during a
    pass that marked positions, the decoder then :func:`logprobs_at`; otherwise verl's forward."""
    verl_forward = model_class.forward
    if getattr(verl_forward, "_response_logprobs", False):
        return

    @functools.wraps(verl_forward)
    def forward(self: Any, input_ids: torch.Tensor = None, labels: Any = None, temperature: float = 1.0,
                shift_labels: Any = None, **kwargs: Any) -> Any:
        positions = _POSITIONS.get()
        if positions is None or input_ids is None or input_ids.shape != positions.shape:
            return verl_forward(self, input_ids, labels=labels, temperature=temperature, shift_labels=shift_labels,
                                **kwargs)
        kwargs.pop("return_dict", None)
        outputs = decoder(self, input_ids, **kwargs)
        weight = self.lm_head.weight
        if hasattr(weight, "full_tensor"):  # a DTensor under FSDP2: the whole matrix, as verl's forward does
            weight = weight.full_tensor()
        labels = torch.roll(input_ids, shifts=-1, dims=-1)
        log_probs, entropy = logprobs_at(outputs[0], weight.to(outputs[0].device), labels,
                                         positions.to(input_ids.device), temperature)
        return ResponseLogprobOutput(log_probs=log_probs, entropy=entropy, hidden_states=outputs.hidden_states)

    forward._response_logprobs = True
    model_class.forward = forward


def engine_class() -> type:
    """verl's ``FSDPEngineWithLMHead`` with the forward above (built on first use: importing verl's engine module
    is slow and needs torch.distributed)."""
    from verl.utils import tensordict_utils as tu
    from verl.utils.dataset.dataset_utils import DatasetPadMode
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead

    class ResponseLogprobEngine(FSDPEngineWithLMHead):
        def _build_module(self):
            module = super()._build_module()
            decoder = DECODER_CALLS.get(getattr(module.config, "model_type", ""))
            if decoder is not None and self.model_config.use_fused_kernels:
                wrap_forward(type(module), decoder)
            return module

        def prepare_model_inputs(self, micro_batch):
            model_inputs, output_args = super().prepare_model_inputs(micro_batch)
            _POSITIONS.set(None)
            layout_known = (
                tu.get_non_tensor_data(data=micro_batch, key="use_fused_kernels", default=False)
                and not tu.get_non_tensor_data(data=micro_batch, key="use_remove_padding", default=True)
                and tu.get_non_tensor_data(data=micro_batch, key="pad_mode", default=DatasetPadMode.NO_PADDING)
                == DatasetPadMode.NO_PADDING
                and "response_mask" in micro_batch.keys() and micro_batch["prompts"].is_nested)
            if layout_known:
                masks = micro_batch["response_mask"]
                masks = list(masks.unbind()) if masks.is_nested else list(masks)
                _POSITIONS.set(response_positions(micro_batch["prompts"].offsets().diff(), masks,
                                                  model_inputs["input_ids"].shape[-1]))
            return model_inputs, output_args

        def forward_step(self, micro_batch, loss_function, forward_only):
            try:
                return super().forward_step(micro_batch, loss_function, forward_only)
            finally:
                _POSITIONS.set(None)

    return ResponseLogprobEngine


def enabled() -> bool:
    """Whether the CPU platform registers :class:`ResponseLogprobEngine` (``VERL_CPU_RESPONSE_LOGPROBS``, default
    on)."""
    return os.environ.get(SWITCH, "1").strip() != "0"


__all__ = ["DECODER_CALLS", "SWITCH", "ResponseLogprobOutput", "engine_class", "enabled", "logprobs_at",
           "response_positions", "wrap_forward"]
