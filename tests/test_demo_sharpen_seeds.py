"""The demo's sharpening start rule and its seed table (experiments/demo/sharpen.py, seeds.py), without training:
the start is the latest SFT checkpoint inside the validation band (issue 40: above chance, well
below 100%), and `make demo-seeds` tabulates each seed's numbers with their spread (its reader runs on a real demo
folder in tests/test_demo.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments" / "demo"))
import seeds  # noqa: E402
import sharpen  # noqa: E402


def test_the_start_is_the_latest_checkpoint_inside_the_band():
    candidates = [(400, 0.25), (800, 0.40), (900, 0.50), (1000, 0.80), (1100, 0.6625), (1200, 0.875)]
    choice = sharpen.choose_start(candidates, 0.35, 0.75)
    assert (choice["step"], choice["in_band"]) == (1100, True)  # 800 and 900 are inside too, but earlier
    assert choice["candidates"] == [list(c) for c in candidates]
    assert sharpen.choose_start([(200, 0.75), (400, 0.35)], 0.35, 0.75)["step"] == 400  # the band's edges are in


def test_with_no_checkpoint_in_the_band_the_nearest_is_flagged():
    choice = sharpen.choose_start([(400, 0.25), (800, 0.25), (1200, 0.875)], 0.35, 0.75)
    assert (choice["step"], choice["in_band"]) == (800, False)  # 0.10 below the band beats 0.125 above; later step
    with pytest.raises(ValueError, match="no SFT checkpoint"):
        sharpen.choose_start([], 0.35, 0.75)


def _section(after_sft: float, family_gain: float | None) -> dict:
    """A ``curriculum``-shaped section as seeds.seed_numbers returns it (None: a folder without the sharpening)."""
    cur = {"stages": {"after_sft": {"accuracy": after_sft, "per_family": {"scroll_direction": 0.5}}}}
    if family_gain is not None:
        cur["sharpening"] = {"start_choice": {"step": 800, "val_family_accuracy": 0.5},
                             "gains": {"grpo": {"family": {"mean": family_gain}, "whole": {"mean": 0.0}}}}
    return cur


def test_the_seed_table_reads_each_seed_and_its_spread():
    summary = seeds.summarize({0: _section(0.30, 0.20), 1: _section(0.20, 0.10),
                               2: _section(0.25, None)})  # a folder from before the sharpening stage
    assert summary["seeds"][1]["after SFT"] == 0.20 and summary["seeds"][2]["GRPO family gain"] is None
    assert summary["seeds"][0]["start step"] == 800
    s = summary["spread"]["after SFT"]
    assert s["mean"] == pytest.approx(0.25) and s["sd"] == pytest.approx(0.05) and (s["min"], s["max"]) == (0.20, 0.30)
    g = summary["spread"]["GRPO family gain"]
    assert g["mean"] == pytest.approx(0.15) and g["min"] == 0.10  # over the seeds that have it
    table = seeds.markdown(summary).splitlines()
    assert table[0].startswith("| seed | start step | after SFT |") and len(table) == 2 + 3 + 1
    assert "| 0 | 800 | 30.0 |" in table[2] and "+20.0" in table[2]
