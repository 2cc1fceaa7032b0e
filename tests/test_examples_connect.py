"""The docs' examples connect: `gui-agent infer --output <any name>` is scored by `experiments/guir1/eval.sh` /
`make eval` with `--benchmark NAME` (`EVAL_BENCHMARK=`), `gui-agent eval-compare` labels its columns with the run
names, and the folders the examples write into are git-ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = "androidcontrol_high"  # the simulated phone's held-out steps are scored as high-level navigation (make demo)


def gui_agent(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=cwd, capture_output=True, text=True,
                          check=False)


@pytest.fixture(scope="module")
def predictions(tmp_path_factory) -> dict[str, Path]:
    """`gui-agent infer --output pred.jsonl` of the two trivial baselines on held-out simulated-phone screens."""
    root = tmp_path_factory.mktemp("examples")
    steps = root / "heldout.parquet"
    r = gui_agent("world", "export", "--split", "test", "--n", "6", "--output", str(steps))
    assert r.returncode == 0, r.stderr
    runs = {}
    for model in ("centre", "random"):
        folder = root / model
        folder.mkdir()
        r = gui_agent("infer", "--backend", "baseline", "--model", model, "--input", str(steps), "--output",
                      str(folder / "pred.jsonl"))
        assert r.returncode == 0, r.stderr
        runs[model] = folder
    return runs


def rows(folder: Path) -> int:
    return len((folder / "pred.jsonl").read_text().splitlines())


def eval_sh(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "experiments/guir1/eval.sh", *args], cwd=REPO, capture_output=True, text=True,
                          check=False, env={**os.environ, "EVAL_ARGS": "--no-plots --no-gallery"})


def test_eval_sh_scores_any_file_name_with_benchmark(predictions, tmp_path):
    out = tmp_path / "eval"
    r = eval_sh(str(predictions["centre"]), str(out), "--benchmark", BENCH)
    assert r.returncode == 0, r.stderr[-2000:]
    for mode in ("strict", "guir1"):
        run = json.loads((out / mode / "report.json").read_text())
        assert run["name"] == "centre" and list(run["results"]) == [BENCH]
        assert run["results"][BENCH]["n_rows"] == rows(predictions["centre"]) > 0


def test_eval_sh_without_benchmark_says_how_to_name_the_file(predictions, tmp_path):
    r = eval_sh(str(predictions["centre"]), str(tmp_path / "eval"))
    assert r.returncode == 2
    assert "skipped pred.jsonl: not named like a benchmark's predictions (<benchmark>_test.json; or pass " \
           "--benchmark NAME)" in r.stdout
    assert "or any name with --benchmark NAME" in r.stderr
    r = eval_sh(str(predictions["centre"] / "pred.jsonl"))
    assert r.returncode == 2 and "is a file: pass its folder, and --benchmark NAME" in r.stderr
    r = eval_sh(str(predictions["centre"]), str(tmp_path / "eval"), "--benchmark", "nope")
    assert r.returncode == 2 and "--benchmark 'nope': unknown; known: screenspot" in r.stderr


def test_make_eval_takes_eval_benchmark(predictions, tmp_path):
    out = tmp_path / "eval"
    r = subprocess.run(["make", "-s", "-o", ".venvs/rl/.ready", "eval", f"PRED_DIR={predictions['random']}",
                        f"EVAL_OUT={out}", f"EVAL_BENCHMARK={BENCH}", "EVAL_MODES=strict"], cwd=REPO,
                       capture_output=True, text=True, check=False,
                       env={**os.environ, "EVAL_ARGS": "--no-plots --no-gallery"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((out / "strict" / "report.json").read_text())["results"][BENCH]["n_rows"] == \
        rows(predictions["random"]) > 0


def test_eval_compare_labels_columns_with_the_run_names(predictions, tmp_path):
    reports = {}
    for model, folder in predictions.items():
        r = eval_sh(str(folder), str(tmp_path / model), "--benchmark", BENCH)
        assert r.returncode == 0, r.stderr[-2000:]
        reports[model] = tmp_path / model / "strict" / "report.json"
    md = tmp_path / "compare.md"
    r = gui_agent("eval-compare", str(reports["centre"]), str(reports["random"]), "--markdown", str(md))
    assert r.returncode == 0, r.stderr
    assert "centre vs random" in r.stdout
    assert md.read_text().splitlines()[0].split("|")[1:-1] == [" Benchmark ", " Metric ", " centre ", " random ",
                                                                " Δ "]
    # Two runs of one name (two checkpoints both called `huggingface`) are told apart by their files.
    same = gui_agent("eval-compare", str(reports["centre"]), str(reports["centre"]), "--markdown", str(md),
                     "--overwrite")
    assert same.returncode == 0
    assert md.read_text().splitlines()[0].split("|")[3:5] == [f" {reports['centre']} "] * 2


def test_eval_names_a_single_file_run_after_its_file(predictions, tmp_path):
    md = tmp_path / "t.md"
    r = gui_agent("eval", "--predictions", str(predictions["centre"] / "pred.jsonl"), "--benchmark", BENCH,
                  "--markdown", str(md))
    assert r.returncode == 0, r.stderr
    assert "\n| pred | " in md.read_text() and "- pred / AndroidControl-High: n=" in md.read_text()
    r = gui_agent("eval", "--predictions", str(predictions["centre"] / "pred.jsonl"), "--benchmark", BENCH,
                  "--markdown", str(md), "--json", str(tmp_path / "centre-baseline.json"), "--overwrite")
    assert r.returncode == 0 and "\n| centre-baseline | " in md.read_text()  # the name eval-compare gives it


@pytest.mark.parametrize("path", [
    "out/aitz.parquet", "smoke/vlmr1/aitz.hf/data.arrow", "tiny/config.json", "outputs/guir1/predictions/x.json",
    "saves/Qwen2.5-VL-3B-Instruct/gui-r1-3k/llamafactory/adapter_model.safetensors", "runs/x/events.out",
    "Data/verl/gui-r1-3k/train.parquet", "LLaMA-Factory/data/gui-r1-3k/x.json", "checkpoints/run/global_step_1/x",
    "ckpt/config.json", "output/v0-20260101/checkpoint-1/x", "wandb/run-1/x", "pred.json", "scored.jsonl",
    "mw.parquet"])
def test_example_outputs_are_git_ignored(path):
    r = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=REPO, check=False)
    assert r.returncode == 0, f"{path} is not ignored"


def test_no_tracked_file_is_ignored():
    r = subprocess.run(["git", "ls-files", "-ci", "--exclude-standard"], cwd=REPO, capture_output=True, text=True,
                       check=True)
    assert r.stdout == ""
