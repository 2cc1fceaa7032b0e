#!/usr/bin/env bash
# GUI-R1's examples/qwen2_5_vl_3b_gui_grpo.sh (public copy icey-zhang/GUI-R1 @ 0ec02be; the original repository
# is not in the stored index) on verl 0.9.1. Every value lives in recipes/qwen2_5_vl_3b/grpo/config_guir1_verl.yaml
# (each commented with its EasyR1 key); this script only names the model and the recipe. Run from anywhere:
#   MODEL_PATH=/path/to/Qwen2.5-VL-3B-Instruct bash experiments/guir1/examples/qwen2_5_vl_3b_gui_grpo.sh [hydra overrides]
# Needs 8 GPUs x 80 GB and vLLM (make setup-gpu); data from `make data`.
set -euo pipefail
MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-VL-3B-Instruct}  # replace it with your local file path
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
for a in "$@"; do  # make passes ARGS split at whitespace, each word as is (docs/reliability.md)
    [[ "$a" != *[[:space:]]* ]] || { echo "$(basename "$0"): override '$a' holds a space; write it without (hydra: {a:1,b:2})" >&2; exit 2; }
done
exec make grpo-verl MODEL="$MODEL_PATH" GRPO_RECIPE=recipes/qwen2_5_vl_3b/grpo/config_guir1_verl.yaml ARGS="$*"
