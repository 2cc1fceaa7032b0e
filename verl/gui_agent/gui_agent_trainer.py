"""Per-step reward parts for every verl recipe of this project: verl 0.9.1's v1 sync trainer, registered as trainer
mode ``gui_agent``, logging the mean of every reward part of the step's training samples (``gui_agent/<part>`` as
``gui_agent/<part>/mean``, any other part as ``reward/<part>/mean``) beside verl's own metrics, at every training
step. The GUI-agent run scripts and ``make grpo-verl`` select it.

verl 0.9.1's v1 trainer computes its per-step metrics from a fixed field list (``PPOTrainer._compute_metrics``); the
reward parts travel in each sample's ``extra_fields["reward_extra_info"]`` (set by the ``gui_agent`` loop) and
reached only the validation metrics. Its extension points used here: ``register_trainer`` / ``get_trainer_cls``
(``trainer.v1.trainer_mode``) and Ray's ``worker_process_setup_hook`` (``ray_kwargs.ray_init.runtime_env``), which
imports this module in the process that picks the trainer. The run scripts set both::

    trainer.v1.trainer_mode=gui_agent
    +ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=gui_agent_trainer.register

With ``trainer.rollout_data_dir`` set, verl dumps each step's prompts and responses as text there; this trainer adds
``<rollout_data_dir>/response_masks/<step>.jsonl``: every response cut into its runs of trained tokens
(``response_mask`` 1: the model's own turns) and untrained ones (0: tool turns, feedback, the turn separators), as
the loss saw them (:func:`mask_segments`).

The trainer is verl's ``sync`` trainer in every other respect (its config is set back to mode ``sync`` before verl
reads it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: ``trainer.v1.trainer_mode`` of this trainer.
TRAINER_MODE = "gui_agent"
#: The sync trainer whose behaviour it keeps.
BASE_MODE = "sync"
PREFIX = "gui_agent/"


def reward_part_metrics(reward_extra_infos: Iterable[Mapping[str, Any] | None]) -> dict[str, float]:
    """The mean over episodes of every numeric reward part in their ``reward_extra_info``: ``gui_agent/<part>`` as
    ``gui_agent/<part>/mean``, any other part (GUI-R1's ``r1gui_format``, ``r1gui_accuracy``, ...) as
    ``reward/<part>/mean``. Episodes without one are skipped; a part missing from some episodes is averaged over
    those that have it; booleans and non-numbers are not parts."""
    values: dict[str, list[float]] = {}
    for info in reward_extra_infos:
        for key, value in (info or {}).items():
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                continue
            name = key if key.startswith(PREFIX) else f"reward/{key}"
            values.setdefault(name, []).append(float(value))
    return {f"{key}/mean": float(np.mean(v)) for key, v in sorted(values.items())}


def step_reward_part_metrics(batch) -> dict[str, float]:
    """:func:`reward_part_metrics` of a step's batch in verl's TransferQueue (``KVBatchMeta``: keys, partition,
    tags), padding rows left out, read the way verl's v1 trainer reads its own per-sample fields."""
    import transfer_queue as tq

    data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["extra_fields"])
    extra = data.pop("extra_fields").tolist()
    real = [e for e, tag in zip(extra, batch.tags, strict=True) if not tag.get("is_padding", False)]
    return reward_part_metrics(e.get("reward_extra_info") if isinstance(e, dict) else None for e in real)


def mask_segments(token_ids: Sequence[int], mask: Sequence[int], decode: Callable[[list[int]], str]) -> list[dict]:
    """A response's tokens cut into runs of equal ``response_mask``: ``[{"trained": bool, "tokens": n, "text":
    decode(run)}, ...]`` in order (special tokens kept, so turn boundaries show)."""
    if len(token_ids) != len(mask):
        raise ValueError(f"{len(token_ids)} response tokens but {len(mask)} mask values")
    segments: list[dict] = []
    start = 0
    for end in range(1, len(token_ids) + 1):
        if end == len(token_ids) or bool(mask[end]) != bool(mask[start]):
            run = [int(t) for t in token_ids[start:end]]
            segments.append({"trained": bool(mask[start]), "tokens": len(run), "text": decode(run)})
            start = end
    return segments


def write_response_masks(batch, tokenizer, directory: str | os.PathLike, step: int) -> Path:
    """:func:`mask_segments` of every sample of a step's batch (TransferQueue ``KVBatchMeta``), one JSON line each
    (``uid``, ``segments``), written atomically to ``<directory>/response_masks/<step>.jsonl``."""
    import transfer_queue as tq

    data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["responses", "response_mask"])
    out = Path(directory) / "response_masks" / f"{step}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for key, ids, mask in zip(batch.keys, data["responses"].unbind(), data["response_mask"].unbind(), strict=True):
            segments = mask_segments(ids.tolist(), mask.tolist(), lambda run: tokenizer.decode(run))
            f.write(json.dumps({"uid": key, "segments": segments}, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    return out


def trainer_class() -> type:
    """verl's v1 sync trainer + the reward parts in its per-step metrics (built on first use: verl's v1 trainer
    module imports the TransferQueue package, verl's ``verl-core`` extra, which the CPU environment lacks)."""
    from omegaconf import open_dict

    from verl.trainer.ppo.v1 import PPOTrainerSync

    class GUIAgentTrainer(PPOTrainerSync):
        def __init__(self, config, *args: Any, **kwargs: Any):
            with open_dict(config):
                config.trainer.v1.trainer_mode = BASE_MODE  # verl branches on the mode's name: behave as sync
            super().__init__(config, *args, **kwargs)

        def _compute_metrics(self, batch, metrics, timing_raw, global_steps, epoch):
            super()._compute_metrics(batch, metrics, timing_raw, global_steps=global_steps, epoch=epoch)
            metrics.update(step_reward_part_metrics(batch))

        def _log_rollout_data(self, batch, timing_raw, rollout_data_dir):
            super()._log_rollout_data(batch, timing_raw, rollout_data_dir)
            write_response_masks(batch, self.tokenizer, rollout_data_dir, self.global_steps)

    return GUIAgentTrainer


def register() -> None:
    """Register the trainer as ``trainer.v1.trainer_mode=gui_agent`` (idempotent; Ray's setup hook calls it in
    every worker process)."""
    from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY, register_trainer

    if TRAINER_MODE not in TRAINER_REGISTRY:
        register_trainer(TRAINER_MODE)(trainer_class())


__all__ = ["BASE_MODE", "TRAINER_MODE", "mask_segments", "register", "reward_part_metrics", "step_reward_part_metrics",
           "trainer_class", "write_response_masks"]
