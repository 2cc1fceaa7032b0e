#!/usr/bin/env bash
# R1-V-GUI-agent GRPO (recipes/aguvis_7b_720p/grpo/config_r1v_trl.yaml) with VLM-R1/grpo.py; THINK_FORMAT=0 drops
# the format reward (R1-V's finding: GRPO without the think-format reward still helps).
#
#   bash experiments/r1v/train.sh                                             # Aguvis-7B-720P, accuracy + format
#   MODEL=Qwen/Qwen2.5-VL-3B-Instruct THINK_FORMAT=0 bash experiments/r1v/train.sh
#
# Variables: RECIPE, MODEL and DATA (default: the recipe's), OUTPUT_DIR, RUN_NAME, NPROC (GPUs; R1-V: 8, torchrun
# when > 1), DS_CONFIG (default: the recipe's ZeRO-1; empty = no DeepSpeed), ATTN (flash_attention_2 as R1-V;
# empty = the model's default), PYTHON. Extra arguments go to VLM-R1/grpo.py (any GRPOConfig flag).
set -euo pipefail
cd "$(dirname "$0")/../.."

RECIPE=${RECIPE:-recipes/aguvis_7b_720p/grpo/config_r1v_trl.yaml}
THINK_FORMAT=${THINK_FORMAT:-1}
RUN_NAME=${RUN_NAME:-gui_agent_$(basename "${MODEL:-Aguvis-7B-720P}")_2000_$([ "$THINK_FORMAT" = 0 ] && echo accuracy || echo think)}
OUTPUT_DIR=${OUTPUT_DIR:-saves/r1v/$RUN_NAME}
NPROC=${NPROC:-8}
ATTN=${ATTN-flash_attention_2}
PYTHON=${PYTHON:-.venvs/rl/bin/python}

rewards=(r1v_accuracy r1v_format)
[ "$THINK_FORMAT" = 0 ] && rewards=(r1v_accuracy)
launcher=("$PYTHON")
[ "$NPROC" -gt 1 ] && launcher=("$PYTHON" -m torch.distributed.run --nproc_per_node "$NPROC" --nnodes 1
                                 --node_rank 0 --master_addr 127.0.0.1 --master_port "${MASTER_PORT:-12346}")
args=(--config "$RECIPE" --reward_funcs "${rewards[@]}" --output_dir "$OUTPUT_DIR" --run_name "$RUN_NAME")
[ -n "${MODEL:-}" ] && args+=(--model_name_or_path "$MODEL")
[ -n "${DATA:-}" ] && args+=(--dataset "$DATA")
[ -n "${DS_CONFIG+set}" ] && args+=(--deepspeed "$DS_CONFIG")
[ -n "$ATTN" ] && args+=(--model_init_kwargs "{\"attn_implementation\": \"$ATTN\"}")

mkdir -p "$OUTPUT_DIR"
"${launcher[@]}" VLM-R1/grpo.py "${args[@]}" "$@" 2>&1 | tee "$OUTPUT_DIR/training_log.txt"
