#!/usr/bin/env bash
# verl GUI-agent recipe, Ascend NPUs (vllm-ascend): Qwen3-VL-8B, GRPO, train batch 256, rollout.n 5, vLLM TP 4,
# eager mode (no CUDA graphs on NPU).
#   DATA_DIR=$HOME/data/gui_agent MODEL_PATH=Qwen/Qwen3-VL-8B-Instruct bash verl/examples/run_qwen3_vl_8b_gui_agent_npu.sh
# Knobs (env) as in verl/gui_agent/run_gui_agent.sh; extra arguments are hydra overrides.
set -euo pipefail
export DEVICE=npu
export TRAIN_BATCH_SIZE=${TRAIN_BATCH_SIZE:-256} TP=${TP:-4} ENFORCE_EAGER=${ENFORCE_EAGER:-True}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../gui_agent/run_gui_agent.sh" "$@"
