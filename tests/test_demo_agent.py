"""make demo-agent's numbers (experiments/demo_agent/report.py, seeds.py): the start rule, the curves read from verl's
console log, held-out success with paired gains recomputed from episode files, report.json / report.md and the
seed table, on crafted stage outputs (the pipeline's own run is the slow test at the end)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from core.interpreter import load_script

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "experiments" / "demo_agent"


report = load_script("demo_agent_report", HERE / "report.py")
seeds = load_script("demo_agent_seeds", HERE / "seeds.py")
FAMILIES = ["go_back", "open_app_tile", "open_two_apps"]


def test_disagreement_and_the_start_rule():
    assert report.disagreement(0.0, 4) == 0 and report.disagreement(1.0, 4) == 0
    assert report.disagreement(0.5, 4) == pytest.approx(1 - 2 / 16)
    # 1 - .16^4 - .84^4 = 0.502 (mixed more often than not), 1 - .15^4 - .85^4 = 0.478 (not)
    assert report.mixed_families({"a": 0.16, "b": 0.15, "c": 0.84, "d": 1.0}, 4) == ["a", "c"]
    candidates = [{"step": 100, "per_family": {"a": 0.0, "b": 0.5}},
                  {"step": 300, "per_family": {"a": 0.3, "b": 0.5}},
                  {"step": 200, "per_family": {"a": 0.5, "b": 0.3}},
                  {"step": 400, "per_family": {"a": 1.0, "b": 0.4}}]
    choice = report.choose_start(candidates, 4)
    assert choice["step"] == 300  # two mixed families at 200 and 300: the latest
    assert [c["step"] for c in choice["candidates"]] == [100, 200, 300, 400]
    assert choice["mixed"] == ["a", "b"] and "ties: the latest" in choice["rule"]
    none = report.choose_start([{"step": 1, "per_family": {"a": 0.0}}, {"step": 2, "per_family": {"a": 1.0}}], 4)
    assert none["step"] == 2 and none["mixed"] == []


VERL_LOG = """(TaskRunnerV1 pid=1) step:0 - val-core/gui_agent/sim_phone/reward/mean@1:np.float64(0.1) - \
val-aux/gui_agent/sim_phone/gui_agent/success/mean@1:np.float64(0.25)
(TaskRunnerV1 pid=1) step:1 - gui_agent/success/mean:0.5 - critic/score/mean:0.75 - timing_s/step:12.5
(TaskRunnerV1 pid=1) step:2 - gui_agent/success/mean:np.float64(0.625) - critic/score/mean:0.8 - \
val-aux/gui_agent/sim_phone/gui_agent/success/mean@1:np.float64(0.375) - timing_s/step:11.0
"""


def test_curve_from_verls_console_log(tmp_path):
    (tmp_path / "grpo.log").write_text(VERL_LOG)
    points = report.write_curve(tmp_path / "grpo.log", tmp_path / "curves" / "grpo.json")
    assert points == [
        {"step": 0, "train_success": None, "val_success": 0.25, "reward": None, "step_s": None},
        {"step": 1, "train_success": 0.5, "val_success": None, "reward": 0.75, "step_s": 12.5},
        {"step": 2, "train_success": 0.625, "val_success": 0.375, "reward": 0.8, "step_s": 11.0}]
    assert json.loads((tmp_path / "curves" / "grpo.json").read_text()) == points


def _episodes(rng: random.Random, rate: dict[str, float], n: int) -> list[dict]:
    return [{"id": f"{fam}-{6000000 + k}", "family": fam, "success": rng.random() < rate[fam]}
            for k in range(n) for fam in FAMILIES]


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))  # any order: runs pair by id


@pytest.fixture
def demo_out(tmp_path):
    rng = random.Random(0)
    rates = {"start": {"go_back": 0.5, "open_app_tile": 0.2, "open_two_apps": 0.0},
             "grpo": {"go_back": 0.9, "open_app_tile": 0.5, "open_two_apps": 0.2},
             "grpo_shuffled": {"go_back": 0.5, "open_app_tile": 0.2, "open_two_apps": 0.0},
             "grpo_plain": {"go_back": 0.8, "open_app_tile": 0.3, "open_two_apps": 0.0},
             "more_sft": {"go_back": 0.6, "open_app_tile": 0.2, "open_two_apps": 0.0}}
    for run, rate in rates.items():
        _write(tmp_path / "eval" / run / "episodes.jsonl", _episodes(rng, rate, 80))
    (tmp_path / "start").mkdir()
    (tmp_path / "start" / "start.json").write_text(json.dumps(
        report.choose_start([{"step": 300, "per_family": {"go_back": 0.5}}], 4)))
    (tmp_path / "curves").mkdir()
    for run in ("grpo", "grpo_shuffled", "grpo_plain"):
        (tmp_path / "logs").mkdir(exist_ok=True)
        (tmp_path / "logs" / f"{run}.log").write_text(VERL_LOG)
        report.write_curve(tmp_path / "logs" / f"{run}.log", tmp_path / "curves" / f"{run}.json")
    (tmp_path / "curves" / "more_sft.json").write_text(json.dumps({"steps": 10, "sft_s_per_step": 2.0,
                                                                   "budget_s": 20.0}))
    (tmp_path / "stages").mkdir()
    (tmp_path / "stages" / "grpo.json").write_text(json.dumps({"key": "k", "wall_s": 20.0, "cpu_s": 5.0}))
    return tmp_path


def test_report_numbers_are_recomputed_from_the_episode_files(demo_out):
    report.write_report(demo_out, profile="ci", seed=3, times={"grpo": {"wall_s": 20.0, "reused": False}},
                        wall_s=99.0, families=FAMILIES)
    result = json.loads((demo_out / "report.json").read_text())
    assert result["seed"] == 3 and list(result["runs"]) == list(report.RUNS)
    assert result["wall_s"] == 20.0 and result["invocation_s"] == 99.0  # the stages' built times; this command's
    rows = {run: report.episodes(demo_out / "eval" / run / "episodes.jsonl") for run in report.RUNS}
    for run, numbers in result["runs"].items():
        ok = [float(r["success"]) for r in rows[run]]
        assert numbers["n_episodes"] == 240 and numbers["success"] == pytest.approx(sum(ok) / 240)
        assert numbers["ci95"][0] <= numbers["success"] <= numbers["ci95"][1]
        assert set(numbers["per_family"]) == set(FAMILIES)
        if run == "start":
            assert "gain" not in numbers
            continue
        base = [float(r["success"]) for r in rows["start"]]
        diff = sum(ok) / 240 - sum(base) / 240
        assert numbers["gain"]["mean"] == pytest.approx(diff)
        lo, hi = numbers["gain"]["ci95"]
        assert lo <= diff <= hi
    assert result["runs"]["grpo"]["gain"]["ci95"][0] > 0  # +30 points on 240 paired episodes
    assert result["runs"]["grpo_shuffled"]["gain"]["ci95"][0] <= 0 <= result["runs"]["grpo_shuffled"]["gain"]["ci95"][1]
    assert result["curves"]["grpo"][1]["train_success"] == 0.5 and result["start"]["step"] == 300
    assert (demo_out / "families.png").stat().st_size > 0 and (demo_out / "train_success.png").is_file()
    md = (demo_out / "report.md").read_text()
    assert "| grpo |" in md and "Start: SFT checkpoint 300" in md


def test_report_refuses_unpaired_runs_and_missing_families(demo_out):
    rows = report.episodes(demo_out / "eval" / "grpo" / "episodes.jsonl")
    _write(demo_out / "eval" / "grpo" / "episodes.jsonl", rows[1:])
    with pytest.raises(ValueError, match="different episodes"):
        report.write_report(demo_out, profile="ci", seed=0, times={}, wall_s=1.0, families=FAMILIES)
    with pytest.raises(ValueError, match="miss families"):
        report.write_report(demo_out, profile="ci", seed=0, times={}, wall_s=1.0, families=[*FAMILIES, "go_home"])


def test_seed_table_has_every_seed_and_the_mean(demo_out):
    report.write_report(demo_out, profile="ci", seed=0, times={}, wall_s=60.0, families=FAMILIES)
    one = json.loads((demo_out / "report.json").read_text())
    two = json.loads(json.dumps(one))
    two["seed"] = 1
    two["runs"]["grpo"]["success"] = one["runs"]["grpo"]["success"] - 0.1
    two["runs"]["grpo"]["gain"]["mean"] = one["runs"]["grpo"]["gain"]["mean"] - 0.1
    md = seeds.table([one, two])
    lines = md.splitlines()
    assert lines[2].startswith("| 0 |") and lines[3].startswith("| 1 |") and lines[4].startswith("| mean |")
    mean_gain = 100 * (one["runs"]["grpo"]["gain"]["mean"] - 0.05)
    assert f"({mean_gain:+.1f})" in lines[4]
    with pytest.raises(SystemExit):
        seeds.main(["--seeds", str(2 ** 40), "--out", str(demo_out / "s")])
