#!/usr/bin/env bash
# GUI-R1's examples/baselines/qwen2_5_vl_3b_gui.sh (public copy icey-zhang/GUI-R1 @ 0ec02be): the same run as
# ../qwen2_5_vl_3b_gui_grpo.sh under another experiment name (qwen2_5_vl_3b_guir1). Reproduced as such.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../qwen2_5_vl_3b_gui_grpo.sh" trainer.experiment_name=qwen2_5_vl_3b_guir1 "$@"
