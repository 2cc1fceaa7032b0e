"""The demo's curriculum measurement: action accuracy with bootstrap intervals, paired gains, learning curves.

Accuracy is GUI-R1's rule per held-out screen (action type, point in the gold box, typed text token F1 >= 0.5): the
``r1gui_accuracy`` part of ``report.py score`` in the recipe's ``{"mode": "guir1"}``, i.e. GUI-R1's published
accuracy reward (icey-zhang/GUI-R1, ``r1gui`` compute_score). Intervals are 95% percentile bootstraps over screens
(``scipy.stats.bootstrap``, 10,000 resamples, fixed seed); a gain is the paired bootstrap of the per-screen
difference between two models answering the SAME screens.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

#: Bootstrap settings (percentile intervals; the resampling is seeded so a report is reproducible).
N_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
#: The curriculum's stages, in report order (``random`` is the uniform random policy of ``gui-agent infer
#: --backend baseline --model random``; the GRPO runs start from the same SFT checkpoint with the same budget).
GRPO_RUNS = ("r1gui", "gaussian", "shuffled")
#: The real GRPO runs (the shuffled one is the control whose rewards are permuted within each batch).
REAL_GRPO_RUNS = ("r1gui", "gaussian")
STAGES = ("random", "after_sft", *(f"after_grpo_{r}" for r in GRPO_RUNS))


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def interval(values: list[float]) -> list[float]:
    """95% percentile-bootstrap interval ``[lo, hi]`` of the mean of ``values`` (one value per screen)."""
    import numpy as np
    from scipy.stats import bootstrap

    x = np.asarray(values, dtype=float)
    if len(x) < 2 or np.all(x == x[0]):  # no spread: the interval is the value itself
        v = float(x.mean()) if len(x) else float("nan")
        return [v, v]
    res = bootstrap((x,), np.mean, n_resamples=N_RESAMPLES, method="percentile", rng=BOOTSTRAP_SEED)
    return [float(res.confidence_interval.low), float(res.confidence_interval.high)]


def paired_gain(after: list[float], before: list[float]) -> dict[str, Any]:
    """Mean per-screen difference ``after - before`` (same screens, same order) and its 95% paired bootstrap
    interval."""
    if len(after) != len(before):
        raise ValueError(f"paired gain needs the same screens: {len(after)} vs {len(before)} rows")
    diff = [a - b for a, b in zip(after, before, strict=True)]
    return {"mean": sum(diff) / len(diff) if diff else None, "ci95": interval(diff)}


def family_of(row_id: str) -> str:
    """The task family of a world-export row id ``sim_phone/<family>-<seed>/<step>/<level>``."""
    parts = row_id.split("/")
    return parts[1].rsplit("-", 1)[0] if len(parts) > 1 else row_id


def row_accuracy(scored: Path) -> tuple[list[str], list[float], list[str]]:
    """Per held-out screen: ``(ids, accuracy 0/1, family)`` in the order of ``scored`` (rows of ``report.py
    score``)."""
    rows = _jsonl(scored)
    return [r["id"] for r in rows], [float(r["r1gui_accuracy"]) for r in rows], [family_of(r["id"]) for r in rows]


def stage_summary(ids: list[str], acc: list[float], fams: list[str]) -> dict[str, Any]:
    """``accuracy``, ``ci95`` and ``per_family`` (family -> accuracy) of one stage, plus ``n``."""
    by_family: dict[str, list[float]] = defaultdict(list)
    for a, f in zip(acc, fams, strict=True):
        by_family[f].append(a)
    return {"n": len(acc), "accuracy": sum(acc) / len(acc) if acc else None, "ci95": interval(acc),
            "per_family": {f: sum(v) / len(v) for f, v in sorted(by_family.items())},
            "per_family_ci95": {f: interval(v) for f, v in sorted(by_family.items())}}


def curve_accuracy(scored: Path) -> float:
    """Mean accuracy of one curve point (a checkpoint answering the validation subset)."""
    rows = _jsonl(scored)
    return sum(float(r["r1gui_accuracy"]) for r in rows) / len(rows) if rows else float("nan")


def plot_curves(curves: dict[str, list[tuple[int, float]]], random_acc: float | None, path: Path) -> str | None:
    """Validation accuracy against training step: SFT on the left, each GRPO run on the right from step 0 (the SFT
    end; GRPO runs are far shorter than SFT, so one shared axis would squeeze them into a sliver)."""
    if not any(curves.values()):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_sft, ax_grpo) = plt.subplots(1, 2, figsize=(8, 3.5), sharey=True, gridspec_kw={"width_ratios": [3, 2]})
    sft = curves.get("sft") or []
    if sft:
        ax_sft.plot([s for s, _ in sft], [100 * a for _, a in sft], marker=".", color="black", label="SFT")
    for name, pts in curves.items():
        if name == "sft" or not pts:
            continue
        pts = ([(0, sft[-1][1])] if sft else []) + list(pts)  # every GRPO run starts at the SFT end
        ax_grpo.plot([s for s, _ in pts], [100 * a for _, a in pts], marker=".", label=f"GRPO {name}",
                     linestyle="--" if name == "shuffled" else "-")
    for ax in (ax_sft, ax_grpo):
        if random_acc is not None:
            ax.axhline(100 * random_acc, color="grey", linestyle=":", label="random policy")
        ax.legend(fontsize=7)
    ax_sft.set_xlabel("SFT step")
    ax_grpo.set_xlabel("GRPO step (from the SFT end)")
    ax_sft.set_ylabel("validation accuracy (%)")
    fig.suptitle("Curriculum: held-out-seed validation accuracy")
    return save_figure(fig, (ax_sft, ax_grpo), path)


def save_figure(fig, axes, path: Path) -> str:
    """Grid on each of ``axes``, tight layout, a PNG without a software stamp (byte-stable); the path relative to the
    report folder."""
    import matplotlib.pyplot as plt

    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)
    return str(path.relative_to(path.parents[1]))
