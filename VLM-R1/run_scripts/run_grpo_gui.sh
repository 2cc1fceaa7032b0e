#!/usr/bin/env bash
# VLM-R1-style GRPO launcher (the seed layout's VLM-R1/run_scripts/run_grpo_gui.sh) over VLM-R1/grpo.py (trl
# GRPOTrainer): torchrun over every visible GPU, DeepSpeed from configs/deepspeed/, full or LoRA. Every training
# value comes from the RECIPE file (a trl --config YAML with sources); edit the three paths below or set them:
#   model_path=/models/Qwen2.5-VL-3B-Instruct data_paths=Data/vlmr1/gui-r1-3k.hf bash VLM-R1/run_scripts/run_grpo_gui.sh
# Arguments after the script name are GRPOConfig flags and win over the recipe (e.g. --max_steps 100).
# Environment: RECIPE (recipes/qwen2_5_vl_3b/grpo/config_{guir1_trl,guir1_trl_1gpu,vlmr1_trl}.yaml), TUNER
# (full | lora: r 64, alpha 128, dropout 0.05 as VLM-R1's run_grpo_rec_lora.sh), DEEPSPEED (a configs/deepspeed/
# file replacing the recipe's), NPROC_PER_NODE (default: the number of GPUs), EXP_NAME, OUTPUT_DIR, PYTHON.
set -euo pipefail
model_path=${model_path:-Qwen/Qwen2.5-VL-3B-Instruct}
data_paths=${data_paths:-Data/vlmr1/gui-r1-3k.hf}  # vlmr1 exports (gui-agent data convert --to vlmr1), ':'-separated
image_folders=${image_folders:-}                    # VLM-R1's JSONL layout only; the .hf exports hold their images

if [ -n "$image_folders" ]; then
    echo "run_grpo_gui.sh: image_folders is for VLM-R1's JSONL + image folder layout; this trainer reads the .hf" \
         "exports, which hold their images: convert first (gui-agent data convert --to vlmr1 --images DIR)" >&2
    exit 2
fi
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
RECIPE=${RECIPE:-recipes/qwen2_5_vl_3b/grpo/config_guir1_trl.yaml}
TUNER=${TUNER:-full}
DEEPSPEED=${DEEPSPEED:-}
NPROC_PER_NODE=${NPROC_PER_NODE:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)}
EXP_NAME=${EXP_NAME:-$(basename "$RECIPE" .yaml)}
OUTPUT_DIR=${OUTPUT_DIR:-saves/vlmr1/$EXP_NAME}
PYTHON=${PYTHON:-.venvs/rl/bin/python}

args=(--config "$RECIPE" --model_name_or_path "$model_path" --dataset "$data_paths" --output_dir "$OUTPUT_DIR"
      --run_name "$EXP_NAME")
case "$TUNER" in
    full) ;;
    lora) args+=(--lora_r 64 --lora_alpha 128 --lora_dropout 0.05) ;;
    *) echo "run_grpo_gui.sh: TUNER must be full or lora, got '$TUNER'" >&2; exit 2 ;;
esac
if [ -n "$DEEPSPEED" ]; then args+=(--deepspeed "$DEEPSPEED"); fi

if [ "${NPROC_PER_NODE:-0}" -gt 0 ]; then
    exec "$PYTHON" -m torch.distributed.run --nproc_per_node "$NPROC_PER_NODE" VLM-R1/grpo.py "${args[@]}" "$@"
fi
echo "run_grpo_gui.sh: no CUDA GPU found: CPU-safe settings (fp32, dataloader workers 0, no vLLM); flags override them"
exec "$PYTHON" VLM-R1/grpo.py "${args[@]}" --bf16 false --use_cpu true --use_vllm false --dataloader_num_workers 0 "$@"
