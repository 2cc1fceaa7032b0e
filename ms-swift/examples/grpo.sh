#!/usr/bin/env bash
# GRPO with `swift rlhf RECIPE.yaml` on the JSONL written by the swift data export, scored by core.rewards through
# the ORM plugin ms-swift/plugin/gui_rewards.py. Every training value lives in the RECIPE file (swift reads a YAML
# of its flags and its ENV block itself), each value with its source:
#   recipes/qwen2_5_vl_3b/grpo/config_guir1_swift.yaml   GUI-R1's values (8 GPUs, vLLM)   [default]
#   recipes/qwen2_5_vl_3b/grpo/config_vlmr1_swift.yaml   VLM-R1's REC defaults (8 GPUs, ZeRO-3)
# Swift drops the export's final (gold) assistant turn and generates it; the ORMs read the row's ground_truth /
# extra_info / solution columns. Run from anywhere, e.g.
#   NPROC_PER_NODE=8 MODEL=Qwen/Qwen2.5-VL-3B-Instruct DATASET=Data/swift/gui-r1-3k.jsonl bash ms-swift/examples/grpo.sh
# Arguments after the script name are appended to `swift rlhf` (later flags win), e.g. --max_steps 100.
# Environment: RECIPE, MODEL, DATASET (exported .jsonl), TEMPLATE (qwen2_5_vl | qwen3_vl), OUTPUT_DIR, SWIFT (binary).
# The export must use the recipe's pixel bounds (python -m core.recipes export-flags RECIPE).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RECIPE=${RECIPE:-$ROOT/recipes/qwen2_5_vl_3b/grpo/config_guir1_swift.yaml}
MODEL=${MODEL:-Qwen/Qwen2.5-VL-3B-Instruct}
DATASET=${DATASET:?set DATASET to the exported swift .jsonl}
TEMPLATE=${TEMPLATE:-qwen2_5_vl}
OUTPUT_DIR=${OUTPUT_DIR:-saves/swift/grpo/$(basename "$RECIPE" .yaml)}
SWIFT=${SWIFT:-swift}

exec "$SWIFT" rlhf "$RECIPE" \
    --model "$MODEL" \
    --template "$TEMPLATE" \
    --dataset "$DATASET" \
    --external_plugins "$ROOT/ms-swift/plugin/gui_rewards.py" \
    --output_dir "$OUTPUT_DIR" \
    "$@"
