#!/usr/bin/env bash
# Download GUI-R1-3K (Hugging Face dataset ritzzai/GUI-R1, the dataset GUI-R1's README links) into
# Data/GUI-R1-3K with `hf download`: train.parquet, test.parquet and the eight <benchmark>_test.parquet files.
# `make data-download` runs it with offline mode turned off for the download alone.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO_ID="ritzzai/GUI-R1"
FILES=(train.parquet test.parquet androidcontrol_high_test.parquet androidcontrol_low_test.parquet
       guiact_web_test.parquet guiodyssey_test.parquet omniact_web_test.parquet omniact_desktop_test.parquet
       screenspot_pro_test.parquet screenspot_test.parquet)

usage() {
  cat <<USAGE
Usage: bash Data/hfd.sh [--local-dir DIR] [--dry-run] [hf download options...]

  Downloads the Hugging Face dataset $REPO_ID (GUI-R1-3K: ${FILES[*]})
  --local-dir  where to put the files (default: Data/GUI-R1-3K, the folder make data and make infer read)
  --dry-run    print the download command and exit
  other options go to \`hf download\`, e.g. --revision main

Tool: \$HF_CLI, else hf / huggingface-cli from .venvs/rl or .venvs/base (make setup), else from PATH.
Environment: HF_ENDPOINT (a mirror), HF_TOKEN; HF_HUB_OFFLINE must be unset or 0 (make data-download does that).
Then: make data
USAGE
}

local_dir="$ROOT/Data/GUI-R1-3K"
dry_run=0
extra=()
while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --local-dir) local_dir="${2:?--local-dir needs a folder}"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    *) extra+=("$1"); shift ;;
  esac
done

find_tool() {
  local c
  if [[ -n "${HF_CLI:-}" ]]; then echo "$HF_CLI"; return; fi
  for c in "$ROOT/.venvs/rl/bin/hf" "$ROOT/.venvs/base/bin/hf" "$ROOT/.venvs/rl/bin/huggingface-cli"; do
    if [[ -x "$c" ]]; then echo "$c"; return; fi
  done
  command -v hf || command -v huggingface-cli || true
}
tool="$(find_tool)"
if [[ -z "$tool" ]]; then
  echo "error: no 'hf' command in .venvs/rl, .venvs/base or on PATH: run 'make setup' (or pip install -U huggingface_hub)" >&2
  exit 1
fi
cmd=("$tool" download "$REPO_ID" "${FILES[@]}" --repo-type dataset --local-dir "$local_dir" "${extra[@]}")
if ((dry_run)); then
  echo "HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-0} ${cmd[*]}"
  exit 0
fi
case "${HF_HUB_OFFLINE:-0}" in
  0|false|False|"") ;;
  *) echo "error: HF_HUB_OFFLINE=$HF_HUB_OFFLINE forbids downloading; use 'make data-download' or HF_HUB_OFFLINE=0 bash Data/hfd.sh" >&2
     exit 2 ;;
esac
echo "downloading dataset $REPO_ID into $local_dir" >&2
if ! "${cmd[@]}"; then
  echo "error: downloading $REPO_ID from ${HF_ENDPOINT:-https://huggingface.co} failed (see above): this needs network" \
       "access to the Hub (or HF_ENDPOINT=<mirror>); alternatively copy the parquet files into $local_dir by hand" >&2
  exit 1
fi
echo "done: $local_dir. Next: make data" >&2
