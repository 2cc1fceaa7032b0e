"""The numbers of `make demo-agent`: the start rule, the training curves, held-out success with paired bootstrap
intervals, ``report.json`` / ``report.md`` and the plots.

Every number is recomputed from the files the stages wrote: ``eval/<run>/episodes.jsonl`` (``gui-agent rollout``'s
episode rows, one per held-out task, the same tasks in every run), ``start/start.json``, verl's console metrics in
``logs/<run>.log`` (``curves/<run>.json``) and the stage records ``stages/<name>.json``. Intervals: 95% percentile
bootstrap over episodes (``scipy.stats.bootstrap``, 10,000 resamples, fixed seed); a gain is the paired bootstrap
of the per-episode difference against the start on the same tasks (make demo's ``curriculum.interval`` and
``curriculum.paired_gain``).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "demo"))

import curriculum  # noqa: E402  (experiments/demo/curriculum.py: interval, paired_gain)

from core.io import atomic_write_json, atomic_write_text  # noqa: E402
from core.training_logs import step_metrics  # noqa: E402

#: Runs of the report, in order; every one but ``start`` gets a gain against the start.
RUNS = ("start", "grpo", "grpo_shuffled", "grpo_plain", "more_sft")
#: verl's per-step training success of the agent recipe (the reward part ``gui_agent/success``, batch mean).
TRAIN_SUCCESS = "gui_agent/success/mean"


def episodes(path: Path) -> list[dict[str, Any]]:
    """The episode rows of a ``gui-agent rollout`` ``episodes.jsonl``, sorted by id (runs pair by id)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return sorted(rows, key=lambda row: row["id"])


def family_success(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Success rate per task family."""
    by: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        by[row["family"]].append(float(bool(row["success"])))
    return {f: sum(v) / len(v) for f, v in sorted(by.items())}


def disagreement(p: float, group: int) -> float:
    """The probability that a group of ``group`` independent samples with success rate ``p`` is mixed (not all
    successes, not all failures): the share of GRPO groups with a non-zero advantage."""
    return 1.0 - p ** group - (1.0 - p) ** group


def mixed_families(per_family: dict[str, float], group: int) -> list[str]:
    """The families on which a group of ``group`` samples is mixed more often than not (GRPO learns from them)."""
    return sorted(f for f, p in per_family.items() if disagreement(p, group) > 0.5)


def choose_start(candidates: list[dict[str, Any]], group: int) -> dict[str, Any]:
    """The start rule: among ``candidates`` (``{"step", "per_family"}``: validation success per family, sampled as
    the rollout samples), the checkpoint with the most families on which a group of ``group`` is mixed more often
    than not; ties: the latest. Returns the choice, the rule and every candidate with its mixed families."""
    ordered = sorted(candidates, key=lambda c: c["step"])
    for c in ordered:
        c["mixed"] = mixed_families(c["per_family"], group)
    pick = max(reversed(ordered), key=lambda c: len(c["mixed"]))
    return {"step": pick["step"], "per_family": pick["per_family"], "mixed": pick["mixed"], "group": group,
            "rule": f"the checkpoint with the most families where a group of {group} is mixed more often than not "
                    f"(success p with 1 - p^{group} - (1-p)^{group} > 0.5); ties: the latest",
            "candidates": ordered}


def write_curve(log_file: Path, out: Path) -> list[dict[str, float]]:
    """verl's per-step metrics of a launch's log as ``[{step, train_success, val_success, ...}]`` in ``out``."""
    points = []
    for step, m in sorted(step_metrics(log_file.read_text(encoding="utf-8", errors="replace")).items()):
        val = next((v for k, v in m.items() if k.startswith("val-") and "success" in k), None)
        points.append({"step": step, "train_success": m.get(TRAIN_SUCCESS), "val_success": val,
                       "reward": m.get("critic/score/mean"), "step_s": m.get("timing_s/step")})
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, points)
    return points


def stage_times(out: Path) -> dict[str, dict[str, Any]]:
    """``{stage: {"wall_s", "cpu_s"}}`` of every finished stage (``stages/<name>.json``)."""
    times = {}
    for f in (out / "stages").rglob("*.json"):
        name = f.relative_to(out / "stages").with_suffix("").as_posix()
        times[name] = json.loads(f.read_text())
    return times


def run_numbers(rows: list[dict[str, Any]], start: list[dict[str, Any]] | None) -> dict[str, Any]:
    """``success``, ``ci95``, ``n_episodes``, ``per_family`` and, against ``start`` (the same tasks),
    ``gain`` = {mean, ci95} overall and per family."""
    ok = [float(bool(r["success"])) for r in rows]
    out: dict[str, Any] = {"success": sum(ok) / len(ok), "ci95": curriculum.interval(ok), "n_episodes": len(ok),
                           "per_family": {}}
    fams = sorted({r["family"] for r in rows})
    if start is not None:
        ids, start_ids = [r["id"] for r in rows], [r["id"] for r in start]
        if ids != start_ids:
            raise ValueError("a run and the start were evaluated on different episodes")
        base = [float(bool(r["success"])) for r in start]
        out["gain"] = curriculum.paired_gain(ok, base)
    for fam in fams:
        idx = [i for i, r in enumerate(rows) if r["family"] == fam]
        entry = {"success": sum(ok[i] for i in idx) / len(idx), "n_episodes": len(idx)}
        if start is not None:
            entry["gain"] = curriculum.paired_gain([ok[i] for i in idx], [float(bool(start[i]["success"])) for i in idx])
        out["per_family"][fam] = entry
    return out


def _plots(out: Path, result: dict[str, Any], curves: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """Training success per step, validation success over steps and per-family held-out bars (PNG files)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = {}
    for key, title, name in (("train_success", "training success per step (batch mean)", "train_success.png"),
                             ("val_success", "validation success (agent_val, greedy)", "val_success.png")):
        fig, ax = plt.subplots(figsize=(6, 3.5))
        drawn = False
        for run, points in curves.items():
            xy = [(p["step"], p[key]) for p in points if p.get(key) is not None]
            if xy:
                ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label=run)
                drawn = True
        if drawn:
            ax.set_xlabel("training step")
            ax.set_ylabel("success")
            ax.set_title(title)
            ax.legend()
            fig.tight_layout()
            fig.savefig(out / name, dpi=110)
            files[key] = name
        plt.close(fig)
    runs = result["runs"]
    fams = sorted(runs["start"]["per_family"])
    fig, ax = plt.subplots(figsize=(8, 3.8))
    width = 0.8 / len(runs)
    for k, (run, numbers) in enumerate(runs.items()):
        ax.bar([i + k * width for i in range(len(fams))], [numbers["per_family"][f]["success"] for f in fams],
               width, label=run)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(fams))], fams, rotation=20, fontsize=8)
    ax.set_ylabel("held-out success")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "families.png", dpi=110)
    plt.close(fig)
    files["families"] = "families.png"
    return files


def _pts(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}"


def markdown(result: dict[str, Any]) -> str:
    """``report.md``: the runs' held-out success and gains, per family, the start rule's choice, the times."""
    lines = [f"# make demo-agent (profile {result['profile']}, seed {result['seed']})", "",
             f"Held-out agent_test episodes (greedy, the same {result['runs']['start']['n_episodes']} tasks for every "
             f"run); gains against the start with paired bootstrap 95% intervals, in points. Wall time "
             f"{result['wall_s']:.0f} s (every stage as long as it took when built).", "",
             "| run | success | 95% interval | gain | gain 95% interval |", "|---|---|---|---|---|"]
    for run, n in result["runs"].items():
        gain = n.get("gain")
        mean, ci = (_pts(gain["mean"]), f"[{_pts(gain['ci95'][0])}, {_pts(gain['ci95'][1])}]") if gain else ("-", "-")
        lines.append(f"| {run} | {100 * n['success']:.1f}% | [{100 * n['ci95'][0]:.1f}, {100 * n['ci95'][1]:.1f}] | "
                     f"{mean} | {ci} |")
    fams = sorted(result["runs"]["start"]["per_family"])
    lines += ["", "Per family (success, %):", "", "| run | " + " | ".join(fams) + " |",
              "|---|" + "---|" * len(fams)]
    for run, n in result["runs"].items():
        lines.append(f"| {run} | " + " | ".join(f"{100 * n['per_family'][f]['success']:.1f}" for f in fams) + " |")
    start = result["start"]
    lines += ["", f"Start: SFT checkpoint {start['step']} ({start['rule']}; a group of {start['group']}).", ""]
    for key, name in result.get("plots", {}).items():
        lines.append(f"![{key}]({name})")
    lines += ["", "Stage times (s): " + ", ".join(f"{k} {v['wall_s']:.0f}" for k, v in sorted(result["stages"].items()))]
    return "\n".join(lines) + "\n"


def write_report(out: Path, *, profile: str, seed: int, times: dict[str, Any], wall_s: float,
                 families: list[str]) -> Path:
    """``report.json``, ``report.md`` and the plots in ``out``; returns ``out``."""
    rows = {run: episodes(out / "eval" / run / "episodes.jsonl") for run in RUNS}
    missing = sorted(set(families) - {r["family"] for r in rows["start"]})
    if missing:
        raise ValueError(f"the held-out episodes miss families {missing}")
    runs = {run: run_numbers(rows[run], None if run == "start" else rows["start"]) for run in RUNS}
    curves = {run: json.loads((out / "curves" / f"{run}.json").read_text())
              for run in ("grpo", "grpo_shuffled", "grpo_plain") if (out / "curves" / f"{run}.json").is_file()}
    stages = stage_times(out)
    # wall_s: the pipeline's cost, every stage as long as it took when it was built (a rerun reuses stages);
    # invocation_s: this command's own time
    result = {"profile": profile, "seed": seed, "wall_s": round(sum(v.get("wall_s") or 0 for v in stages.values()), 1),
              "invocation_s": round(wall_s, 1), "runs": runs, "curves": curves,
              "start": json.loads((out / "start" / "start.json").read_text()),
              "more_sft": json.loads((out / "curves" / "more_sft.json").read_text()),
              "stages": {k: {"wall_s": v.get("wall_s"), "cpu_s": v.get("cpu_s")} for k, v in stages.items()},
              "built_now": {k: not v.get("reused", False) for k, v in times.items()}}
    result["plots"] = _plots(out, result, curves)
    atomic_write_json(out / "report.json", result)
    atomic_write_text(out / "report.md", markdown(result))
    return out


__all__ = ["RUNS", "choose_start", "disagreement", "episodes", "family_success", "markdown", "mixed_families",
           "run_numbers", "stage_times", "write_curve", "write_report"]
