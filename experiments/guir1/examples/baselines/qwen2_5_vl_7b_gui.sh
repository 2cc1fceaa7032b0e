#!/usr/bin/env bash
# GUI-R1's examples/baselines/qwen2_5_vl_7b_gui.sh (public copy icey-zhang/GUI-R1 @ 0ec02be): the same run as
# ../qwen2_5_vl_7b_gui_grpo.sh under another experiment name (qwen2_5_vl_7b_guir1) and with vLLM tensor parallel 1 (the 7B GRPO
# script keeps config.yaml's 2). Reproduced as such.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../qwen2_5_vl_7b_gui_grpo.sh" trainer.experiment_name=qwen2_5_vl_7b_guir1 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=1 "$@"
