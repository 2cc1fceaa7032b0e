#!/usr/bin/env bash
# This project's additions, NOT GUI-R1 runs: the GUI-R1 3B recipe with another reward (core.rewards knobs).
#   bash experiments/guir1/examples/reward_variants.sh VARIANT [hydra overrides]
#   accuracy-only   r1gui (GUI-R1 mode) with format weight 0
#   gated-format    r1gui (GUI-R1 mode), format counts only when accuracy > 0 (against format hacking)
#   default         the corrected r1gui (tolerant parser, fixed edge cases; README "Rewards")
#   dense           gui_agent dense reward (type, proximity, text, format)
#   gaussian        GUI-G2's Gaussian point reward (arXiv 2507.15846) with r1gui's format (docs/rewards-gaussian.md)
set -euo pipefail
variant=${1:?usage: reward_variants.sh accuracy-only|gated-format|default|dense|gaussian [overrides]}
shift
case "$variant" in
    accuracy-only) kw='{reward:r1gui,mode:guir1,format_weight:0.0,accuracy_weight:1.0}' ;;
    gated-format)  kw='{reward:r1gui,mode:guir1,gate_format:true}' ;;
    default)       kw='{reward:r1gui,mode:default}' ;;
    dense)         kw='{reward:gui_agent}' ;;
    gaussian)      kw='{reward:gaussian,alpha:0.5}' ;;
    *) echo "reward_variants.sh: unknown variant '$variant' (accuracy-only, gated-format, default, dense, gaussian)" >&2; exit 2 ;;
esac
exec bash "$(dirname "${BASH_SOURCE[0]}")/qwen2_5_vl_3b_gui_grpo.sh" "reward.custom_reward_function.reward_kwargs=$kw" \
    "trainer.experiment_name=qwen2_5_vl_3b_guir1_reward_${variant//-/_}" "$@"
