#!/usr/bin/env bash
# verl GUI-agent recipe, NVIDIA GPUs: Qwen3-VL-8B, GRPO, train batch 512, rollout.n 5, vLLM TP 2, CUDA graphs.
#   DATA_DIR=$HOME/data/gui_agent MODEL_PATH=Qwen/Qwen3-VL-8B-Instruct bash verl/examples/run_qwen3_vl_8b_gui_agent_gpu.sh
# Knobs (env): TRAIN_BATCH_SIZE ROLLOUT_N TP MICRO_BATCH PARAM_OFFLOAD CHUNKED_PREFILL ENFORCE_EAGER ... and RECIPE (the
# agent recipe file: grid, turns, screenshots, prompt; verl/gui_agent/run_gui_agent.sh); extra arguments are hydra
# overrides.
set -euo pipefail
export DEVICE=cuda
export TRAIN_BATCH_SIZE=${TRAIN_BATCH_SIZE:-512} TP=${TP:-2} ENFORCE_EAGER=${ENFORCE_EAGER:-False}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../gui_agent/run_gui_agent.sh" "$@"
