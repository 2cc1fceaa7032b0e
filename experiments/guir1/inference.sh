#!/usr/bin/env bash
# Predictions for every GUI-R1 benchmark file found in DATA_DIR, one file per benchmark, named like GUI-R1's
# inference scripts name theirs: OUT_DIR/<model folder name>/<benchmark>_test.json (JSON lines). The model is
# loaded once for all benchmark files (one `gui-agent infer` call); re-running resumes: rows already in a
# prediction file are skipped.
#
#   MODEL_PATH=checkpoints/qwen2_5_vl_3b_guir1/global_step_90/actor/huggingface \
#   DATA_DIR=Data/GUI-R1-3K OUT_DIR=outputs/guir1/predictions bash experiments/guir1/inference.sh
#   BACKEND=hf MODEL_PATH=... bash experiments/guir1/inference.sh          # CPU / one GPU, no vLLM
#   BACKEND=openai MODEL_PATH=http://127.0.0.1:8000/v1 bash experiments/guir1/inference.sh   # a served model
#
# Variables:
#   MODEL_PATH   model folder / hub id, or the server URL for BACKEND=openai          (required)
#   DATA_DIR     folder with <benchmark>_test.parquet (GUI-R1 layout or unified)     (Data/GUI-R1-3K: make data-download)
#   OUT_DIR      predictions root                                                    (outputs/guir1/predictions)
#   BACKEND      vllm | hf | openai                                                  (vllm)
#   PRESET       model preset (core.presets, docs/presets.md): the authors' per-benchmark prompt, answer
#                parser, generation settings (GUI-R1: greedy, repetition penalty 1.05, 1024 new tokens) and
#                pixel bounds (processor default 12845056; ScreenSpot 2097152); empty = no preset   (guir1)
#   PROMPT       train: the training template (guir1-high; guir1-grounding on ScreenSpot) -- train and test
#                see the same prompt; guir1: GUI-R1's own per-benchmark test prompts (guir1-inference-*);
#                or any core.prompts template name for every benchmark     (the preset's; train without one)
#   MAX_PIXELS   smart_resize cap (GUI-R1 trains at 1258291)     (the preset's; 1258291 without one)
#   MIN_PIXELS   smart_resize floor                              (the preset's; 3136 without one)
#   DP           vllm data parallel engines (Ray actors, one per GPU group)          (number of GPUs / TP)
#   TP           vllm tensor parallel size                                           (1)
#   BATCH_SIZE   rows per generate call (per engine for vllm)                        (64 vllm, 4 hf, 16 openai)
#   BENCHMARKS   space-separated benchmark names                                     (GUI-R1's eight)
#   INFER_ARGS   extra `gui-agent infer` options, e.g. "--max-new-tokens 512 --repetition-penalty 1.05"
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
MODEL_PATH="${MODEL_PATH:-}"
DATA_DIR="${DATA_DIR:-$ROOT/Data/GUI-R1-3K}"
OUT_DIR="${OUT_DIR:-outputs/guir1/predictions}"
BACKEND="${BACKEND:-vllm}"
PRESET="${PRESET-guir1}"
PIXEL_ARGS=()
if [[ -n "$PRESET" ]]; then
    PROMPT="${PROMPT:-}"
    PRESET_ARGS=(--preset "$PRESET")
    if [[ -n "${MAX_PIXELS:-}" ]]; then PIXEL_ARGS+=(--max-pixels "$MAX_PIXELS"); fi
    if [[ -n "${MIN_PIXELS:-}" ]]; then PIXEL_ARGS+=(--min-pixels "$MIN_PIXELS"); fi
else
    PROMPT="${PROMPT:-train}"
    PRESET_ARGS=()
    PIXEL_ARGS=(--max-pixels "${MAX_PIXELS:-1258291}" --min-pixels "${MIN_PIXELS:-3136}")
fi
TP="${TP:-1}"
BENCHMARKS="${BENCHMARKS:-androidcontrol_high androidcontrol_low guiact_web guiodyssey omniact_desktop omniact_web screenspot screenspot_pro}"

[[ -n "$MODEL_PATH" ]] || fail 2 "usage: MODEL_PATH=... [DATA_DIR=...] [OUT_DIR=...] bash experiments/guir1/inference.sh"
require_rl_python
[[ -d "$DATA_DIR" ]] || fail 2 "error: DATA_DIR '$DATA_DIR' does not exist (make data-download writes Data/GUI-R1-3K)"
case "$BACKEND" in
    vllm) BATCH_SIZE="${BATCH_SIZE:-64}"
          if [[ -z "${DP:-}" ]]; then
              gpus=$(nvidia-smi -L 2>/dev/null | wc -l || true)
              DP=$(( gpus >= TP ? gpus / TP : 1 ))
          fi
          BACKEND_ARGS=(--tensor-parallel-size "$TP" --data-parallel-size "$DP") ;;
    hf) BATCH_SIZE="${BATCH_SIZE:-4}"; BACKEND_ARGS=() ;;
    openai) BATCH_SIZE="${BATCH_SIZE:-16}"; BACKEND_ARGS=() ;;
    *) fail 2 "error: BACKEND must be vllm, hf or openai, got '$BACKEND'" ;;
esac
if [[ "$BACKEND" == vllm ]] && ! nvidia-smi -L >/dev/null 2>&1; then
    fail 2 "error: BACKEND=vllm needs an NVIDIA GPU and nvidia-smi finds none here; on CPU: BACKEND=hf (make infer INFER_BACKEND=hf)"
fi
# A model folder, or a Hub id already in the Hugging Face cache (make download-model); a server URL for openai.
if [[ "$BACKEND" != openai ]]; then
    HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" "$PY" -m core model check --target infer --variable MODEL_PATH "$MODEL_PATH" || exit 2
fi

# GUI-R1's test prompt for each benchmark (PROMPT=guir1).
guir1_prompt() {
    case "$1" in
        androidcontrol_*) echo guir1-inference-androidcontrol ;;
        guiodyssey) echo guir1-inference-guiodyssey ;;
        guiact_web) echo guir1-inference-guiact-web ;;
        omniact_web) echo guir1-inference-omniact-web ;;
        omniact_desktop) echo guir1-inference-omniact-desktop ;;
        screenspot*) echo guir1-inference-screenspot ;;
        *) echo guir1-inference ;;
    esac
}

MODEL_NAME="$(basename "${MODEL_PATH%/}")"
PRED_DIR="$OUT_DIR/$MODEL_NAME"
mkdir -p "$PRED_DIR"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM="${TOKENIZERS_PARALLELISM:-false}"

pairs=()
for bench in $BENCHMARKS; do
    input="$DATA_DIR/${bench}_test.parquet"
    if [[ ! -f "$input" ]]; then
        echo "skip $bench: no $input"
        continue
    fi
    case "$PROMPT" in
        "") prompt="" ;;  # the preset's prompt for this benchmark
        train) case "$bench" in screenspot*) prompt=guir1-grounding ;; *) prompt=train ;; esac ;;
        guir1) prompt="$(guir1_prompt "$bench")" ;;
        *) prompt="$PROMPT" ;;
    esac
    echo "== $bench -> $PRED_DIR/${bench}_test.json (${prompt:+prompt $prompt}${PRESET:+ preset $PRESET})"
    pairs+=(--input "$input" --output "$PRED_DIR/${bench}_test.json")
    if [[ -n "$prompt" ]]; then pairs+=(--prompt "$prompt"); fi
done
[[ ${#pairs[@]} -gt 0 ]] || fail 1 "error: no <benchmark>_test.parquet in $DATA_DIR (benchmarks: $BENCHMARKS)"
"$PY" -m core infer --backend "$BACKEND" --model "$MODEL_PATH" "${pairs[@]}" "${PRESET_ARGS[@]}" \
    "${PIXEL_ARGS[@]}" --batch-size "$BATCH_SIZE" "${BACKEND_ARGS[@]}" ${INFER_ARGS:-}
echo "predictions: $PRED_DIR  (score them: make eval PRED_DIR=$PRED_DIR)"
