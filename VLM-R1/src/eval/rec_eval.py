"""Shared body of VLM-R1's evaluation entry points (``test_rec_r1.py``, ``test_rec_baseline.py``) on ``core``.

One run = ``gui-agent infer`` of a model on every ``--bench NAME=FILE`` (predictions
``<out>/<run>/predictions/<NAME>_test.json``, named as GUI-R1's outputs so ``eval-report`` knows the benchmark;
resumed when rerun), then ``gui-agent eval-report`` (``<out>/<run>/eval/report.json`` + ``report.md``). Arguments
this parser does not know go to ``gui-agent infer`` unchanged: ``--backend vllm --data-parallel-size 8`` runs one
vLLM engine per GPU as Ray actors (data parallel), ``--prompt``, ``--max-pixels``, ``--max-new-tokens`` ...
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.append(str(REPO))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require()


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description, epilog="Other arguments go to `gui-agent infer`.")
    p.add_argument("--bench", action="append", required=True, metavar="NAME=FILE",
                   help="benchmark name (gui-agent eval's, e.g. screenspot, androidcontrol_high) = its file "
                        "(GUI-R1 parquet or unified parquet); repeatable")
    p.add_argument("--out", type=Path, required=True, help="output folder (one sub-folder per run)")
    p.add_argument("--backend", default="hf", help="gui-agent infer --backend: hf, vllm, openai [default: hf]")
    p.add_argument("--mode", default="strict", help="gui-agent eval --mode: strict or guir1 [default: strict]")
    return p


def benches(p: argparse.ArgumentParser, specs: list[str]) -> list[tuple[str, Path]]:
    """``NAME=FILE`` pairs, checked: known benchmark names, existing files."""
    from core.eval.registry import BENCHMARKS

    pairs = []
    for spec in specs:
        name, sep, file = spec.partition("=")
        if not sep or not name or not file:
            p.error(f"--bench {spec!r}: expected NAME=FILE")
        if name not in BENCHMARKS:
            p.error(f"--bench {spec!r}: unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
        if not Path(file).is_file():
            p.error(f"--bench {spec!r}: {file} does not exist")
        pairs.append((name, Path(file)))
    return pairs


def gui_agent(*args: str) -> None:
    """Run ``gui-agent ARGS`` (this interpreter's ``python -m core``); exits with its code when it fails."""
    code = subprocess.call([sys.executable, "-m", "core", *args], cwd=REPO)
    if code:
        sys.exit(code)


def evaluate(model: str, run: str, pairs: list[tuple[str, Path]], args: argparse.Namespace,
             infer_args: list[str]) -> Path:
    """Predict with ``model`` on every benchmark and score them; returns ``<out>/<run>/eval/report.json``."""
    root = Path(args.out).resolve() / run
    for name, file in pairs:
        gui_agent("infer", "--backend", args.backend, "--model", model, "--input", str(file.resolve()),
                  "--output", str(root / "predictions" / f"{name}_test.json"), *infer_args)
    gui_agent("eval-report", "--pred-dir", str(root / "predictions"), "--out", str(root / "eval"),
              "--mode", args.mode, "--name", run, "--overwrite")  # the report of the resumed predictions
    return root / "eval" / "report.json"


def compare(base: Path, trained: Path, out: Path) -> Path:
    """``gui-agent eval-compare`` of the two reports, also written as ``<out>/compare.md``."""
    gui_agent("eval-compare", str(base), str(trained), "--markdown", str(out / "compare.md"), "--overwrite")
    return out / "compare.md"
