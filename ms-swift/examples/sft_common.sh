# Sourced by sft_lora.sh and sft_full.sh (not run on its own): the environment both read and `swift_sft`, which
# runs `swift sft` with the flags both recipes share, then the caller's recipe flags, then the user's (later
# flags win). The caller sets MODEL and OUTPUT_DIR defaults before sourcing.
# Environment: DATASET (exported .jsonl), TEMPLATE (qwen2_5_vl | qwen3_vl), SWIFT (binary), MAX_PIXELS / MIN_PIXELS
# (must equal the pixel bounds the data was exported with: core.geometry.GUIR1_TRAIN_MAX_PIXELS /
# GUIR1_TRAIN_MIN_PIXELS).
DATASET=${DATASET:?set DATASET to the exported swift .jsonl}
TEMPLATE=${TEMPLATE:-qwen2_5_vl}
SWIFT=${SWIFT:-swift}
export MAX_PIXELS=${MAX_PIXELS:-1258291}
export MIN_PIXELS=${MIN_PIXELS:-3136}

swift_sft() {
    exec "$SWIFT" sft \
        --model "$MODEL" \
        --template "$TEMPLATE" \
        --dataset "$DATASET" \
        --split_dataset_ratio 0 \
        --freeze_vit true \
        --freeze_aligner true \
        --torch_dtype bfloat16 \
        --per_device_train_batch_size 1 \
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
}
