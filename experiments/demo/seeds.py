"""`make demo-seeds`: the learning demo's spread over training seeds.

    .venvs/rl/bin/python experiments/demo/seeds.py [--seeds 0 1 2] [--out outputs/demo-seeds] [--reuse-seed0 outputs/demo]

One interval over test screens hides the run-to-run spread (CPU float kernels differ between processors and long
SFT at a large learning rate amplifies that), so the demo runs once per training seed (the tiny model's random
weights, SFT's and GRPO's seeds; the data and the test screens are the same) into ``<out>/seed<k>/`` and tabulates
what each run measured: the SFT model on the curriculum test screens, the sharpening start, and each sharpening run's
paired gain on its families and on the whole curriculum. Each seed builds only the stages the table reads
(:data:`SEED_STAGES`: the model, the data, SFT, its curriculum test answers and the sharpening stage; about 60% of a
whole demo's CPU time), and the numbers are computed from their files by the functions report.json is written with.
Writes ``<out>/seeds.json`` and ``<out>/seeds.md`` (atomically) and prints the table. A seed whose stages are
finished is reused (run.py's own stage bookkeeping).
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
sys.path.append(str(ROOT))
from core.io import atomic_write_text  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import curriculum  # noqa: E402  (experiments/demo/curriculum.py)
import report  # noqa: E402  (experiments/demo/report.py)
import sharpen  # noqa: E402  (experiments/demo/sharpen.py)

RUN = HERE / "run.py"
#: run.py's stages a seed builds (``--only``): what :data:`COLUMNS` reads, and the stages those need.
SEED_STAGES = ("model", "data", "sft", "curriculum/after_sft", "sharpen_data", "sharpen_start", "sharpen/*")
#: The numbers tabulated per seed: column title -> path in report.json's ``curriculum`` section.
COLUMNS: dict[str, tuple[str, ...]] = {
    "after SFT": ("stages", "after_sft", "accuracy"),
    "scroll after SFT": ("stages", "after_sft", "per_family", "scroll_direction"),
    "sharpening start (val. family acc.)": ("sharpening", "start_choice", "val_family_accuracy"),
    "start: family": ("sharpening", "stages", "start", "family_accuracy"),
    "GRPO family gain": ("sharpening", "gains", "grpo", "family", "mean"),
    "GRPO whole gain": ("sharpening", "gains", "grpo", "whole", "mean"),
    "shuffled family gain": ("sharpening", "gains", "grpo_shuffled", "family", "mean"),
    "more SFT family gain": ("sharpening", "gains", "more_sft", "family", "mean"),
    "more SFT whole gain": ("sharpening", "gains", "more_sft", "whole", "mean"),
}


def pick(section: dict[str, Any], path: tuple[str, ...]) -> float | None:
    for key in path:
        if not isinstance(section, dict) or key not in section:
            return None
        section = section[key]
    return section if isinstance(section, int | float) else None


def seed_numbers(folder: Path) -> dict[str, Any]:
    """The part of report.json's ``curriculum`` section the table reads (``stages.after_sft`` and ``sharpening``),
    computed from a demo folder's files as report.py computes them; a whole `make demo` folder or one built with
    :data:`SEED_STAGES` only."""
    times = report.stage_records(folder)
    after_sft = curriculum.stage_summary(*curriculum.row_accuracy(folder / "curriculum" / "after_sft" / "scored.jsonl"))
    return {"stages": {"after_sft": after_sft},
            "sharpening": sharpen.section(folder, times, report.sharpen_training_reward(folder))}


def summarize(sections: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Per seed, each column's value read from its ``curriculum``-shaped section (fractions 0..1; None where it
    lacks it), and per column the mean, the sample standard deviation and the range over the seeds that have it."""
    rows = {}
    for seed, cur in sections.items():
        rows[seed] = {name: pick(cur, path) for name, path in COLUMNS.items()}
        rows[seed]["start step"] = pick(cur, ("sharpening", "start_choice", "step"))
    spread = {}
    for name in COLUMNS:
        values = [r[name] for r in rows.values() if r[name] is not None]
        spread[name] = {"mean": statistics.fmean(values) if values else None,
                        "sd": statistics.stdev(values) if len(values) > 1 else None,
                        "min": min(values, default=None), "max": max(values, default=None)}
    return {"seeds": rows, "spread": spread}


def markdown(summary: dict[str, Any]) -> str:
    def pct(v: float | None, sign: bool = False) -> str:
        return "-" if v is None else (f"{100 * v:+.1f}" if sign else f"{100 * v:.1f}")

    names = list(COLUMNS)
    lines = ["| seed | start step | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for seed, r in summary["seeds"].items():
        lines.append(f"| {seed} | {r['start step'] if r['start step'] is not None else '-'} | "
                     + " | ".join(pct(r[n], "gain" in n) for n in names) + " |")
    s = summary["spread"]
    lines.append("| mean (sd) | | " + " | ".join(
        f"{pct(s[n]['mean'], 'gain' in n)} ({pct(s[n]['sd'])})" if s[n]["sd"] is not None else pct(s[n]["mean"])
        for n in names) + " |")
    return "\n".join(lines) + "\n"


def reuse_refusal(folder: Path, profile: str, seed: int, config: Path = HERE / "config.yaml") -> str | None:
    """Why the finished demo ``folder`` (``make demo``'s ``$(DEMO_OUT)``) cannot stand for ``seed`` of
    ``profile`` in the table, else None: its ``report.json`` must name ``profile`` and its model stage must have
    been built with ``seed`` (the settings hash run.py recorded, :func:`report.stage_key`), so a run of another
    profile or seed is never mixed into the table. Reading never fails: any unreadable file is a reason."""
    import yaml

    from core.console import quoted
    from core.outputs import read_json_file

    try:
        got = read_json_file(folder / "report.json", max_bytes=64 * 2**20)
        record = read_json_file(report.stage_record(folder, "model"), max_bytes=2**20)
    except (OSError, ValueError) as e:
        return f"its report.json or model stage record cannot be read ({e})"
    if not isinstance(got, dict) or got.get("profile") != profile:
        return f"it is a run of profile {quoted(got.get('profile') if isinstance(got, dict) else None, 60)}, " \
               f"not {quoted(profile, 60)}"
    cfg = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get(profile)
    if not isinstance(cfg, dict):
        return f"profile {quoted(profile, 60)} is not in {config.name}"
    if not isinstance(record, dict) or record.get("key") != report.stage_key(report.model_settings({**cfg, "seed": seed})):
        return f"its model was not built with seed {seed} (or with another model setting)"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "demo-seeds")
    ap.add_argument("--reuse-seed0", type=Path, help="a finished `make demo` folder to read for seed 0 instead of "
                    "running it again, when it is a run of --profile with seed 0 (else seed 0 runs in --out)")
    ap.add_argument("--shared-data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--profile", default="full")
    args = ap.parse_args(argv)
    folders = {}
    for seed in args.seeds:
        if seed == 0 and args.reuse_seed0 is not None:
            why = reuse_refusal(args.reuse_seed0, args.profile, seed)
            if why is None:
                folders[seed] = args.reuse_seed0
                continue
            print(f"[demo-seeds] seed 0: not reusing {args.reuse_seed0}: {why}", file=sys.stderr, flush=True)
        folder = args.out / f"seed{seed}"
        print(f"[demo-seeds] seed {seed}: {folder}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, RUN, "--profile", args.profile, "--seed", str(seed), "--out", folder,
                               "--shared-data", args.shared_data, "--only", *SEED_STAGES], check=False)
        if done.returncode:
            raise SystemExit(f"demo-seeds: the demo with seed {seed} failed (exit {done.returncode}); see {folder}/logs")
        folders[seed] = folder
    summary = summarize({seed: seed_numbers(folder) for seed, folder in folders.items()})
    summary["folders"] = {seed: str(f) for seed, f in folders.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / "seeds.json", json.dumps(summary, indent=1) + "\n")
    table = markdown(summary)
    atomic_write_text(args.out / "seeds.md", table)
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
