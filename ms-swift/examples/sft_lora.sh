#!/usr/bin/env bash
# LoRA SFT with `swift sft` on the JSONL written by the swift data export (this project's choice: rank 8,
# alpha 16, lr 1e-4, batch 1 x 8, bf16, 3 epochs, gradient checkpointing, vision tower frozen).
# Run from the repository root, e.g.
#   MODEL=Qwen/Qwen2.5-VL-3B-Instruct DATASET=path/to/gui-r1-3k.jsonl bash ms-swift/examples/sft_lora.sh
# Arguments after the script name are appended to `swift sft` (later flags win), e.g. --num_train_epochs 1.
# Environment: MODEL, DATASET (exported .jsonl), TEMPLATE (qwen2_5_vl | qwen3_vl), OUTPUT_DIR, SWIFT (binary),
# MAX_PIXELS / MIN_PIXELS (must equal the pixel bounds the data was exported with:
# core.geometry.GUIR1_TRAIN_MAX_PIXELS / GUIR1_TRAIN_MIN_PIXELS).
set -euo pipefail

MODEL=${MODEL:-Qwen/Qwen2.5-VL-3B-Instruct}
DATASET=${DATASET:?set DATASET to the exported swift .jsonl}
TEMPLATE=${TEMPLATE:-qwen2_5_vl}
OUTPUT_DIR=${OUTPUT_DIR:-saves/swift/lora/gui-sft}
SWIFT=${SWIFT:-swift}
export MAX_PIXELS=${MAX_PIXELS:-1258291}
export MIN_PIXELS=${MIN_PIXELS:-3136}

exec "$SWIFT" sft \
    --model "$MODEL" \
    --template "$TEMPLATE" \
    --dataset "$DATASET" \
    --split_dataset_ratio 0 \
    --tuner_type lora \
    --lora_rank 8 \
    --lora_alpha 16 \
    --lora_dropout 0.05 \
    --target_modules all-linear \
    --freeze_vit true \
    --freeze_aligner true \
    --torch_dtype bfloat16 \
    --num_train_epochs 3 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --learning_rate 1e-4 \
    --lr_scheduler_type cosine \
    --warmup_ratio 0.1 \
    --gradient_checkpointing true \
    --max_length 4096 \
    --logging_steps 10 \
    --save_steps 500 \
    --save_total_limit 2 \
    --dataset_num_proc 8 \
    --dataloader_num_workers 4 \
    --report_to none \
    --output_dir "$OUTPUT_DIR" \
    "$@"
