"""Evaluate a base model (the baseline of a GRPO run) on GUI benchmarks with ``core`` (VLM-R1's entry-point name).

    python VLM-R1/src/eval/test_rec_baseline.py --model Qwen/Qwen2.5-VL-3B-Instruct \\
        --bench screenspot=Data/GUI-R1/screenspot_test.parquet --out outputs/vlmr1-eval \\
        [--backend vllm --data-parallel-size 8]

Writes ``<out>/baseline/`` (predictions, ``eval/report.json``); ``test_rec_r1.py`` reuses it (see rec_eval.py).
"""

from __future__ import annotations

import sys

from rec_eval import benches, evaluate, parser


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="base model folder or hub id")
    args, infer_args = p.parse_known_args(argv)
    report = evaluate(args.model, "baseline", benches(p, args.bench), args, infer_args)
    print(f"baseline report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
