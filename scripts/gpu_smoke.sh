#!/usr/bin/env bash
# GPU smoke run of the CUDA paths, for a machine with one NVIDIA GPU and a Python that has torch + transformers:
# the tiny random Qwen2.5-VL through `gui-agent infer --backend hf` (bf16 on CUDA) on real screenshots, a simulated-
# phone rollout through the HF backend, and 2 trl GRPO steps (VLM-R1/grpo.py, GUI-R1 recipe) on CUDA.
#   bash scripts/gpu_smoke.sh DATA_DIR OUT_DIR      (DATA_DIR holds aitz/ and screenspot/ as in ../shared/data)
set -euo pipefail
data=${1:?usage: scripts/gpu_smoke.sh DATA_DIR OUT_DIR}
out=${2:?usage: scripts/gpu_smoke.sh DATA_DIR OUT_DIR}
py=${PYTHON:-python3}
ga=("$py" -m core)
mkdir -p "$out"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
"$py" - <<'PY'
import torch, transformers
print("torch", torch.__version__, "transformers", transformers.__version__, "cuda", torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")
PY
t() { local s=$SECONDS; "$@"; echo "[time] $(( SECONDS - s )) s: ${*:0:4}"; }
t "${ga[@]}" tiny-model --output "$out/tiny" --overwrite
t "${ga[@]}" data convert --from aitw --to unified --input "$data/aitz" --output "$out/data"
t "${ga[@]}" data convert --from screenspot --to unified --skip-missing \
  --input "$data/screenspot/screenspot_v1_annotations.jsonl" --images "$data/screenspot/images" --output "$out/data"
t "${ga[@]}" infer --backend hf --model "$out/tiny" --max-new-tokens 64 \
  --input "$out/data/screenspot_v1_annotations.parquet" --output "$out/pred/screenspot_test.json"
t "${ga[@]}" eval --predictions "$out/pred/screenspot_test.json" --benchmark screenspot --json "$out/eval_screenspot.json" || true
t "${ga[@]}" rollout --backend hf --model "$out/tiny" --env sim-phone --tasks test --episodes 8 --max-steps 4 \
  --output "$out/rollout" --json "$out/rollout_summary.json"
t "${ga[@]}" data convert --from unified --to vlmr1 --input "$out/data/aitz.parquet" --output "$out/vlmr1" \
  --recipe recipes/qwen2_5_vl_3b/grpo/config_guir1_trl.yaml
t "$py" VLM-R1/grpo.py --config recipes/qwen2_5_vl_3b/grpo/config_guir1_trl.yaml --model_name_or_path "$out/tiny" \
  --dataset "$(ls -d "$out"/vlmr1/*.hf | head -1)" --output_dir "$out/grpo" --save_strategy steps --save_steps 2 --use_vllm false --max_steps 2 \
  --per_device_train_batch_size 5 --gradient_accumulation_steps 1 --steps_per_generation 1 \
  --max_completion_length 64 --report_to none \
  --logging_steps 1 --gradient_checkpointing false
"$py" - "$out" <<'PY'
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).rglob("trainer_state.json")):
    print(p, json.dumps(json.loads(p.read_text())["log_history"], indent=None)[:3000])
PY
