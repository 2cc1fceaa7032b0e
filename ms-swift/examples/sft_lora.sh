#!/usr/bin/env bash
# LoRA SFT with `swift sft` on the JSONL written by the swift data export (this project's choice: rank 8,
# alpha 16, lr 1e-4, batch 1 x 8, bf16, 3 epochs, gradient checkpointing, vision tower frozen).
# Run from the repository root, e.g.
#   MODEL=Qwen/Qwen2.5-VL-3B-Instruct DATASET=path/to/gui-r1-3k.jsonl bash ms-swift/examples/sft_lora.sh
# Arguments after the script name are appended to `swift sft` (later flags win), e.g. --num_train_epochs 1.
# Environment: MODEL, OUTPUT_DIR, and what sft_common.sh reads (DATASET, TEMPLATE, SWIFT, MAX_PIXELS / MIN_PIXELS).
set -euo pipefail

MODEL=${MODEL:-Qwen/Qwen2.5-VL-3B-Instruct}
OUTPUT_DIR=${OUTPUT_DIR:-saves/swift/lora/gui-sft}
source "$(dirname "${BASH_SOURCE[0]}")/sft_common.sh"

swift_sft \
    --tuner_type lora \
    --lora_rank 8 \
    --lora_alpha 16 \
    --lora_dropout 0.05 \
    --target_modules all-linear \
    --num_train_epochs 3 \
    --gradient_accumulation_steps 8 \
    --learning_rate 1e-4 \
    "$@"
