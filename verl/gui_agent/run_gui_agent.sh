#!/usr/bin/env bash
# GRPO for the Qwen3-VL mobile agent with verl (the GUI-agent recipe), shared by
# verl/examples/run_qwen3_vl_8b_gui_agent_{gpu,npu}.sh, which set the per-device defaults below.
# Every knob is an environment variable; extra arguments are hydra overrides of verl's ppo_trainer config.
# What the model sees and how an episode runs (grid, turns, screenshots and their pixel cap, invalid answers,
# reward aggregation, prompt) come from ONE agent recipe file, RECIPE (default verl/gui_agent/recipe.yaml), the
# file `gui-agent rollout --recipe` reads too.
# Launched through verl/main_ppo.sh (platform, rollout backend, CPU-safe settings on a machine without a GPU).
# PRINT_ARGS=1 prints the overrides (one per line) and exits without training; DRY_RUN=1 composes and validates the
# whole config as verl's entry point does, loads the data, tool, agent loop and reward, prints the values that
# matter and exits (verl/dry_run.py: CPU, no GPU needed).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${MODEL_PATH:=Qwen/Qwen3-VL-8B-Instruct}"
: "${DATA_DIR:=$HOME/data/gui_agent}"               # verl/prepare_gui_agent_data.py --output_dir
: "${DEVICE:=cuda}"                                  # cuda | npu | cpu
: "${TRAIN_BATCH_SIZE:=512}"                         # recipe: 512 GPU / 256 NPU
: "${PPO_MINI_BATCH_SIZE:=128}"
: "${MICRO_BATCH:=1}"                                # ppo/log-prob micro batch per device (lower it on OOM)
: "${ROLLOUT_N:=5}"                                  # GRPO group size
: "${KL_LOSS_COEF:=0.01}"
: "${ROLLOUT_ENGINE:=}"                              # vllm | sglang (the README's two) | hf; empty: verl/main_ppo.sh picks
: "${TP:=2}"                                         # rollout tensor parallel: recipe 2 GPU / 4 NPU
: "${RECIPE:=$REPO/verl/gui_agent/recipe.yaml}"     # the agent recipe (core/agent_recipe.py)
: "${MAX_PROMPT_LENGTH:=8192}"
: "${MAX_RESPONSE_LENGTH:=16384}"
: "${CHUNKED_PREFILL:=True}"                         # enable_chunked_prefill
: "${ENFORCE_EAGER:=False}"                          # False = CUDA graphs (GPU); NPU scripts set True
: "${PARAM_OFFLOAD:=False}"                          # FSDP param/optimizer offload (OOM)
: "${GPU_MEMORY_UTILIZATION:=0.6}"
: "${N_GPUS:=8}"
: "${NNODES:=1}"
: "${EPOCHS:=15}"
: "${LR:=1e-6}"
: "${LOGGER:=console}"
: "${EXPERIMENT_NAME:=qwen3_vl_8b_gui_agent_${DEVICE}}"

PYTHON=${PYTHON:-$REPO/.venvs/rl/bin/python}
for knob in GRID MAX_TURNS MAX_SCREENSHOTS MAX_SCREENSHOT_PIXELS ON_INVALID AGGREGATION; do
  if [[ -n "${!knob:-}" ]]; then
    echo "error: $knob is set in the agent recipe file now (${knob,,}: in $RECIPE); copy it and pass RECIPE=<your copy>" >&2
    exit 2
  fi
done
export PYTHONPATH="$REPO/verl/gui_agent:$REPO${PYTHONPATH:+:$PYTHONPATH}"
recipe_values=$("$PYTHON" -m core.agent_recipe shell "$RECIPE") || exit 2
eval "$recipe_values"
export GUI_AGENT_RECIPE="$RECIPE"                    # the tool YAML reads it (${oc.env:GUI_AGENT_RECIPE})

args=(
  algorithm.adv_estimator="$RECIPE_ADV_ESTIMATOR"     # the recipe's RL method (docs/rl-algorithms.md)
  +algorithm.gigpo.gamma="$RECIPE_GIGPO_GAMMA"
  +algorithm.gigpo.step_weight="$RECIPE_GIGPO_STEP_WEIGHT"
  +algorithm.gigpo.mode="$RECIPE_GIGPO_MODE"
  algorithm.use_kl_in_reward=False
  data.train_files="$DATA_DIR/train.parquet"
  data.val_files="$DATA_DIR/test.parquet"
  data.train_batch_size="$TRAIN_BATCH_SIZE"
  data.max_prompt_length="$MAX_PROMPT_LENGTH"
  data.max_response_length="$MAX_RESPONSE_LENGTH"
  data.prompt_key=prompt
  data.image_key=images
  data.filter_overlong_prompts=True
  data.return_raw_chat=True
  actor_rollout_ref.model.path="$MODEL_PATH"
  actor_rollout_ref.model.use_remove_padding=True
  actor_rollout_ref.actor.optim.lr="$LR"
  actor_rollout_ref.actor.ppo_mini_batch_size="$PPO_MINI_BATCH_SIZE"
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu="$MICRO_BATCH"
  actor_rollout_ref.actor.use_kl_loss=True
  actor_rollout_ref.actor.kl_loss_coef="$KL_LOSS_COEF"
  actor_rollout_ref.actor.kl_loss_type=low_var_kl
  actor_rollout_ref.actor.fsdp_config.param_offload="$PARAM_OFFLOAD"
  actor_rollout_ref.actor.fsdp_config.optimizer_offload="$PARAM_OFFLOAD"
  actor_rollout_ref.ref.fsdp_config.param_offload="$PARAM_OFFLOAD"
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu="$MICRO_BATCH"
  actor_rollout_ref.rollout.mode=async
  actor_rollout_ref.rollout.n="$ROLLOUT_N"
  actor_rollout_ref.rollout.tensor_model_parallel_size="$TP"
  actor_rollout_ref.rollout.gpu_memory_utilization="$GPU_MEMORY_UTILIZATION"
  actor_rollout_ref.rollout.enable_chunked_prefill="$CHUNKED_PREFILL"
  actor_rollout_ref.rollout.enforce_eager="$ENFORCE_EAGER"
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu="$MICRO_BATCH"
  actor_rollout_ref.rollout.multi_turn.enable=True
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns="$RECIPE_MAX_TURNS"
  actor_rollout_ref.rollout.multi_turn.tool_config_path="$REPO/verl/gui_agent/mobile_use_tool.yaml"
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$REPO/verl/gui_agent/agent_loop.yaml"
  actor_rollout_ref.rollout.agent.default_agent_loop=gui_agent
  +gui_agent.recipe="$RECIPE"                     # the loop's values: the recipe file, the same the tool reads
  trainer.v1.trainer_mode=gui_agent                # verl's sync trainer + per-step gui_agent/<part>/mean metrics
  +ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=gui_agent_trainer.register
  trainer.device="$DEVICE"
  trainer.n_gpus_per_node="$N_GPUS"
  trainer.nnodes="$NNODES"
  trainer.total_epochs="$EPOCHS"
  trainer.project_name=gui_agent
  trainer.experiment_name="$EXPERIMENT_NAME"
  "trainer.logger=[$LOGGER]"
  trainer.critic_warmup=0
)

if [[ -n "$ROLLOUT_ENGINE" ]]; then args+=(actor_rollout_ref.rollout.name="$ROLLOUT_ENGINE"); fi

if [[ "${PRINT_ARGS:-0}" == 1 ]]; then
  printf '%s\n' "${args[@]}" "$@"
  exit 0
fi
# the platform (CPU where no GPU is found), the rollout backend and DRY_RUN: verl/main_ppo.sh, the one launcher
ROLLOUT_ENGINE="$ROLLOUT_ENGINE" PYTHON="$PYTHON" exec bash "$REPO/verl/main_ppo.sh" "${args[@]}" -- "$@"
