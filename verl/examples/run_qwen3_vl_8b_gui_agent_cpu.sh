#!/usr/bin/env bash
# verl GUI-agent recipe on the CPU (no GPU needed; slow: for a tiny model, a smoke run or a test): the same recipe
# with one CPU training worker, the transformers rollout (ROLLOUT_ENGINE=hf), 2 prompts x 2 episodes a step and
# 2,048 response tokens; verl/main_ppo.sh adds the CPU platform's settings (fp32, gloo, FSDP2) and prints them.
#   MODEL_PATH=$PWD/outputs/tiny-qwen3-vl DATA_DIR=Data/gui_agent bash verl/examples/run_qwen3_vl_8b_gui_agent_cpu.sh \
#       trainer.total_training_steps=2
# Knobs (env) as in run_gui_agent.sh; extra arguments are hydra overrides (they win).
set -euo pipefail
export DEVICE=cpu VERL_PLATFORM=cpu N_GPUS=1 TP=1
export TRAIN_BATCH_SIZE=${TRAIN_BATCH_SIZE:-2} PPO_MINI_BATCH_SIZE=${PPO_MINI_BATCH_SIZE:-2} ROLLOUT_N=${ROLLOUT_N:-2}
export MICRO_BATCH=${MICRO_BATCH:-2} MAX_RESPONSE_LENGTH=${MAX_RESPONSE_LENGTH:-2048} ENFORCE_EAGER=True
export CPU_RESPONSE_LENGTH=$MAX_RESPONSE_LENGTH
export CHUNKED_PREFILL=False EPOCHS=${EPOCHS:-1}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../gui_agent/run_gui_agent.sh" "$@"
