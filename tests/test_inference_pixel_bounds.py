"""``gui-agent infer --recipe``: screenshots are resized at the training recipe's pixel bounds, the same size
``gui-agent data convert --recipe`` exported them at, and every prediction row records the bounds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.inference.requests import ResizePolicy

pytestmark = pytest.mark.rl_env

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
GUIR1_3B = REPO / "recipes" / "qwen2_5_vl_3b" / "grpo" / "config_guir1_verl.yaml"


def gui_agent(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def test_flags_win_over_the_recipe_and_bad_recipes_are_named(tmp_path):
    pytest.importorskip("yaml")
    assert ResizePolicy.from_options(recipe=GUIR1_3B) == ResizePolicy(262_144, 1_258_291, recipe=str(GUIR1_3B))
    mixed = ResizePolicy.from_options(recipe=GUIR1_3B, min_pixels=3136)
    assert (mixed.min_pixels, mixed.max_pixels) == (3136, 1_258_291)
    assert ResizePolicy.from_options() == ResizePolicy()  # no recipe: GUI-R1's training bounds, as before
    assert "recipe" not in ResizePolicy().record(None)  # rows of runs without a recipe are unchanged
    with pytest.raises(ValueError, match="none.yaml: recipe file not found"):
        ResizePolicy.from_options(recipe=tmp_path / "none.yaml")


@pytest.mark.slow
def test_infer_resizes_a_small_screenshot_to_the_exported_size(shared_data, tmp_path):
    pytest.importorskip("transformers")
    import pyarrow.parquet as pq

    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary
    from core.inference.bench import write_guir1_benchmark
    from core.testing import tiny_qwen25vl_path

    proc = gui_agent("data", "convert", "--from", "aitw", "--to", "verl", "--input", DATA / "aitz", "--recipe",
                     GUIR1_3B, "--output", tmp_path / "train")
    assert proc.returncode == 0, proc.stderr
    exported = [tuple(r["extra_info"]["resized_size"]) for r in pq.read_table(tmp_path / "train" / "aitz.parquet")
                .select(["extra_info"]).to_pylist()]
    steps = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    assert all(w * h < 262_144 for w, h in (s.image_size for s in steps))  # 270x600: below the recipe's minimum
    bench = tmp_path / "androidcontrol_high_test.parquet"
    write_guir1_benchmark(steps, bench)

    out = tmp_path / "pred.jsonl"
    proc = gui_agent("infer", "--backend", "hf", "--device", "cpu", "--model", tiny_qwen25vl_path(), "--input", bench,
                     "--output", out, "--recipe", GUIR1_3B, "--max-new-tokens", "4", "--limit", "2")
    assert proc.returncode == 0, proc.stderr
    assert f"resize 262144..1258291 px (factor 28, from {GUIR1_3B})" in proc.stderr
    assert "batch 8: CPU default" in proc.stderr  # no --batch-size on CPU: today's default
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [tuple(r["resize"]["resized_size"]) for r in rows] == exported[:2] == [(364, 784)] * 2
    assert all(r["resize"] == {"min_pixels": 262_144, "max_pixels": 1_258_291, "factor": 28,
                               "resized_size": [364, 784], "recipe": str(GUIR1_3B)} for r in rows)
    # without the recipe the same screenshot is predicted at another size than it was trained at
    assert ResizePolicy().geometry(270, 600).resized_width != 364
