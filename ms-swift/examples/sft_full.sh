#!/usr/bin/env bash
# Full SFT with `swift sft` and DeepSpeed ZeRO-3 on the JSONL written by the swift data export (this project's
# choice: lr 1e-5, batch 1 x 4 per GPU, bf16, 2 epochs, gradient checkpointing, vision tower and aligner frozen).
# Needs GPUs (8 x 80 GB for 7B; DEEPSPEED=configs/deepspeed/ds_z3_offload_config.json with fewer).
# Run from the repository root, e.g.
#   NPROC_PER_NODE=8 MODEL=Qwen/Qwen2.5-VL-7B-Instruct DATASET=path/to/gui-r1-3k.jsonl bash ms-swift/examples/sft_full.sh
# Arguments after the script name are appended to `swift sft` (later flags win).
# Environment: as sft_lora.sh, plus DEEPSPEED (config path; empty: none) and NPROC_PER_NODE (read by swift itself).
set -euo pipefail

MODEL=${MODEL:-Qwen/Qwen2.5-VL-7B-Instruct}
OUTPUT_DIR=${OUTPUT_DIR:-saves/swift/full/gui-sft}
DEEPSPEED=${DEEPSPEED-configs/deepspeed/ds_z3_config.json}  # set it empty for no DeepSpeed (CPU)
source "$(dirname "${BASH_SOURCE[0]}")/sft_common.sh"

swift_sft \
    --tuner_type full \
    --num_train_epochs 2 \
    --gradient_accumulation_steps 4 \
    --learning_rate 1e-5 \
    ${DEEPSPEED:+--deepspeed "$DEEPSPEED"} \
    --save_only_model true \
    "$@"
