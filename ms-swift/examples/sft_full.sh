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
DATASET=${DATASET:?set DATASET to the exported swift .jsonl}
TEMPLATE=${TEMPLATE:-qwen2_5_vl}
OUTPUT_DIR=${OUTPUT_DIR:-saves/swift/full/gui-sft}
DEEPSPEED=${DEEPSPEED-configs/deepspeed/ds_z3_config.json}  # set it empty for no DeepSpeed (CPU)
SWIFT=${SWIFT:-swift}
export MAX_PIXELS=${MAX_PIXELS:-1258291}
export MIN_PIXELS=${MIN_PIXELS:-3136}

exec "$SWIFT" sft \
    --model "$MODEL" \
    --template "$TEMPLATE" \
    --dataset "$DATASET" \
    --split_dataset_ratio 0 \
    --tuner_type full \
    --freeze_vit true \
    --freeze_aligner true \
    --torch_dtype bfloat16 \
    --num_train_epochs 2 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 4 \
    --learning_rate 1e-5 \
    --lr_scheduler_type cosine \
    --warmup_ratio 0.1 \
    --gradient_checkpointing true \
    --max_length 4096 \
    ${DEEPSPEED:+--deepspeed "$DEEPSPEED"} \
    --logging_steps 10 \
    --save_steps 500 \
    --save_total_limit 2 \
    --save_only_model true \
    --dataset_num_proc 8 \
    --dataloader_num_workers 4 \
    --report_to none \
    --output_dir "$OUTPUT_DIR" \
    "$@"
