"""The demo's sharpening stage (issue 40): GRPO from a partly trained start, its control, and more SFT.

GRPO can only sharpen what a policy half knows: a group of completions carries a signal only where they disagree.
So the stage starts from the SFT checkpoint that, on the validation split, answers the chosen families right more
often than chance but well below 100% (:func:`choose_start`), and trains it three ways for the same budget: GRPO with
GUI-R1's reward, the same GRPO with the rewards shuffled within each batch (the control: right values, wrong answers),
and SFT continued on the same families' gold answers (is RL doing anything more SFT would not?). Each is measured on
the test split's screens of those families (every instruction of a screen) and on the whole curriculum test set,
paired against the start on the same screens (:func:`section`; names in ``report.json`` ``curriculum.sharpening``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import curriculum  # experiments/demo/curriculum.py (run.py and report.py put this folder on sys.path)

#: The three runs from the start, in report order: report.json stage name -> the run's name (folders, gains).
RUNS = {"after_grpo": "grpo", "after_grpo_shuffled": "grpo_shuffled", "after_more_sft": "more_sft"}
#: The run that continues SFT (LLaMA-Factory, on the prompts' gold answers); the others are GRPO runs (trl).
SFT_RUN = "more_sft"
GRPO_RUNS = tuple(name for name in RUNS.values() if name != SFT_RUN)
STAGES = ("start", *RUNS)


def choose_start(candidates: list[tuple[int, float]], low: float, high: float) -> dict[str, Any]:
    """The start among SFT checkpoints ``(step, validation accuracy on the families)``: the LATEST one inside
    ``[low, high]`` (the most trained start that still partly reads: the rest of the curriculum is as learned as it
    gets); with none inside, the one closest to the band (the later on a tie), flagged ``in_band: false`` (the stage
    still runs; the report says the start is not a partly trained one)."""
    if not candidates:
        raise ValueError("choose_start: no SFT checkpoint to choose from")
    step, acc = min(candidates, key=lambda c: (max(low - c[1], c[1] - high, 0.0), -c[0]))
    return {"step": step, "val_family_accuracy": acc, "in_band": low <= acc <= high, "band": [low, high],
            "candidates": [list(c) for c in candidates]}


def section(out: Path, times: dict[str, dict], training_reward: dict[str, list[float]]) -> dict[str, Any] | None:
    """report.json's ``curriculum.sharpening`` (None when the stage has not run): every stage on the same family
    test screens and the same whole curriculum test screens (``<out>/sharpen/<stage>/{family,whole}/scored.jsonl``),
    accuracies with 95% intervals (fractions 0..1), per family, each run's paired gain over the start on both sets,
    the CPU seconds each run trained, the validation curves and the GRPO runs' training reward per step."""
    base = out / "sharpen"
    start = load_json(base / "start.json")
    if start is None:
        return None
    families = start["families"]
    cpu_s = {st: (times.get(f"sharpen/train_{name}") or {}).get("cpu_s") for st, name in RUNS.items()}
    curves = {name: [[0, start["val_family_accuracy"]], *(load_json(out / "curves" / f"sharpen_{name}.json") or [])]
              for name in RUNS.values()}
    family_rows = {st: curriculum.row_accuracy(base / st / "family" / "scored.jsonl") for st in STAGES}
    whole_rows = {st: curriculum.row_accuracy(base / st / "whole" / "scored.jsonl") for st in STAGES}
    for rows in (family_rows, whole_rows):
        if any(r[0] != rows["start"][0] for r in rows.values()):
            raise SystemExit("report: the sharpening stages did not answer the same screens in the same order")
    stages = {}
    for st in STAGES:
        fam, whole = family_rows[st], whole_rows[st]
        summary = curriculum.stage_summary(*whole)
        stages[st] = {"family_accuracy": sum(fam[1]) / len(fam[1]) if fam[1] else None,
                      "family_ci95": curriculum.interval(fam[1]), "accuracy": summary["accuracy"],
                      "ci95": summary["ci95"], "per_family": summary["per_family"], "cpu_s": cpu_s.get(st)}
    gains = {RUNS[st]: {"family": curriculum.paired_gain(family_rows[st][1], family_rows["start"][1]),
                              "whole": curriculum.paired_gain(whole_rows[st][1], whole_rows["start"][1])}
             for st in RUNS}
    return {"families": families,
            "training_reward": training_reward,
            "start": (f"SFT checkpoint at step {start['step']}: validation accuracy on {', '.join(families)} "
                      f"{100 * start['val_family_accuracy']:.1f}%"
                      + ("" if start["in_band"] else " (outside the partly-trained band: no checkpoint inside it)")),
            "start_choice": start,
            "n_family_screens": len(family_rows["start"][0]), "n_heldout": len(whole_rows["start"][0]),
            "stages": stages, "gains": gains, "curves": curves}


def plot(curves: dict[str, list], path: Path) -> str | None:
    """Validation accuracy on the sharpened families against the run's step, every run from the start (step 0)."""
    if not any(curves.values()):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    styles = {"grpo": ("GRPO (r1gui)", "-"), "grpo_shuffled": ("GRPO, shuffled rewards", "--"),
              "more_sft": ("more SFT (same CPU time)", ":")}
    for name, pts in curves.items():
        if pts:
            label, style = styles.get(name, (name, "-"))
            last = max(p[0] for p in pts) or 1  # runs of different step counts on one axis: the fraction done
            ax.plot([p[0] / last for p in pts], [100 * p[1] for p in pts], marker=".", linestyle=style, label=label)
    ax.set_xlabel("fraction of the run's budget")
    ax.set_ylabel("validation accuracy, sharpened families (%)")
    ax.legend(fontsize=7)
    ax.set_title("Sharpening from a partly trained start", fontsize=9)
    return curriculum.save_figure(fig, [ax], path)


def load_json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.is_file() else None
