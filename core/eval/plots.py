"""Pictures of a result: a bar chart per benchmark and a confusion matrix of predicted vs gold action types.

matplotlib is imported here only (it is in the ``rl`` environment, not the base install); without it
:class:`PlotsUnavailable` says so.  Files are written atomically (:func:`core.io.atomic_path`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io import atomic_path

if TYPE_CHECKING:
    from core.outputs import FolderFiles


def plot_files(benchmark: str) -> tuple[str, ...]:
    """The files :func:`plot_result` may write for ``benchmark`` (``--plots``: listed in its manifest)."""
    return (f"{benchmark}_bars.png", f"{benchmark}_confusion.png")



class PlotsUnavailable(RuntimeError):
    """matplotlib is missing."""


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotsUnavailable(
            "plots need matplotlib, which is installed in the rl environment: run "
            "`.venvs/rl/bin/python -m core eval ...` (or pip install 'gui-agent[plot]')") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    return path


def bar_chart(result: Mapping[str, Any], path: str | Path) -> Path:
    """Bars of the headline numbers (percent) and of the per-group / per-action breakdown of one result."""
    plt = _pyplot()
    from core.eval.report import headline

    m = result["metrics"]
    head = {k: v for k, v in headline(result).items() if v is not None}
    if "per_group" in m and "overall" in m:
        detail = {k: v for k, v in m["per_group"].items() if v is not None}
        detail_title = "per group-ui_type"
    else:
        per = m.get("per_action") or m.get("per_category") or {}
        detail = {k: v["sr"] for k, v in per.items() if v.get("sr") is not None}
        detail_title = "SR per " + ("gold action" if "per_action" in m else "category")
    fig, axes = plt.subplots(1, 2, figsize=(4 + 0.45 * max(len(detail), 4), 4),
                             gridspec_kw={"width_ratios": [max(len(head), 1), max(len(detail), 1)]})
    for ax, data, title in ((axes[0], head, "headline"), (axes[1], detail, detail_title)):
        names = list(data)
        vals = [100 * data[k] for k in names]
        bars = ax.bar(range(len(names)), vals, color="#4C72B0")
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
        ax.set_ylim(0, 105)
        ax.set_title(title, fontsize=9)
        for b, v in zip(bars, vals, strict=False):
            ax.annotate(f"{v:.1f}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom", fontsize=7)
    axes[0].set_ylabel("%")
    fig.suptitle(f"{result['benchmark']} ({result['mode']}, {result['n_rows']} rows)", fontsize=10)
    try:
        return _save(fig, Path(path))
    finally:
        plt.close(fig)


def confusion_matrix(result: Mapping[str, Any], path: str | Path) -> Path | None:
    """Heat map of row counts: gold action type (rows) vs predicted type (columns); None when the result has no
    action types (grounding benchmarks)."""
    conf = result.get("confusion") or {}
    if not conf:
        return None
    plt = _pyplot()
    gold = sorted(conf)
    pred = sorted({p for row in conf.values() for p in row}, key=lambda p: (p not in gold, p))
    grid = [[conf[g].get(p, 0) for p in pred] for g in gold]
    fig, ax = plt.subplots(figsize=(1.5 + 0.55 * len(pred), 1.2 + 0.45 * len(gold)))
    im = ax.imshow(grid, cmap="Blues")
    ax.set_xticks(range(len(pred)), pred, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(gold)), gold, fontsize=8)
    ax.set_xlabel("predicted action")
    ax.set_ylabel("gold action")
    top = max((max(r) for r in grid), default=0)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v:
                ax.text(j, i, str(v), ha="center", va="center", fontsize=7,
                        color="white" if v > top / 2 else "black")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    ax.set_title(f"{result['benchmark']}: predicted vs gold action type", fontsize=9)
    try:
        return _save(fig, Path(path))
    finally:
        plt.close(fig)


def plot_result(result: Mapping[str, Any], out_dir: str | Path | FolderFiles) -> list[Path]:
    """``<bench>_bars.png`` and, for action benchmarks, ``<bench>_confusion.png`` in ``out_dir`` (a
    :class:`core.outputs.FolderFiles` lists each in its manifest first)."""
    from core.outputs import as_folder_files

    out = as_folder_files(out_dir)
    paths = [bar_chart(result, out.path(f"{result['benchmark']}_bars.png"))]
    cm = (confusion_matrix(result, out.path(f"{result['benchmark']}_confusion.png")) if result.get("confusion")
          else None)  # a name is listed only when its file is written
    if cm is not None:
        paths.append(cm)
    return paths
