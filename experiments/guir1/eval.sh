#!/usr/bin/env bash
# Score a folder of prediction files named like GUI-R1's outputs (<benchmark>_test.json, e.g.
# screenspot_pro_test.json, androidcontrol_high_test.json; chunks <benchmark>_test_<a>_<b>_pred.json) in both
# metric modes and write the combined report. With --benchmark NAME, files of any other name (`gui-agent infer
# --output pred.jsonl`) are scored as benchmark NAME.
#
#   bash experiments/guir1/eval.sh PRED_DIR [OUT_DIR] [--benchmark NAME]
#   PRED_DIR=outputs/guir1/predictions OUT_DIR=outputs/guir1/eval MODES="strict guir1" bash experiments/guir1/eval.sh
#
# Writes OUT_DIR/<mode>/{report.json,report.md,plots/,gallery/} and OUT_DIR/report.md (all modes).
# Uses the rl environment itself (.venvs/rl, created by `make setup`); nothing needs activating.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
positional=()
BENCHMARK_ARGS=()
while (( $# )); do
    case "$1" in
        --benchmark) [[ $# -ge 2 && -n "$2" ]] || fail 2 "error: --benchmark needs a benchmark name"
                     BENCHMARK_ARGS=(--benchmark "$2"); shift 2 ;;
        --benchmark=*) BENCHMARK_ARGS=(--benchmark "${1#*=}"); shift ;;
        *) positional+=("$1"); shift ;;
    esac
done
set -- ${positional[@]+"${positional[@]}"}
PRED_DIR="${1:-${PRED_DIR:-}}"
OUT_DIR="${2:-${OUT_DIR:-outputs/guir1/eval}}"
MODES="${MODES:-strict guir1}"

[[ -n "$PRED_DIR" ]] || fail 2 "usage: bash experiments/guir1/eval.sh PRED_DIR [OUT_DIR] [--benchmark NAME]"
[[ ! -f "$PRED_DIR" ]] || fail 2 "error: '$PRED_DIR' is a file: pass its folder, and --benchmark NAME unless it is named <benchmark>_test.json"
[[ -d "$PRED_DIR" ]] || fail 2 "error: predictions folder '$PRED_DIR' does not exist"
require_rl_python
PRED_DIR="$(cd "$PRED_DIR" && pwd)"
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"

cd "$ROOT"
combined="$OUT_DIR/report.md.tmp"
: > "$combined"
for mode in $MODES; do
    "$PY" -m core eval-report --pred-dir "$PRED_DIR" --out "$OUT_DIR/$mode" --mode "$mode" --overwrite \
        --name "$(basename "$PRED_DIR")" ${BENCHMARK_ARGS[@]+"${BENCHMARK_ARGS[@]}"} ${EVAL_ARGS:-}
    cat "$OUT_DIR/$mode/report.md" >> "$combined"
    echo >> "$combined"
done
mv "$combined" "$OUT_DIR/report.md"
echo "combined report: $OUT_DIR/report.md"
