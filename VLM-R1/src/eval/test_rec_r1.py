"""Evaluate a GRPO checkpoint and its base model on GUI benchmarks with ``core`` and compare them (VLM-R1's
entry-point name).

    python VLM-R1/src/eval/test_rec_r1.py --model saves/grpo-trl --base-model Qwen/Qwen2.5-VL-3B-Instruct \\
        --bench screenspot=Data/GUI-R1/screenspot_test.parquet --out outputs/vlmr1-eval \\
        [--backend vllm --data-parallel-size 8]

Writes ``<out>/baseline/`` and ``<out>/r1/`` (predictions, ``eval/report.json``; a rerun or an earlier
``test_rec_baseline.py`` run resumes instead of predicting again) and ``<out>/compare.md``
(``gui-agent eval-compare`` baseline vs r1, difference in points); see rec_eval.py.
"""

from __future__ import annotations

import sys

from rec_eval import benches, compare, evaluate, parser


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="trained checkpoint folder (full model or LoRA adapter)")
    p.add_argument("--base-model", required=True, help="the model the checkpoint was trained from")
    args, infer_args = p.parse_known_args(argv)
    pairs = benches(p, args.bench)
    base = evaluate(args.base_model, "baseline", pairs, args, infer_args)
    trained = evaluate(args.model, "r1", pairs, args, infer_args)
    print(f"comparison: {compare(base, trained, args.out.resolve())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
