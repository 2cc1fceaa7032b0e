"""`make demo-agent-seeds`: the agent demo once per training seed, and the table of what each measured.

    .venvs/rl/bin/python experiments/demo_agent/seeds.py [--seeds 0 1 2] [--out outputs/demo-agent-seeds] [run.py options]

Each seed is a whole ``make demo-agent`` (the model's random weights, SFT's and RL's seeds; the tasks are the same)
into ``<out>/seed<k>/``, reused stage by stage when it is finished. Writes ``<out>/seeds.json`` (one report.json per
seed, in order) and ``<out>/seeds.md`` (each seed's held-out success and gain of every run, and the mean over
seeds), atomically, and prints the table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from core.io import atomic_write_json, atomic_write_text  # noqa: E402

RUNS = ("start", "grpo", "grpo_shuffled", "grpo_plain", "more_sft")


def _cell(entry: dict[str, Any]) -> str:
    gain = entry.get("gain")
    if gain is None:
        return f"{100 * entry['success']:.1f}%"
    lo, hi = gain["ci95"]
    return f"{100 * entry['success']:.1f}% ({100 * gain['mean']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}])"


def table(reports: list[dict[str, Any]]) -> str:
    """Markdown: one row per seed and the mean over seeds; cells: held-out success (gain over the start
    [paired 95% interval], points)."""
    lines = ["| seed | " + " | ".join(RUNS) + " | wall |", "|---|" + "---|" * (len(RUNS) + 1)]
    for rep in reports:
        lines.append(f"| {rep['seed']} | " + " | ".join(_cell(rep["runs"][r]) for r in RUNS)
                     + f" | {rep['wall_s'] / 60:.0f} min |")
    if reports:
        means = []
        for r in RUNS:
            success = statistics.mean(rep["runs"][r]["success"] for rep in reports)
            gains = [rep["runs"][r]["gain"]["mean"] for rep in reports if "gain" in rep["runs"][r]]
            means.append(f"{100 * success:.1f}%" + (f" ({100 * statistics.mean(gains):+.1f})" if gains else ""))
        lines.append("| mean | " + " | ".join(means) + " | |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "demo-agent-seeds")
    args, rest = ap.parse_known_args(argv)
    bad = [s for s in args.seeds if not 0 <= s < 2 ** 32]
    if bad:
        ap.error(f"--seeds: each seed must be in [0, 2**32), got {bad[0]}")
    reports = []
    for seed in args.seeds:
        folder = args.out / f"seed{seed}"
        code = subprocess.call([sys.executable, str(HERE / "run.py"), "--out", str(folder), "--seed", str(seed),
                                *rest])
        if code:
            print(f"demo-agent-seeds: seed {seed} failed (exit {code}); see {folder}/logs", file=sys.stderr)
            return code
        reports.append(json.loads((folder / "report.json").read_text()))
    atomic_write_json(args.out / "seeds.json", reports)
    md = table(reports)
    atomic_write_text(args.out / "seeds.md", "# make demo-agent-seeds\n\nHeld-out success (gain over the start "
                      "[paired 95% interval], points) per training seed.\n\n" + md)
    print(md)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
