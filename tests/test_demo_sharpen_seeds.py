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


def _demo_folder(path: Path, profile: str, seed: int, model_profile: str = "full") -> Path:
    """A finished-demo folder as run.py leaves it, as far as `make demo-seeds` reads it to reuse seed 0: its
    report.json's profile and its model stage record (the settings hash of the seed it was built with)."""
    import json

    import report
    import yaml

    cfg = yaml.safe_load((Path(seeds.HERE) / "config.yaml").read_text())[model_profile]
    record = report.stage_record(path, "model")
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"key": report.stage_key(report.model_settings({**cfg, "seed": seed})),
                                  "wall_s": 1.0}))
    (path / "report.json").write_text(json.dumps({"profile": profile, "curriculum": {}}))
    return path


@pytest.mark.parametrize(("profile", "seed", "model_profile", "why"), [
    ("full", 0, "full", None),
    ("ci", 0, "ci", "profile 'ci', not 'full'"),            # a `make demo`-like folder of another profile
    ("full", 1, "full", "not built with seed 0"),            # a seed-1 run in DEMO_OUT
    ("full", 0, "ci", "not built with seed 0"),             # report says full, the model is the ci profile's
])
def test_seed0_reuses_make_demo_only_for_its_profile_and_seed(profile, seed, model_profile, why, tmp_path,
                                                              monkeypatch):
    """Issue 50 item 13: `make demo-seeds` reads $(DEMO_OUT) as seed 0 only when it is a run of the same profile
    with seed 0; otherwise it says why and runs seed 0 itself into DEMO_SEEDS_OUT/seed0."""
    folder = _demo_folder(tmp_path / "demo", profile, seed, model_profile)
    if why is None:
        assert seeds.reuse_refusal(folder, "full", 0) is None
    else:
        assert why in seeds.reuse_refusal(folder, "full", 0)
    ran = []

    def fake_run(cmd, check=False):
        ran.append([str(c) for c in cmd])
        return type("Done", (), {"returncode": 0})()

    monkeypatch.setattr(seeds.subprocess, "run", fake_run)
    monkeypatch.setattr(seeds, "seed_numbers", lambda f: _section(0.3, 0.1))
    assert seeds.main(["--seeds", "0", "--out", str(tmp_path / "seeds"), "--reuse-seed0", str(folder)]) == 0
    import json

    used = json.loads((tmp_path / "seeds" / "seeds.json").read_text())["folders"]["0"]
    if why is None:
        assert used == str(folder) and not ran
    else:
        assert used == str(tmp_path / "seeds" / "seed0") and len(ran) == 1
        assert ran[0][ran[0].index("--seed") + 1] == "0" and ran[0][ran[0].index("--profile") + 1] == "full"


def test_seed0_is_not_reused_from_an_unreadable_folder(tmp_path):
    folder = _demo_folder(tmp_path / "demo", "full", 0)
    (folder / "report.json").write_text("[" * 100_000)
    assert "cannot be read" in seeds.reuse_refusal(folder, "full", 0)
    (folder / "report.json").write_text('["full"]')
    assert "profile None" in seeds.reuse_refusal(folder, "full", 0)
