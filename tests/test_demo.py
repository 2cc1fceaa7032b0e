"""`make demo` (experiments/demo/run.py) on its cut-down `ci` profile: every stage runs for real (tiny model, simulated
phone, llamafactory-cli SFT, trl GRPO, infer, eval, rollout), with no ../shared/data, and

- report.json has the schema scripts read, with numbers recomputed here from the files they summarise, including
  the curriculum section (every stage on the same test screens, intervals, paired gains, validation curves);
- learning happened: the SFT loss falls, the SFT model answers in the format where the random one does not, and each
  GRPO run changed the SFT weights;
- the SFT checkpoint written by LLaMA-Factory's env loads in the rl env with every tensor equal (the hand-off);
- re-running on a finished folder reuses every stage and prints only the folder as its last line;
- (``repeat``, `make test-all`: the second run of every training the first one ran) a second run from the same data
  trains the same weights with the same losses and rewards and picks the same sharpening start from the same
  validation answers (fixed seeds and threads).

The stages that train nothing are built once (``--only``); each run starts from a copy of them. The second run builds
only the trainings (and the checkpoint scan that picks the sharpening start): what the first run measures of its
models is a function of the weights compared.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
#: The ``ci`` profile of experiments/demo/config.yaml: what the test's run was asked to do.
CI_CONFIG = yaml.safe_load((ROOT / "experiments" / "demo" / "config.yaml").read_text())["ci"]
RUN = ROOT / "experiments" / "demo" / "run.py"
sys.path.insert(0, str(RUN.parent))
import report  # noqa: E402  (experiments/demo/report.py: the readers report.json is written with)
STAGES = ("before_sft", "after_sft", "after_grpo")
CURRICULUM_STAGES = ("random", "after_sft", "after_grpo_r1gui", "after_grpo_gaussian", "after_grpo_shuffled")
GRPO_RUNS = ("r1gui", "gaussian", "shuffled")
#: Stages of a run: model, data, before_sft, sft, after_sft, grpo_data, 3 GRPO runs, after_grpo, baselines, 5 curriculum
#: ones, and the sharpening: its data, its start, 3 runs (training and curve each) and 4 measured stages.
N_STAGES = 28
SHARPEN_STAGES = ("start", "after_grpo", "after_grpo_shuffled", "after_more_sft")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / ".venvs/llamafactory/bin/llamafactory-cli").exists(),
                       reason="needs .venvs/llamafactory (make setup)"),
]


#: The stages that train nothing (the same for both runs): built once, copied into each run folder.
UNTRAINED = ("model", "data", "grpo_data", "sharpen_data", "before_sft", "baselines", "curriculum/random")
#: What the repeat run builds: every training and the checkpoint scan that picks the sharpening start.
TRAININGS = ("sft", "grpo_r1gui", "grpo_gaussian", "grpo_shuffled", "sharpen_start", "sharpen/train_grpo",
             "sharpen/train_grpo_shuffled", "sharpen/train_more_sft")
#: Every model a run trains (models/<name>/model.safetensors).
TRAINED_MODELS = ("sft", *(f"grpo_{r}" for r in GRPO_RUNS), "sharpen/start", "sharpen/grpo", "sharpen/grpo_shuffled",
                  "sharpen/more_sft")


def _demo(out: Path, *extra: str) -> subprocess.CompletedProcess:
    """``run.py`` on ``out``, finished (no wall-clock limit: every stage is a bounded amount of work); its stdout and
    stderr are also kept in files beside ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, str(RUN), "--profile", "ci", "--out", str(out),
                           "--shared-data", str(out / "no-shared-data"), *extra], capture_output=True, text=True)
    out.with_name(out.name + ".stdout").write_text(proc.stdout)
    out.with_name(out.name + ".stderr").write_text(proc.stderr)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


@pytest.fixture(scope="module")
def untrained(tmp_path_factory) -> Path:
    """The stages that train nothing, built once: each run starts from a copy of them."""
    root = tmp_path_factory.mktemp("demo")
    proc = _demo(root / "untrained", "--only", *UNTRAINED)
    assert proc.stdout == "" and proc.stderr.count(" done in ") == len(UNTRAINED)  # --only: no report
    return root / "untrained"


def _run_from(untrained: Path, name: str, *extra: str) -> tuple[Path, subprocess.CompletedProcess]:
    out = untrained.with_name(name)
    shutil.copytree(untrained, out)
    return out, _demo(out, *extra)


@pytest.fixture(scope="module")
def demo_run(untrained) -> tuple[Path, subprocess.CompletedProcess]:
    """``run1``, the one the tests read: trains and measures everything."""
    return _run_from(untrained, "run1")


def test_report_json_schema_and_numbers(demo_run) -> None:
    out, proc = demo_run
    assert proc.stdout.strip().splitlines()[-1] == str(out)
    report = json.loads((out / "report.json").read_text())
    assert set(report["stages"]) == set(STAGES)
    assert report["real_data"] is None  # no ../shared/data: the simulated phone alone
    import pyarrow.parquet as pq

    n_heldout = pq.read_metadata(out / "data" / "heldout.parquet").num_rows
    for stage in STAGES:
        s = report["stages"][stage]
        preds = [json.loads(x) for x in
                 (out / "stages_out" / stage / "predictions" / "androidcontrol_high_test.json").read_text().splitlines()]
        assert s["n"] == len(preds) == n_heldout > 0
        assert s["valid_rate"] == pytest.approx(sum(p["parse_ok"] for p in preds) / len(preds))
        for mode in ("strict", "guir1"):
            assert set(s["eval"][mode]) == {"type", "gr", "sr"}
            assert all(v is None or 0.0 <= v <= 1.0 for v in s["eval"][mode].values())
        summary = json.loads((out / "stages_out" / stage / "rollout" / "summary.json").read_text())
        assert s["online_success_rate"] == summary["success_rate"] and summary["episodes"] == 2
        assert 0.0 <= s["mean_reward"] <= 1.0 and s["wall_s"] > 0
    assert set(report["baselines"]) == {"random", "centre"}
    for policy, b in report["baselines"].items():  # the baselines answered the same held-out screens
        preds = [json.loads(x) for x in (out / "stages_out" / "baselines" / policy / "predictions" /
                                         "androidcontrol_high_test.json").read_text().splitlines()]
        assert b["n"] == len(preds) == n_heldout and b["valid_rate"] == 1.0
        assert 0.0 <= b["mean_reward"] <= 1.0 and b["online"]["episodes"] == 2
        if policy == "centre":
            assert {p["pred_action"] for p in preds} == {"click"}
    loss = report["training"]["sft"]["loss"]
    steps = CI_CONFIG["sft"]["overrides"]["max_steps"]
    assert [step for step, _ in loss] == list(range(1, steps + 1)) and all(v > 0 for _, v in loss)
    grpo = report["training"]["grpo"]
    fmt, acc = grpo["parts"]["r1gui_format"], grpo["parts"]["r1gui_accuracy"]
    assert len(grpo["reward"]) == len(fmt) == len(acc) == 2  # one entry per GRPO step
    # The curve is the recipe's weighted r1gui (0.2 format + 0.8 accuracy), not trl's unweighted "reward" entry.
    assert [r for _, r in grpo["reward"]] == pytest.approx([0.2 * f + 0.8 * a for f, a in zip(fmt, acc, strict=True)])
    md = (out / "report.md").read_text()
    assert all(f"| {st} |" in md for st in STAGES) and "| baseline: random policy | 100.0% |" in md
    assert (out / "plots" / "sft_loss.png").stat().st_size > 1000
    assert (out / "plots" / "grpo_reward.png").stat().st_size > 1000
    assert (out / "plots" / "curriculum_curves.png").stat().st_size > 1000


def test_curriculum_section(demo_run) -> None:
    """The names scripts read, and the numbers recomputed from the scored files of the curriculum stages."""
    out, _ = demo_run
    c = json.loads((out / "report.json").read_text())["curriculum"]
    import pyarrow.parquet as pq

    n_test = pq.read_metadata(out / "data" / "curriculum_test.parquet").num_rows
    assert c["n_heldout"] == n_test > 0 and c["n_episodes"] == 2
    assert set(c["stages"]) == set(CURRICULUM_STAGES)
    acc = {}
    for stage in CURRICULUM_STAGES:
        scored = [json.loads(x) for x in (out / "curriculum" / stage / "scored.jsonl").read_text().splitlines()]
        acc[stage] = [r["r1gui_accuracy"] for r in scored]
        s = c["stages"][stage]
        assert len(scored) == n_test and s["accuracy"] == pytest.approx(sum(acc[stage]) / n_test)
        lo, hi = s["ci95"]
        assert lo <= s["accuracy"] <= hi and 0.0 <= lo and hi <= 1.0
        fams = {r["id"].split("/")[1].rsplit("-", 1)[0] for r in scored}
        assert set(s["per_family"]) == fams and all(0.0 <= v <= 1.0 for v in s["per_family"].values())
        assert isinstance(s["diagnosis"], str) and s["diagnosis"]
    for run in GRPO_RUNS:
        g = c["gains"][f"grpo_{run}"]
        diff = [a - b for a, b in zip(acc[f"after_grpo_{run}"], acc["after_sft"], strict=True)]
        assert g["mean"] == pytest.approx(sum(diff) / n_test) and g["ci95"][0] <= g["mean"] <= g["ci95"][1]
        assert [step for step, _ in c["curves"][run]] == [2]  # one checkpoint (save_steps 2 of 2 steps)
    sft = CI_CONFIG["sft"]["overrides"]
    assert [step for step, _ in c["curves"]["sft"]] == list(range(sft["save_steps"], sft["max_steps"] + 1,
                                                                 sft["save_steps"]))
    assert set(c["online_success"]) == {"random", "after_sft", "after_grpo_best"}
    assert c["best_grpo_run"] in ("r1gui", "gaussian")
    assert "## Curriculum: does training work?" in (out / "report.md").read_text()


def _scored(path: Path) -> list[float]:
    return [json.loads(x)["r1gui_accuracy"] for x in path.read_text().splitlines()]


def test_sharpening_section(demo_run) -> None:
    """curriculum.sharpening (issue 40): the names scripts read, the numbers recomputed from the scored files, the
    start chosen among the SFT checkpoints by its validation band, prompts from layout seeds SFT never saw, and each
    run trained from the start."""
    import pyarrow.parquet as pq

    out, _ = demo_run
    sh = json.loads((out / "report.json").read_text())["curriculum"]["sharpening"]
    cfg = CI_CONFIG["sharpen"]
    assert sh["families"] == cfg["families"] and isinstance(sh["start"], str) and "step" in sh["start"]
    n_family = pq.read_metadata(out / "data" / "sharpen_test.parquet").num_rows
    assert sh["n_family_screens"] == n_family == cfg["test_tasks"] * cfg["instructions_per_screen"]
    assert sh["n_heldout"] == pq.read_metadata(out / "data" / "curriculum_test.parquet").num_rows
    assert set(sh["stages"]) == set(SHARPEN_STAGES)
    acc = {}
    for stage in SHARPEN_STAGES:
        acc[stage] = {part: _scored(out / "sharpen" / stage / part / "scored.jsonl") for part in ("family", "whole")}
        st = sh["stages"][stage]
        assert {"family_accuracy", "family_ci95", "accuracy", "ci95", "per_family"} <= set(st)
        assert st["family_accuracy"] == pytest.approx(sum(acc[stage]["family"]) / n_family)
        assert st["accuracy"] == pytest.approx(sum(acc[stage]["whole"]) / sh["n_heldout"])
        for key, value in (("family_ci95", st["family_accuracy"]), ("ci95", st["accuracy"])):
            assert 0.0 <= st[key][0] <= value <= st[key][1] <= 1.0
    assert set(sh["gains"]) == {"grpo", "grpo_shuffled", "more_sft"}
    for name, stage in (("grpo", "after_grpo"), ("grpo_shuffled", "after_grpo_shuffled"), ("more_sft", "after_more_sft")):
        for part, key in (("family", "family"), ("whole", "whole")):
            diff = [a - b for a, b in zip(acc[stage][part], acc["start"][part], strict=True)]
            g = sh["gains"][name][key]
            assert g["mean"] == pytest.approx(sum(diff) / len(diff)) and g["ci95"][0] <= g["mean"] <= g["ci95"][1]
        assert sh["stages"][stage]["cpu_s"] > 0  # the CPU time each run trained, for the compute match
    # The start: the SFT checkpoints answered the validation screens from the last back until one lay inside the band
    # (all of them when none did); the start is the latest inside, else the nearest to the band.
    choice = sh["start_choice"]
    sft = CI_CONFIG["sft"]["overrides"]
    saved = list(range(sft["save_steps"], sft["max_steps"] + 1, sft["save_steps"]))
    steps = [c[0] for c in choice["candidates"]]
    low, high = cfg["start_band"]
    inside = [c for c in choice["candidates"] if low <= c[1] <= high]
    assert steps == saved[len(saved) - len(steps):] and (len(steps) == len(saved) or len(inside) == 1)
    assert choice["step"] == (inside[0][0] if inside else min(choice["candidates"], key=lambda c: (
        max(low - c[1], c[1] - high), -c[0]))[0])
    assert choice["in_band"] == bool(inside) and choice["band"] == cfg["start_band"]
    # Prompts from layout seeds neither SFT nor the every-family GRPO took.
    seeds = {name: {int(i.split("/")[1].rsplit("-", 1)[1]) for i in pq.read_table(out / "data" / f"{name}.parquet",
                                                                                   columns=["id"])["id"].to_pylist()}
             for name in ("sharpen_train", "curriculum_train", "curriculum_grpo")}
    assert min(seeds["sharpen_train"]) > max(seeds["curriculum_train"] | seeds["curriculum_grpo"])
    # The runs trained: a reward per GRPO step (r1gui, 0..1), and every run moved the start's weights; the real run's
    # training reward rose (the same 5 prompts every step, so the steps compare like with like: its second half above
    # its first and above the shuffled control's second half).
    from safetensors.torch import load_file

    start = load_file(out / "models" / "sharpen" / "start" / "model.safetensors")
    for name in ("grpo", "grpo_shuffled", "more_sft"):
        trained = load_file(out / "models" / "sharpen" / name / "model.safetensors")
        assert set(trained) == set(start) and sum(not (trained[k] == start[k]).all() for k in start) >= len(start) // 2
    for name in ("grpo", "grpo_shuffled"):
        reward = sh["training_reward"][name]
        assert len(reward) == cfg["runs"][name]["max_steps"] and all(0.0 <= r <= 1.0 for r in reward)
    half = cfg["runs"]["grpo"]["max_steps"] // 2
    real, control = sh["training_reward"]["grpo"], sh["training_reward"]["grpo_shuffled"]
    assert sum(real[half:]) > sum(real[:half]) + 0.02 * half and sum(real[half:]) > sum(control[half:]), (real, control)
    for name in ("grpo", "grpo_shuffled", "more_sft"):
        assert sh["curves"][name][0] == [0, choice["val_family_accuracy"]] and len(sh["curves"][name]) >= 2
    md = (out / "report.md").read_text()
    assert "## Sharpening: GRPO from a partly trained start" in md
    # `make demo-seeds` reads the same numbers from the folder's files (its seeds build only the stages it reads).
    import seeds

    cur = json.loads((out / "report.json").read_text())["curriculum"]
    numbers = seeds.seed_numbers(out)
    assert {k: seeds.pick(numbers, path) for k, path in seeds.COLUMNS.items()} == {
        k: seeds.pick(cur, path) for k, path in seeds.COLUMNS.items()}
    assert all(seeds.pick(cur, path) is not None for path in seeds.COLUMNS.values())
    assert (out / "plots" / "sharpening_curves.png").stat().st_size > 1000


def test_learning_happened(demo_run) -> None:
    """SFT loss falls, the SFT model answers in the format more often than the untrained one, and every GRPO run
    moved the weights away from its SFT start."""
    from safetensors.torch import load_file

    out, _ = demo_run
    report = json.loads((out / "report.json").read_text())
    loss = [v for _, v in report["training"]["sft"]["loss"]]
    assert loss[-1] < 0.8 * loss[0]
    s = report["stages"]
    assert s["after_sft"]["valid_rate"] > s["before_sft"]["valid_rate"]
    sft = load_file(out / "models" / "sft" / "model.safetensors")
    for run in GRPO_RUNS:
        grpo = load_file(out / "models" / f"grpo_{run}" / "model.safetensors")
        assert set(grpo) == set(sft)
        changed = sum(not (grpo[k] == sft[k]).all() for k in sft)
        assert changed >= len(sft) // 2, run


def test_sft_checkpoint_hands_off_to_the_rl_env(demo_run) -> None:
    """LLaMA-Factory (its env's transformers) wrote models/sft-llamafactory; the rl env loads models/sft bit-exact."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForImageTextToText, AutoProcessor

    out, _ = demo_run
    written = {}
    for f in (out / "models" / "sft-llamafactory").glob("*.safetensors"):
        written.update(load_file(f))
    base = {}
    for f in (out / "models" / "base").glob("*.safetensors"):
        base.update(load_file(f))
    resaved = {}
    for f in (out / "models" / "sft").glob("*.safetensors"):
        resaved.update(load_file(f))
    assert written and set(resaved) == set(written)
    assert all(torch.equal(resaved[k], v) for k, v in written.items())
    model, info = AutoModelForImageTextToText.from_pretrained(out / "models" / "sft", dtype=torch.float32,
                                                             output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    # Every trained tensor is in the loaded model (module names differ from the file's keys in transformers 5).
    loaded = list(model.state_dict().values())
    assert all(any(p.shape == v.shape and torch.equal(p, v) for p in loaded) for v in written.values())
    # SFT changed the weights (the hand-off did not just copy the base model).
    assert any(not torch.equal(base[k], written[k]) for k in written if k in base)
    proc = AutoProcessor.from_pretrained(out / "models" / "sft")
    assert proc.image_processor.size == AutoProcessor.from_pretrained(out / "models" / "base").image_processor.size
    # ... and trl trained from it: GRPO wrote a model the same code loads.
    assert all((out / "models" / f"grpo_{r}" / "config.json").is_file() for r in GRPO_RUNS)


def test_rerun_of_a_finished_folder_reuses_every_stage(demo_run) -> None:
    out, first = demo_run
    again = _demo(out)  # the folder is finished: every stage is skipped and only the report is rewritten
    assert again.stdout.strip().splitlines()[-1] == str(out)
    assert again.stderr.count(" reused ") == N_STAGES and " done in " not in again.stderr
    # run1 reused the untrained stages and built the rest; nothing but its own lines from the frameworks
    demo_lines = [line for line in first.stderr.splitlines() if line.startswith("[demo]")]
    assert len(demo_lines) == N_STAGES and sum(" done in " in line for line in demo_lines) == N_STAGES - len(UNTRAINED)


@pytest.mark.repeat
def test_second_run_trains_the_same(demo_run, untrained) -> None:
    """``run2`` from the same model, data and untrained measurements builds only the trainings (and the checkpoint
    scan that picks the sharpening start): what run1 measures of its models is a function of the weights compared."""
    out, _ = demo_run
    run2, second = _run_from(untrained, "run2", "--only", *TRAININGS)
    demo_lines = [line for line in second.stderr.splitlines() if line.startswith("[demo]")]
    assert len(demo_lines) == len(TRAININGS) and all(" done in " in line for line in demo_lines)
    assert second.stdout == ""  # --only: no report
    # The same losses, rewards, validation answers of the scanned checkpoints, and weights, byte for byte.
    assert report.sft_loss_curve(out) == report.sft_loss_curve(run2) != []
    for name in (*GRPO_RUNS, "sharpen_grpo", "sharpen_grpo_shuffled"):
        funcs = (CI_CONFIG["grpo"]["runs"].get(name) or {}).get("reward_funcs")  # the Gaussian run's own parts
        parts = report.grpo_reward_parts(out, name, funcs)
        assert parts == report.grpo_reward_parts(run2, name, funcs) and all(parts.values()), name
    assert (out / "sharpen" / "start.json").read_text() == (run2 / "sharpen" / "start.json").read_text()
    for name in TRAINED_MODELS:
        a, b = ((o / "models" / name / "model.safetensors").read_bytes() for o in (out, run2))
        assert a == b, name
