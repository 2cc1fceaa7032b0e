#!/usr/bin/env bash
# verl's trainer for every recipe of this project (make grpo-verl, make grpo-verl-agent and the run scripts under
# verl/examples/), on the machine it finds: the one owner of the platform, the rollout backend and the CPU-safe
# settings.
#   bash verl/main_ppo.sh [RECIPE OVERRIDES ...] [-- USER OVERRIDES ...]
# Runs `python -m verl.trainer.main_ppo` (or verl/dry_run.py with DRY_RUN=1) with the recipe's overrides, then the
# ones this machine needs, then the user's (so the user's win).
#
# Platform: VERL_PLATFORM (nvidia, npu, cpu, ...) or, when unset, `cpu` where neither nvidia-smi nor npu-smi finds
# a device (else verl detects it). Rollout backend: ROLLOUT_ENGINE (vllm | sglang | hf) or, when unset, `hf` (transformers,
# verl/plugins/verl_hf_rollout.py) on the CPU or where vLLM is not installed, else vllm. Both plugins are put on
# PYTHONPATH and named in VERL_USE_EXTERNAL_MODULES, so every verl process (Ray workers too) registers them.
# With DRY_RUN=1 nothing is picked for this machine (the launch is checked as it would run on a GPU machine: vLLM,
# no CPU settings) unless VERL_PLATFORM / ROLLOUT_ENGINE are given. WHO names the caller in the one-line
# notes (default: verl).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-$REPO/.venvs/rl/bin/python}
WHO=${WHO:-verl}

recipe_args=()
user_args=()
seen_separator=0
for arg in "$@"; do
  if [[ $seen_separator == 0 && "$arg" == -- ]]; then seen_separator=1; continue; fi
  if [[ $seen_separator == 1 ]]; then user_args+=("$arg"); else recipe_args+=("$arg"); fi
done

# Values that decide what runs are checked by name before anything starts (docs/reliability.md, "verl launcher"):
# DRY_RUN 1 checks the launch, empty or 0 trains; VERL_PLATFORM is empty (picked for this machine) or one of verl's
# platform names, exactly as verl reads them.
case "${DRY_RUN:-}" in
  ""|0) DRY_RUN=0 ;;
  1) ;;
  *) echo "$WHO: DRY_RUN must be 1 (check the launch, no training) or empty / 0 (train), got '${DRY_RUN:0:60}'" >&2
     exit 2 ;;
esac
case "${VERL_PLATFORM:-}" in
  ""|cpu|nvidia|huawei|amd) ;;
  *) echo "$WHO: VERL_PLATFORM must be empty (picked for this machine) or one of cpu, nvidia, huawei, amd (verl's" \
          "platform names, lower case), got '${VERL_PLATFORM:0:60}'" >&2
     exit 2 ;;
esac

if [[ "${DRY_RUN:-0}" == 1 ]]; then
  # the launch is checked as it would run on its target machine (a GPU with vLLM), not adapted to this one
  VERL_PLATFORM=${VERL_PLATFORM:-}
  ROLLOUT_ENGINE=${ROLLOUT_ENGINE:-vllm}
else
  if [[ -z "${VERL_PLATFORM:-}" ]]; then
    if nvidia-smi -L >/dev/null 2>&1 || npu-smi info >/dev/null 2>&1; then VERL_PLATFORM=""; else VERL_PLATFORM=cpu; fi
  fi
  if [[ -z "${ROLLOUT_ENGINE:-}" ]]; then
    if [[ "$VERL_PLATFORM" == cpu ]]; then
      ROLLOUT_ENGINE=hf
    elif "$PYTHON" -c "import vllm" >/dev/null 2>&1; then
      ROLLOUT_ENGINE=vllm
    else
      ROLLOUT_ENGINE=hf
      echo "$WHO: vLLM is not installed: rollouts with transformers (ROLLOUT_ENGINE=hf; make setup-gpu installs vLLM)"
    fi
  fi
fi
case "$ROLLOUT_ENGINE" in
  hf) ;;
  vllm|sglang)
    if [[ "${DRY_RUN:-0}" != 1 ]] && ! "$PYTHON" -c "import $ROLLOUT_ENGINE" >/dev/null 2>&1; then
      echo "$WHO: ROLLOUT_ENGINE=$ROLLOUT_ENGINE is not installed (GPU: make setup-gpu; or ROLLOUT_ENGINE=hf)" >&2
      exit 2
    fi ;;
  *) echo "$WHO: ROLLOUT_ENGINE must be vllm, sglang or hf, got '${ROLLOUT_ENGINE:0:60}'" >&2; exit 2 ;;
esac

export PYTHONPATH="$REPO/verl/plugins:$REPO/verl/gui_agent:$REPO${PYTHONPATH:+:$PYTHONPATH}"
export VERL_USE_EXTERNAL_MODULES="verl_cpu_platform,verl_hf_rollout,verl_position_ids_fix${VERL_USE_EXTERNAL_MODULES:+,$VERL_USE_EXTERNAL_MODULES}"
if [[ -n "$VERL_PLATFORM" ]]; then export VERL_PLATFORM; fi

machine_args=(actor_rollout_ref.rollout.name="$ROLLOUT_ENGINE")
if [[ "$ROLLOUT_ENGINE" == hf ]]; then
  # one process per replica; verl's rollout-vs-actor log-prob comparison needs the rollout's log-probs
  machine_args+=(actor_rollout_ref.rollout.tensor_model_parallel_size=1 actor_rollout_ref.rollout.calculate_log_probs=True)
fi
if [[ "$VERL_PLATFORM" == cpu ]]; then
  : "${CPU_WORKERS:=1}"              # training processes (verl's "GPUs" per node)
  if ! [[ "$CPU_WORKERS" =~ ^[1-9][0-9]{0,2}$ ]]; then
    echo "$WHO: CPU_WORKERS (training processes on the CPU) must be a whole number from 1 to 999, got '${CPU_WORKERS:0:60}'" >&2
    exit 2
  fi
  : "${CPU_RESPONSE_LENGTH:=128}"    # response token budget (a random tiny model rarely stops by itself)
  machine_args+=(
    trainer.device=cpu
    trainer.n_gpus_per_node="$CPU_WORKERS"
    trainer.nnodes=1
    ++ray_kwargs.ray_init.num_cpus=16                      # logical: verl's actors ask for more CPUs than 2 cores
    ++ray_kwargs.ray_init.num_gpus="$CPU_WORKERS"          # logical tokens verl's resource check counts (no device)
    transfer_queue.backend.SimpleStorage.num_data_storage_units=1
    actor_rollout_ref.rollout.agent.num_workers=1
    reward.num_workers=1
    actor_rollout_ref.actor.strategy=fsdp2                 # FSDP1 reads the CPU's device id as a CUDA index
    actor_rollout_ref.ref.strategy=fsdp2
    '++actor_rollout_ref.actor.fsdp_config.mixed_precision={param_dtype:fp32,reduce_dtype:fp32,buffer_dtype:fp32}'
    '++actor_rollout_ref.ref.fsdp_config.mixed_precision={param_dtype:fp32,reduce_dtype:fp32,buffer_dtype:fp32}'
    actor_rollout_ref.rollout.dtype=float32
    ++actor_rollout_ref.model.override_config.attn_implementation=sdpa
    actor_rollout_ref.model.use_remove_padding=False
    # verl's chunked log-prob and entropy kernel (torch backend): without flash-attn verl's fallback
    # (logprobs_from_logits_v2) takes a logsumexp per token in a Python loop, over prompt and response tokens; with
    # the kernel a GUI-R1 step of the tiny model takes 70 s instead of 246 (tests/test_verl_cpu_training.py, measured)
    actor_rollout_ref.model.use_fused_kernels=True
    actor_rollout_ref.model.fused_kernel_options.impl_backend=torch
    ++ray_kwargs.ray_init.include_dashboard=False           # Ray's dashboard: a dozen processes a CPU run never reads
    actor_rollout_ref.actor.fsdp_config.param_offload=False
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=False
    actor_rollout_ref.ref.fsdp_config.param_offload=False
    data.dataloader_num_workers=0
    data.train_batch_size=2
    data.max_response_length="$CPU_RESPONSE_LENGTH"
    actor_rollout_ref.actor.ppo_mini_batch_size=2
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2
    trainer.val_before_train=False
  )
  echo "$WHO: no CUDA GPU found: verl on CPU (platform cpu, gloo, FSDP2 in fp32, sdpa attention, no padding removal," \
       "verl's fused log-prob kernel (torch), no Ray dashboard," \
       "rollout $ROLLOUT_ENGINE, $CPU_WORKERS worker, train batch 2 x rollout.n, responses <= $CPU_RESPONSE_LENGTH tokens, no validation" \
       "before training); ARGS overrides them"
fi

if [[ "${DRY_RUN:-0}" == 1 ]]; then
  exec "$PYTHON" "$REPO/verl/dry_run.py" "${recipe_args[@]}" "${machine_args[@]}" "${user_args[@]}"
fi
exec "$PYTHON" -m verl.trainer.main_ppo "${recipe_args[@]}" "${machine_args[@]}" "${user_args[@]}"
