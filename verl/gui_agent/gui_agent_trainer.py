"""Per-step reward parts for every verl recipe of this project: verl 0.9.1's v1 sync trainer, registered as trainer
mode ``gui_agent``, logging the mean of every reward part of the step's training samples (``gui_agent/<part>`` as
``gui_agent/<part>/mean``, any other part as ``reward/<part>/mean``) beside verl's own metrics, at every training
step, and the mean seconds an episode spent in generation, on the phone, in its reward and building its tokens
(``timing_s/episode/<part>/mean``, from the ``gui_agent`` loop's ``extra_fields["timing_s"]``;
:func:`episode_timing_metrics`). The GUI-agent run scripts and ``make grpo-verl`` select it.

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

It also runs the RL methods of ``core/rl`` (docs/rl-algorithms.md; keys and checks in :mod:`rl_methods`), each at
verl's own step for it: ``_fetch_one_gen_batch`` (the difficulty filter passes over rows whose task is set aside),
``_compute_old_log_prob`` (success replay puts stored successes in before the actor's pass), ``_compute_advantage``
(``gigpo`` and ``grpo_nsr``; any other estimator is verl's), ``_compute_metrics`` (group counts by success, the
filter's update, dynamic sampling's kept/dropped/generated groups). The response-mask dumps carry each run's
advantages.

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


def _episode_means(mappings: Iterable[Mapping[str, Any] | None], name: Callable[[str], str]) -> dict[str, float]:
    """``name(key)/mean``: the mean over the mappings that have it of every numeric value (booleans and non-numbers
    are skipped; a None mapping adds nothing)."""
    values: dict[str, list[float]] = {}
    for mapping in mappings:
        for key, value in (mapping or {}).items():
            if not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)):
                values.setdefault(name(key), []).append(float(value))
    return {f"{key}/mean": float(np.mean(v)) for key, v in sorted(values.items())}


def reward_part_metrics(reward_extra_infos: Iterable[Mapping[str, Any] | None]) -> dict[str, float]:
    """The mean over episodes of every numeric reward part in their ``reward_extra_info``: ``gui_agent/<part>`` as
    ``gui_agent/<part>/mean``, any other part (GUI-R1's ``r1gui_format``, ``r1gui_accuracy``, ...) as
    ``reward/<part>/mean``. Episodes without one are skipped; a part missing from some episodes is averaged over
    those that have it; booleans and non-numbers are not parts."""
    return _episode_means(reward_extra_infos, lambda key: key if key.startswith(PREFIX) else f"reward/{key}")


def episode_timing_metrics(timings: Iterable[Mapping[str, Any] | None]) -> dict[str, float]:
    """The mean over episodes of each part of their ``timing_s`` (seconds an episode: ``generate``, ``phone``,
    ``reward``, ``tokens``; the ``gui_agent`` loop's ``extra_fields``) as ``timing_s/episode/<part>/mean``. Samples
    without one (GUI-R1's single-turn rows) add nothing; non-numbers are skipped."""
    return _episode_means(timings, lambda part: f"timing_s/episode/{part}")


def mask_segments(token_ids: Sequence[int], mask: Sequence[int], decode: Callable[[list[int]], str],
                  advantages: Sequence[float] | None = None) -> list[dict]:
    """A response's tokens cut into runs of equal ``response_mask``: ``[{"trained": bool, "tokens": n, "text":
    decode(run)}, ...]`` in order (special tokens kept, so turn boundaries show); with ``advantages`` (one per
    token, as the update read them) each run also has ``advantage_min`` / ``advantage_max``."""
    if len(token_ids) != len(mask) or (advantages is not None and len(advantages) != len(mask)):
        raise ValueError(f"{len(token_ids)} response tokens but {len(mask)} mask values"
                         + ("" if advantages is None else f" and {len(advantages)} advantages"))
    segments: list[dict] = []
    start = 0
    for end in range(1, len(token_ids) + 1):
        if end == len(token_ids) or bool(mask[end]) != bool(mask[start]):
            run = [int(t) for t in token_ids[start:end]]
            segment = {"trained": bool(mask[start]), "tokens": len(run), "text": decode(run)}
            if advantages is not None:
                values = [float(a) for a in advantages[start:end]]
                segment.update(advantage_min=min(values), advantage_max=max(values))
            segments.append(segment)
            start = end
    return segments


def write_response_masks(batch, tokenizer, directory: str | os.PathLike, step: int) -> Path:
    """:func:`mask_segments` of every sample of a step's batch (TransferQueue ``KVBatchMeta``), with the advantages
    the update used, one JSON line each (``uid``, ``segments``), written atomically to
    ``<directory>/response_masks/<step>.jsonl``."""
    import transfer_queue as tq

    data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id,
                           select_fields=["responses", "response_mask", "advantages"])
    out = Path(directory) / "response_masks" / f"{step}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for key, ids, mask, adv in zip(batch.keys, data["responses"].unbind(), data["response_mask"].unbind(),
                                       data["advantages"].unbind(), strict=True):
            segments = mask_segments(ids.tolist(), mask.tolist(), lambda run: tokenizer.decode(run), adv.tolist())
            f.write(json.dumps({"uid": key, "segments": segments}, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    return out


def step_samples(batch, fields: Sequence[str]) -> tuple[list[str], dict[str, list]]:
    """(keys, per-field lists) of a step's real samples (padding rows left out), read from TransferQueue;
    ``extra_fields`` as dicts, ``rm_scores`` as each sample's summed reward, tensors as lists."""
    import transfer_queue as tq

    real = [i for i, tag in enumerate(batch.tags) if not tag.get("is_padding", False)]
    keys = [batch.keys[i] for i in real]
    data = tq.kv_batch_get(keys=keys, partition_id=batch.partition_id, select_fields=list(fields))
    out: dict[str, list] = {}
    for name in fields:
        value = data[name]
        if name in ("extra_fields", "extra_info"):  # a NonTensorStack, or a plain list for a subset of keys
            items = value.tolist() if hasattr(value, "tolist") else list(value)
            out[name] = [e if isinstance(e, dict) else getattr(e, "data", None) for e in items]
        elif name == "rm_scores":
            out[name] = [float(v.sum()) for v in value.unbind()]
        elif hasattr(value, "unbind"):
            out[name] = [v.tolist() for v in value.unbind()]
        else:
            out[name] = list(value.tolist())
    return keys, out


def sample_row(td) -> dict[str, Any]:
    """One TransferQueue sample (a TensorDict of batch 1, as ``kv_batch_get`` returns it) as the plain dict verl's
    agent-loop writer puts (tensors without the batch dimension, other values as they are)."""
    import torch

    row: dict[str, Any] = {}
    for name in td.keys():
        value = td[name]
        if isinstance(value, torch.Tensor):
            row[name] = value.unbind()[0] if value.is_nested else value[0]
        else:
            row[name] = (value.tolist() if hasattr(value, "tolist") else list(value))[0]
    return row


def cap_dynamic_sampling(buffer, max_groups: int):
    """Give verl's dynamic sampling a cap on generation rounds: within one ``buffer.sample`` call (one training
    step), at most ``max_groups`` groups are dropped; groups its filter would drop after that are let through as
    they are (counted in the step's ``rl/dynamic_sampling/let_through``). verl 0.9.1's v1 buffer keeps drawing fresh
    prompts until the batch is full (its ``max_num_gen_batches`` is ignored), so a policy whose every group agrees
    (a random start: every episode fails) would never finish a step. Wraps the buffer's own methods on the instance;
    returns the buffer."""
    from collections import Counter

    original_filter, original_sample = buffer._dapo_filtered_keys, buffer.sample
    state: dict[str, Any] = {"dropped": set(), "through": set()}

    def sample(*args: Any, **kwargs: Any):
        state["dropped"], state["through"] = set(), set()
        batch, metrics = original_sample(*args, **kwargs)
        return batch, {**metrics, "rl/dynamic_sampling/let_through": float(len(state["through"]))}

    def dapo_filtered_keys(partition_id: str):
        uids, counts = original_filter(partition_id)
        if partition_id == "val" or not uids:
            return uids, counts
        values = buffer._dapo_classification_cache[partition_id]
        dropped = set()
        for uid in sorted(uids - state["through"]):
            if uid in state["dropped"] or len(state["dropped"]) < max_groups:
                state["dropped"].add(uid)
                dropped.add(uid)
            else:
                state["through"].add(uid)
        return dropped, Counter(values[uid] for uid in dropped)

    buffer._dapo_filtered_keys, buffer.sample = dapo_filtered_keys, sample
    return buffer


def trainer_class() -> type:
    """verl's v1 sync trainer + the reward parts in its per-step metrics + the RL methods of :mod:`rl_methods`
    (built on first use: verl's v1 trainer module imports the TransferQueue package, verl's ``verl-core`` extra,
    which the CPU environment lacks)."""
    import torch
    from omegaconf import open_dict
    from tensordict import TensorDict

    from core.rl.rows import task_key
    from rl_methods import OWN_ESTIMATORS, group_metrics, rl_options, shuffle_step, success_values, token_advantages
    from verl.trainer.ppo.v1 import PPOTrainerSync

    class GUIAgentTrainer(PPOTrainerSync):
        def __init__(self, config, *args: Any, **kwargs: Any):
            self.rl = rl_options(config.algorithm)  # a bad value: one line naming algorithm.<key>, before any work
            self.difficulty = self.rl.difficulty_filter()
            self.replay = self.rl.replay()
            self.skipped_rows = 0
            with open_dict(config):
                config.trainer.v1.trainer_mode = BASE_MODE  # verl branches on the mode's name: behave as sync
                if self.difficulty is not None:
                    config.data.gen_batch_size = 1  # rows are set aside one at a time (as verl's DAPO refill)
            super().__init__(config, *args, **kwargs)

        # ------------------------------------------------------------------ dynamic sampling: its cap
        def _build_replay_buffer(self):
            buffer = super()._build_replay_buffer()
            dapo = self.config.algorithm.get("filter_groups") or {}
            rounds = int(dapo.get("max_num_gen_batches", 0) or 0)
            if getattr(buffer, "filter_groups_metric", None) is None or rounds <= 0:
                return buffer
            # DAPO's max_num_gen_batches: generation batches a step may draw; the first is the step's own
            return cap_dynamic_sampling(buffer, (rounds - 1) * int(self.config.data.train_batch_size))

        # ------------------------------------------------------------------ difficulty filter (sampler side)
        def _fetch_one_gen_batch(self):
            batch = super()._fetch_one_gen_batch()
            if self.difficulty is None:
                return batch
            for _ in range(len(self.train_dataset)):  # at most one pass over the data, then take what comes
                info = batch["extra_info"][0]  # one row a fetch (gen_batch_size 1)
                if not self.difficulty.is_skipped(task_key(info, ""), self.global_steps):
                    break
                self.skipped_rows += 1
                batch = super()._fetch_one_gen_batch()
            return batch

        # ------------------------------------------------------------------ success replay (ARPO)
        def _compute_old_log_prob(self, batch, metrics):
            if self.replay is not None:
                batch = self._replay_successes(batch, metrics)
            return super()._compute_old_log_prob(batch, metrics)

        def _replay_successes(self, batch, metrics):
            """Before the actor computes old log-probs: groups that meet ARPO's rule get a stored success of their
            task in place of their last sample (the whole sample: tokens, masks, images, reward, with the group's
            uid and session), then this step's own successes are stored (core.rl.replay)."""
            import transfer_queue as tq
            from verl.utils.tensordict_utils import list_of_dict_to_tensordict

            keys, data = step_samples(batch, ["rm_scores", "extra_fields", "extra_info"])
            try:
                _, ok = success_values(data["extra_fields"], self.rl.success_metric)
            except ValueError:  # no success part: nothing to store, nothing replayed
                return batch
            uids = [key.split("_")[0] for key in keys]
            tasks = [task_key(info, uid) for info, uid in zip(data["extra_info"], uids, strict=True)]
            replayed = [bool((e or {}).get("replayed")) for e in data["extra_fields"]]
            plan = self.replay.plan(uids, tasks, data["rm_scores"])
            tags = batch.tags  # the batch's own list: a replayed sample's lengths replace the old one's
            row_of_key = {key: i for i, key in enumerate(batch.keys)}
            for item in plan:
                key = keys[item.index]
                row, tag = dict(item.item[0]), dict(item.item[1])
                row["uid"] = uids[item.index]
                row["session_id"] = int(key.rsplit("_", 2)[1])
                row["extra_fields"] = {**(row.get("extra_fields") or {}), "replayed": True}
                tq.kv_batch_put(keys=[key], partition_id=batch.partition_id, fields=list_of_dict_to_tensordict([row]),
                                tags=[tag])
                tags[row_of_key[key]] = tag
                replayed[item.index] = True
            stored = 0
            for i, key in enumerate(keys):
                if ok[i] and not replayed[i]:
                    row = tq.kv_batch_get(keys=[key], partition_id=batch.partition_id)
                    self.replay.add(tasks[i], (sample_row(row), dict(tags[row_of_key[key]])))
                    stored += 1
            metrics.update({"rl/replay/injected": float(len(plan)), "rl/replay/stored": float(stored),
                            "rl/replay/buffered": float(sum(len(b) for b in self.replay.buffers.values()))})
            return batch

        # ------------------------------------------------------------------ advantages
        def _compute_advantage(self, batch, metrics):
            shuffled = None
            if self.rl.shuffle_seed is not None:
                shuffled = self._shuffle_rewards(batch, metrics)
            if self.rl.estimator not in OWN_ESTIMATORS:
                return super()._compute_advantage(batch, metrics)
            import transfer_queue as tq

            keys, data = step_samples(batch, ["response_mask", "rm_scores", "extra_fields"])
            extras = shuffled if shuffled is not None else data["extra_fields"]
            advantages, adv_metrics = token_advantages(self.rl, keys, data["response_mask"], data["rm_scores"],
                                                       extras)
            metrics.update(adv_metrics)
            by_key = dict(zip(keys, advantages, strict=True))
            lengths = [int(tag["response_len"]) for tag in batch.tags]
            per_sample = [by_key.get(key) if not tag.get("is_padding", False) else None
                          for key, tag in zip(batch.keys, batch.tags, strict=True)]
            nested = torch.nested.as_nested_tensor(
                [torch.tensor(a, dtype=torch.float32) if a is not None else torch.zeros(n)  # padding rows: 0
                 for a, n in zip(per_sample, lengths, strict=True)], layout=torch.jagged)
            return tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id,
                                   fields=TensorDict({"advantages": nested, "returns": nested},
                                                     batch_size=len(batch)))

        def _shuffle_rewards(self, batch, metrics):
            """The shuffled-reward control (``algorithm.shuffle_rewards``): the step's real samples swap episode
            rewards (written back as ``rm_scores``, the reward on each sample's last token, where verl's reward loop
            puts it) and step rewards (returned as the samples' ``extra_fields``, for GiGPO)."""
            import transfer_queue as tq

            keys, data = step_samples(batch, ["rm_scores", "extra_fields"])
            scores, extras = shuffle_step(self.rl, data["rm_scores"], data["extra_fields"], self.global_steps)
            lengths = {key: int(tag["response_len"]) for key, tag in zip(batch.keys, batch.tags, strict=True)}
            rows = []
            for key, score in zip(keys, scores, strict=True):
                row = torch.zeros(lengths[key], dtype=torch.float32)
                row[-1] = score
                rows.append(row)
            tq.kv_batch_put(keys=keys, partition_id=batch.partition_id, fields=TensorDict(
                {"rm_scores": torch.nested.as_nested_tensor(rows, layout=torch.jagged)}, batch_size=len(keys)))
            metrics["rl/shuffle/moved_reward"] = float(sum(a != b for a, b in zip(scores, data["rm_scores"], strict=True)))
            return extras

        # ------------------------------------------------------------------ per-step metrics
        def _compute_metrics(self, batch, metrics, timing_raw, global_steps, epoch):
            super()._compute_metrics(batch, metrics, timing_raw, global_steps=global_steps, epoch=epoch)
            keys, data = step_samples(batch, ["extra_fields", "rm_scores", "extra_info"])
            extras = data["extra_fields"]
            metrics.update(reward_part_metrics((e or {}).get("reward_extra_info") for e in extras))
            metrics.update(episode_timing_metrics((e or {}).get("timing_s") for e in extras
                                                  if not (e or {}).get("replayed")))  # a replay's time is old
            try:
                counts = group_metrics(keys, extras, self.rl.success_metric, data["rm_scores"])
            except ValueError:  # no success part (a custom reward): no group counts, no difficulty filter
                return
            metrics.update(counts)
            dapo = self.config.algorithm.get("filter_groups") or {}
            if dapo.get("enable", False):  # verl's own dynamic sampling: its evictions, our kept groups
                kept = counts["rl/groups/mixed"] + counts["rl/groups/all_fail"] + counts["rl/groups/all_success"]
                dropped = float(metrics.get("training/filter_groups/evicted_samples", 0.0))
                metrics.update({"rl/dynamic_sampling/kept_groups": kept, "rl/dynamic_sampling/dropped_groups": dropped,
                                "rl/dynamic_sampling/generated_groups": kept + dropped})
            if self.difficulty is not None:
                _, ok = success_values(extras, self.rl.success_metric)
                tasks = [task_key(info, key.split("_")[0]) for info, key in zip(data["extra_info"], keys, strict=True)]
                self.difficulty.update(tasks, ok, global_steps)
                metrics.update({"rl/difficulty/skipped_rows": float(self.skipped_rows),
                                "rl/difficulty/tasks_set_aside": float(self.difficulty.skipped_count(global_steps + 1))})
                self.skipped_rows = 0

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


__all__ = ["BASE_MODE", "TRAINER_MODE", "cap_dynamic_sampling", "episode_timing_metrics", "mask_segments", "sample_row", "step_samples", "register", "reward_part_metrics",
           "trainer_class", "write_response_masks"]
