"""ms-swift GRPO recipe (``ms-swift/examples/grpo.sh``, ``make grpo-swift``).

* With a stand-in ``$SWIFT`` the script passes the recipe file first (expanded by swift's own ``parse_yaml_args``:
  only flags of swift's ``RLHFArguments``, GUI-R1's / VLM-R1's values, the pixel bounds in its ENV), the plugin by
  absolute path, and the caller's arguments last.
* ``make grpo-swift`` calls the script with the rl env's ``swift``, the model's recipe, ``--use_hf true`` and, on a
  machine without CUDA, the CPU-safe settings.
* On real screenshots from ``../shared/data`` (two AitZ steps + two ScreenSpot web rows, exported with
  ``--to swift`` at the tiny model's 200,704-pixel bound) ``make grpo-swift`` with the GUI-R1 recipe trains the tiny
  random Qwen2.5-VL for 2 GRPO steps on CPU: it exits 0, swift logged both reward names with finite values in
  [0, 1] at every step, the generation prompts end at the assistant turn without the exported gold answer, and
  checkpoint-2 loads back.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
SCRIPT = REPO / "ms-swift" / "examples" / "grpo.sh"
PLUGIN = REPO / "ms-swift" / "plugin" / "gui_rewards.py"
RL_BIN = REPO / ".venvs" / "rl" / "bin"
RECIPES = REPO / "recipes" / "qwen2_5_vl_3b" / "grpo"
TINY_MAX_PIXELS = 200_704
REWARDS = ["r1gui_format", "r1gui_accuracy"]
OFFLINE_ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false"}


def _flags(argv: list[str]) -> dict[str, list[str]]:
    """``rlhf RECIPE.yaml --a 1 --b x y`` -> {"a": ["1"], "b": ["x", "y"]}, the recipe expanded by swift's own
    ``parse_yaml_args`` (its ENV block lands in os.environ); a later occurrence wins, as in argparse."""
    from swift.cli.main import parse_yaml_args

    assert argv[0] == "rlhf", argv[:1]
    argv = argv[1:]
    parse_yaml_args(argv)
    flags: dict[str, list[str]] = {}
    name = None
    for arg in argv:
        if arg.startswith("--"):
            name = arg[2:]
            flags[name] = []
        else:
            assert name is not None, arg
            flags[name].append(arg)
    return flags


def _invoke(tmp_path: Path, *args: str, recipe: str | None = None) -> dict[str, list[str]]:
    """Run the script with a stand-in ``$SWIFT`` that records its argv instead of training."""
    record = tmp_path / "argv.json"
    shim = tmp_path / "fake_swift"
    shim.write_text(f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n")
    shim.chmod(0o755)
    env = {**OFFLINE_ENV, "SWIFT": str(shim), "DATASET": "data/x.jsonl", **({"RECIPE": recipe} if recipe else {})}
    subprocess.run(["bash", str(SCRIPT), *args], check=True, env=env, cwd=tmp_path)
    return _flags(json.loads(record.read_text()))


#: Published values in swift's flag names: GUI-R1 (icey-zhang/GUI-R1 @ 0ec02be examples/config.yaml + 3B script)
#: and VLM-R1 (om-ai-lab/VLM-R1 @ 90052f4 run_scripts/run_grpo_rec.sh + its GRPOConfig defaults).
PUBLISHED = {
    "config_guir1_swift": {"num_generations": "5", "temperature": "1.0", "max_completion_length": "1024",
                           "beta": "0.01", "learning_rate": "1e-06", "weight_decay": "0.01", "max_grad_norm": "1.0",
                           "lr_scheduler_type": "constant", "warmup_ratio": "0.0", "max_length": "2048",
                           "num_train_epochs": "15", "save_steps": "5", "save_total_limit": "3", "seed": "1",
                           "freeze_vit": "False", "vllm_gpu_memory_utilization": "0.6", "tuner_type": "full"},
    "config_vlmr1_swift": {"num_generations": "8", "temperature": "0.9", "max_completion_length": "2048",
                           "beta": "0.04", "learning_rate": "1e-06", "per_device_train_batch_size": "8",
                           "gradient_accumulation_steps": "2", "num_train_epochs": "2", "save_steps": "100",
                           "data_seed": "42", "deepspeed": "configs/deepspeed/ds_z3_config.json"},
}
PIXELS = {"config_guir1_swift": ("262144", "1258291"), "config_vlmr1_swift": ("3136", "12845056")}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_script_passes_the_recipes_known_rlhf_flags_and_published_values(tmp_path, monkeypatch, name):
    pytest.importorskip("swift")
    from swift.arguments import RLHFArguments

    for key in ("MIN_PIXELS", "MAX_PIXELS", "GUI_REWARD_OPTIONS"):
        monkeypatch.delenv(key, raising=False)
    known = {f.name for f in dataclasses.fields(RLHFArguments)}
    flags = _invoke(tmp_path, "--max_steps", "7", "--beta", "0.02", recipe=str(RECIPES / f"{name}.yaml"))
    assert set(flags) <= known, set(flags) - known
    assert (os.environ["MIN_PIXELS"], os.environ["MAX_PIXELS"]) == PIXELS[name]
    one = {k: v[-1] for k, v in flags.items() if v}
    assert one["rlhf_type"] == "grpo" and one["template"] == "qwen2_5_vl" and one["dataset"] == "data/x.jsonl"
    assert flags["reward_funcs"] == REWARDS
    drift = {k: (one.get(k), v) for k, v in PUBLISHED[name].items() if one.get(k) != v and k != "beta"}
    assert not drift, drift
    # Run from another folder: the plugin path still resolves to the repository's file.
    assert Path(one["external_plugins"]) == PLUGIN and Path(one["external_plugins"]).is_file()
    if name == "config_guir1_swift":
        assert flags["reward_weights"] == ["0.2", "0.8"] and json.loads(os.environ["GUI_REWARD_OPTIONS"]) == {"mode": "guir1"}
        # 8 GPUs: 640 completions per update (128 prompts x 5), 2560 per rollout (512 x 5).
        per_gpu = int(one["per_device_train_batch_size"])
        assert 8 * per_gpu * int(one["gradient_accumulation_steps"]) == 128 * 5
        assert 8 * per_gpu * int(one["steps_per_generation"]) == 512 * 5
        assert (one["torch_dtype"], one["bf16"]) == ("float32", "True")  # fp32 master weights, bf16 compute
    # Arguments after the script name come last and win.
    assert one["max_steps"] == "7" and one["beta"] == "0.02"


def test_script_requires_dataset(tmp_path):
    env = {k: v for k, v in OFFLINE_ENV.items() if k != "DATASET"}
    proc = subprocess.run(["bash", str(SCRIPT)], env={**env, "SWIFT": "false"}, cwd=REPO, check=False,
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "DATASET" in proc.stderr


def test_make_grpo_swift_calls_the_script_with_the_rl_env():
    def dry_run(*args: str) -> str:
        proc = subprocess.run(["make", "-n", "-o", ".venvs/rl/.ready", "grpo-swift", "HAS_CUDA=", *args], cwd=REPO,
                              check=False, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    out = dry_run("MODEL=Qwen/Qwen3-VL-4B-Instruct", "SWIFT_GRPO_DATA=d.jsonl", "ARGS=--max_steps 3",
                  f"SWIFT_GRPO_RECIPE={RECIPES / 'config_vlmr1_swift.yaml'}")
    assert "SWIFT=.venvs/rl/bin/swift bash ms-swift/examples/grpo.sh --use_hf true" in out
    assert "MODEL=Qwen/Qwen3-VL-4B-Instruct" in out and "DATASET=d.jsonl" in out and "TEMPLATE=qwen3_vl" in out
    assert out.rstrip().endswith("--max_steps 3") and "config_vlmr1_swift.yaml" in out
    out = dry_run()
    assert "RECIPE=recipes/qwen2_5_vl_3b/grpo/config_guir1_swift.yaml" in out
    assert "DATASET=Data/swift/gui-r1-3k.jsonl" in out and "TEMPLATE=qwen2_5_vl" in out
    # No CUDA (HAS_CUDA empty, as nvidia-smi finds no GPU): the CPU-safe settings, said in one line.
    assert "--torch_dtype float32 --bf16 false --dataloader_num_workers 0 --dataset_num_proc 1" in out
    assert "--use_vllm true --vllm_mode colocate" in dry_run("HAS_CUDA=1")
    assert "no CUDA GPU found: CPU-safe settings" in out


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> tuple[Path, list[dict]]:
    """Two AitZ steps + two ScreenSpot web rows exported for swift; returns the JSONL and its rows."""
    if not DATA.is_dir():
        pytest.skip(f"shared data folder {DATA} is absent")
    from core.data.export import EXPORTERS, ExportOptions
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary

    aitz = iter(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    web = iter(READERS["screenspot"](DATA / "screenspot" / "screenspot_v1_annotations.jsonl",
                                images_dir=DATA / "screenspot" / "images", skip_missing=True,
                                summary=ConversionSummary()))
    steps = [next(aitz), next(aitz), next(web), next(web)]
    summary = ConversionSummary()
    out = tmp_path_factory.mktemp("swift")
    path = EXPORTERS["swift"](iter(steps), out, options=ExportOptions(name="gui", max_pixels=TINY_MAX_PIXELS),
                              summary=summary)
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    assert summary.written == len(rows) == 4 and summary.n_skipped == 0
    return Path(path), rows


#: An ORM plugin whose reward differs between any two random completions: the mean code point / 0x110000.
TEXT_REWARD_PLUGIN = """from swift.rewards import ORM, orms


class mean_code_point(ORM):
    def __call__(self, completions, **kwargs):
        return [sum(map(ord, c)) / len(c) / 0x110000 if c else 0.0 for c in completions]


orms["mean_code_point"] = mean_code_point
"""


@pytest.mark.slow
@pytest.mark.rl_env
@pytest.mark.skipif(not (RL_BIN / "swift").exists(), reason="needs .venvs/rl with ms-swift")
def test_grpo_script_trains_two_steps_on_cpu(export, tmp_path):
    from core.testing import max_weight_change, tiny_qwen25vl_path

    dataset, rows = export
    out = tmp_path / "out"
    # The random model scores 0 on both r1gui parts, so every advantage would be 0 and nothing could move: a text
    # reward that differs between completions (an extra ORM plugin) gives the update a gradient.
    text_plugin = tmp_path / "mean_code_point.py"
    text_plugin.write_text(TEXT_REWARD_PLUGIN)
    # The README's CPU smoke command: make adds fp32, workers 0, no vLLM and --use_hf true by itself; the smoke
    # sizes shrink the GUI-R1 recipe to 2 steps of 2 generations of 16 tokens; the pixel bounds follow the export.
    smoke = ("--max_steps 2 --num_generations 2 --per_device_train_batch_size 2 --gradient_accumulation_steps 1 "
             "--steps_per_generation 1 --max_completion_length 16 --gradient_checkpointing false --save_steps 2 "
             f"--check_model false --add_version false --external_plugins {PLUGIN} {text_plugin} "
             f"--reward_funcs {' '.join(REWARDS)} mean_code_point --reward_weights 0.2 0.8 1.0")
    env = {**OFFLINE_ENV, "MAX_PIXELS": str(TINY_MAX_PIXELS), "MIN_PIXELS": "3136", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(["make", "-o", ".venvs/rl/.ready", "grpo-swift", f"MODEL={tiny_qwen25vl_path()}",
                           f"SWIFT_GRPO_RECIPE={RECIPES / 'config_guir1_swift.yaml'}", f"SWIFT_GRPO_DATA={dataset}",
                           f"SWIFT_GRPO_OUTPUT={out}", f"ARGS={smoke}"],
                          capture_output=True, text=True, env=env, cwd=REPO, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]

    state = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    assert state["global_step"] == 2
    logs = [log for log in state["log_history"] if "loss" in log]
    assert [log["step"] for log in logs] == [1, 2]
    for log in logs:
        for name in REWARDS:
            # swift names the metric after the ORM class, which the plugin names after the reward
            [key] = [k for k in log if re.fullmatch(rf"rewards/{name}/mean", k)]
            assert math.isfinite(log[key]) and 0.0 <= log[key] <= 1.0, (key, log[key])
        assert math.isfinite(log["loss"]) and log["completions/mean_length"] > 0
    swift_log = [json.loads(line) for line in (out / "logging.jsonl").open()]
    assert [e["global_step/max_steps"] for e in swift_log if "reward" in e] == ["1/2", "2/2"]

    # Generation prompts: the export's user turn up to the assistant header; the gold answer is only the solution.
    solutions = {row["solution"] for row in rows}
    logged = [json.loads(line) for line in (out / "completions.jsonl").open()]
    assert logged
    for entry in logged:
        for prompt, solution in zip(entry["prompt"], entry["solution"], strict=True):
            assert prompt.endswith("<|im_start|>assistant\n") and solution in solutions
            assert solution not in prompt

    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(out / "checkpoint-2")
    assert model.config.model_type == "qwen2_5_vl"
    # AdamW moves every weight with a gradient by about the learning rate (1e-6) at step 1; all-zero gradients: ~0
    assert max_weight_change(tiny_qwen25vl_path(), out / "checkpoint-2") > 0.5 * logs[0]["learning_rate"]
