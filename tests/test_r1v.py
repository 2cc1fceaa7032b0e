"""R1-V-GUI-agent's recipe (``experiments/r1v/``): published values, rewards, data preparation, training, evaluation.

Published source: github.com/kokolerk/R1-V-GUI-agent @ ee820b2 (README run command, scripts/run_grpo_gui.sh,
r1-v/src/open_r1/grpo_gui.py, eval/test_aitw.py, dataset/raw_load_data.py). No Aguvis file ships in
``../shared/data``, so the Aguvis stage-2 records are written from the real AitZ episode there, in Aguvis' layout
(``conversations`` = system, human with ``Instruction:`` / ``Previous actions:``, gpt low-level action, gpt call
with ``recipient: os``), with its real screenshots and actions.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from core.eval.aitw import _CALL, split_call
from core.rewards.r1v import FORMAT_PATTERN, r1v_score, think_format

REPO = Path(__file__).resolve().parents[1]
R1V = REPO / "experiments" / "r1v"
RECIPE = REPO / "recipes" / "aguvis_7b_720p" / "grpo" / "config_r1v_trl.yaml"
AITZ = REPO.parent / "shared" / "data" / "aitz" / "GOOGLE_APPS-523638528775825151"
needs_data = pytest.mark.skipif(not AITZ.is_dir(), reason=f"shared data folder {AITZ} is absent")

#: The published values (README "GRPO" command / run_grpo_gui.sh) the recipe must carry.
PUBLISHED = {"max_completion_length": 2048, "gradient_accumulation_steps": 4,
             "learning_rate": 1e-6, "lr_scheduler_type": "constant", "num_train_epochs": 2, "num_generations": 8,
             "temperature": 1.0, "bf16": True, "gradient_checkpointing": True, "logging_steps": 1,
             "save_steps": 200, "save_total_limit": 3, "save_only_model": True,
             "reward_funcs": ["r1v_accuracy", "r1v_format"]}


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------------------------------ recipe


def test_recipe_holds_the_published_values():
    recipe = yaml.safe_load(RECIPE.read_text())
    assert {k: recipe[k] for k in PUBLISHED} == PUBLISHED
    assert recipe["beta"] == 0.04 and recipe["loss_type"] == "grpo"  # trl 0.14.0 defaults, R1-V's pin
    # R1-V's --per_device_train_batch_size 1 counts prompts (trl 0.14); trl 0.29 counts completions
    assert recipe["per_device_train_batch_size"] == 1 * PUBLISHED["num_generations"]
    assert (recipe["min_pixels"], recipe["max_pixels"]) == (3136, 501_760)
    text = (R1V / "train.sh").read_text()
    assert "NPROC=${NPROC:-8}" in text and "ATTN=${ATTN-flash_attention_2}" in text
    ds = json.loads((REPO / recipe["deepspeed"]).read_text())
    assert ds["zero_optimization"]["stage"] == 1 and "offload_optimizer" not in ds["zero_optimization"]


def test_recipe_composes_with_grpo_script(tmp_path):
    """Every recipe key is a flag of VLM-R1/grpo.py (trl's parser rejects unknown keys) and reaches GRPOConfig."""
    pytest.importorskip("trl")
    from trl import TrlParser

    grpo = _module("vlmr1_grpo_r1v", REPO / "VLM-R1" / "grpo.py")
    from trl import GRPOConfig

    parser = TrlParser((grpo.ScriptArguments, GRPOConfig))
    script, config = parser.parse_args_and_config(
        ["--config", str(RECIPE), "--model_name_or_path", "m", "--dataset", "d", "--deepspeed", "",
         "--output_dir", str(tmp_path), "--reward_funcs", "r1v_accuracy", "--bf16", "false"])
    for key, value in PUBLISHED.items():
        if key not in ("reward_funcs", "bf16"):
            assert getattr(config, key) == value, key
    assert config.lr_scheduler_type.value == "constant" and config.beta == 0.04
    assert script.reward_funcs == ["r1v_accuracy"]  # the think-format-off switch overrides the recipe
    assert [f.__name__ for f in grpo.load_reward_funcs(["r1v_accuracy", "r1v_format"])] == ["r1v_accuracy",
                                                                                          "r1v_format"]


# ----------------------------------------------------------------------------------------------- rewards

GOLD = "<answer>pyautogui.click(x=0.607, y=0.498)</answer>"


@pytest.mark.parametrize("completion, accuracy, fmt", [
    ("pyautogui.click(x=0.607, y=0.498)", 1.0, 0.0),
    ("pyautogui.click(x=0.6, y=0.498)", 0.5, 0.0),  # same name, other parameters
    ("pyautogui.write(message='clock')", 0.0, 0.0),
    ("content: screen\nThought: the Clock icon\nAction: tap it\nassistantos pyautogui.click(x=0.607, y=0.498)",
     1.0, 0.5),
    ("Thought: x\nAction: y\nassistantos\npyautogui.click(x=0.607, y=0.498)", 1.0, 0.0),  # no leading 'content:'
    ("<answer>pyautogui.click(x=0.607, y=0.498)</answer>", 0.0, 0.0),  # published quirk: name '<answer>pyautogui.click'
    ("I would tap the clock.", 0.0, 0.0),
    ("", 0.0, 0.0),
])
def test_r1v_reward_is_the_published_one(completion, accuracy, fmt):
    out = r1v_score(completion, GOLD)
    assert (out["accuracy"], out["format"], out["overall"]) == (accuracy, fmt, accuracy + fmt)


def test_r1v_reward_quirks_and_bad_ground_truth():
    assert r1v_score("mobile.home()", "<answer>mobile.home()</answer>")["accuracy"] == 0.0  # empty () never splits
    from core.rewards.common import RewardInputError

    with pytest.raises(RewardInputError, match="solution"):
        r1v_score("pyautogui.click(x=1, y=1)", {"gt_action": "click"})


def test_think_format_decides_the_published_regex():
    rng = random.Random(0)
    pieces = ["content:", "Thought:", "Action:", "assistantos", " ", "\n", "x", "Thought", "content", ":"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))
        assert think_format(text) == bool(FORMAT_PATTERN.fullmatch(text)), text


def test_split_call_is_the_published_pattern_in_linear_time():
    rng = random.Random(1)
    for _ in range(50_000):
        text = "".join(rng.choice("ab(()\n x=,.") for _ in range(rng.randint(0, 12)))
        m = _CALL.search(text.strip())
        assert split_call(text) == ((m.group(1), m.group(2)) if m else None), text
    for text in ("a(" * 20_000, "word " * 20_000, "content: Thought: Action: " * 1300):
        t = time.thread_time()  # CPU time of this thread: the work, not the wait for a busy machine's cores
        r1v_score(text[:32_768], GOLD)
        assert time.thread_time() - t < 0.05


# -------------------------------------------------------------------------------------------------- data

SYSTEM = "You are a GUI agent. You are given a task and a screenshot of the screen."


def _aguvis_call(step: dict) -> str:
    kind = step["result_action_type"]
    ty, tx = json.loads(step["result_touch_yx"])
    ly, lx = json.loads(step["result_lift_yx"])
    if kind == 6:
        return "mobile.home()"
    if kind == 10:
        return "mobile.terminate(status='success')"
    if math.hypot(ty - ly, tx - lx) < 0.04:
        return f"pyautogui.click(x={tx:.4f}, y={ty:.4f})"
    return f"mobile.swipe(from_coord=[{tx:.4f}, {ty:.4f}], to_coord=[{lx:.4f}, {ly:.4f}])"


@pytest.fixture(scope="module")
def aguvis(tmp_path_factory) -> Path:
    """An Aguvis stage-2 aitw-l1.json of the real AitZ episode, repeated 5 times (20 records) + one bad record."""
    root = tmp_path_factory.mktemp("aguvis")
    steps = json.loads((AITZ / f"{AITZ.name}.json").read_text())
    records = []
    for _ in range(5):
        for i, step in enumerate(steps):
            previous = "\n".join(f"Step {k + 1}: {s['coat_action_desc']}" for k, s in enumerate(steps[:i]))
            human = ("<image>\nPlease generate the next move according to the UI screenshot, instruction and "
                     f"previous actions.\n\nInstruction: {step['instruction']}\n\nPrevious actions:\n{previous}")
            records.append({"image": Path(step["image_path"]).name, "conversations": [
                {"from": "system", "value": SYSTEM}, {"from": "human", "value": human},
                {"from": "gpt", "value": f"Action: {step['coat_action_desc']}", "recipient": "all", "end_turn": False},
                {"from": "gpt", "value": _aguvis_call(step), "recipient": "os", "end_turn": True}]})
    records.append({"image": "missing.png", "conversations": records[0]["conversations"]})
    (root / "aitw-l1.json").write_text(json.dumps(records))
    return root


@needs_data
def test_prepare_samples_reproducibly_with_r1v_columns(aguvis, tmp_path):
    pytest.importorskip("datasets")
    import datasets
    from PIL import Image

    from core.geometry import smart_resize

    prep = _module("r1v_prepare", R1V / "prepare_data.py")
    out, n, summary = prep.prepare(aguvis / "aitw-l1.json", tmp_path / "a", images=AITZ, samples=6, seed=3)
    assert n == 6 and summary.skipped == {"missing image": 1} and out.name == "aitw-l1-6.hf"
    again, _, _ = prep.prepare(aguvis / "aitw-l1.json", tmp_path / "b", images=AITZ, samples=6, seed=3)
    other, _, _ = prep.prepare(aguvis / "aitw-l1.json", tmp_path / "c", images=AITZ, samples=6, seed=4)
    a, b, c = (datasets.load_from_disk(str(p)) for p in (out, again, other))
    assert a["id"] == b["id"] and a["id"] != c["id"]
    assert a["id"] == sorted(a["id"], key=lambda i: int(i.rsplit(":", 1)[1]))  # input order kept

    records = json.loads((aguvis / "aitw-l1.json").read_text())
    row = a[0]
    rec = records[int(row["id"].rsplit(":", 1)[1])]["conversations"]
    assert row["problem"] == rec[1]["value"] and row["solution"] == f"<answer>{rec[3]['value']}</answer>"
    assert row["ground_truth"] == row["solution"]
    assert row["prompt"][0]["content"] == prep.QUESTION_TEMPLATE.format(
        Question=rec[1]["value"].removeprefix("<image>").strip())
    rh, rw = smart_resize(600, 270, min_pixels=3136, max_pixels=501_760)
    assert isinstance(row["image"], Image.Image) and row["image"].size == (rw, rh) == (280, 588)
    assert row["extra_info"]["image_size"] == [270, 600] and row["extra_info"]["resized_size"] == [280, 588]

    everything, n, _ = prep.prepare(aguvis / "aitw-l1.json", tmp_path / "d", images=AITZ, samples=100, seed=0)
    assert n == 20
    calls = {s for s in datasets.load_from_disk(str(everything))["solution"]}
    assert calls == {f"<answer>{_aguvis_call(s)}</answer>" for s in json.loads((AITZ / f"{AITZ.name}.json").read_text())}


def test_sampling_is_uniform():
    prep = _module("r1v_prepare", R1V / "prepare_data.py")
    counts = [0] * 200
    for seed in range(500):
        sample = prep.sample_steps(range(200), 20, seed)
        assert len(sample) == 20 and sample == sorted(sample)
        for i in sample:
            counts[i] += 1
    assert all(0.1 - 0.05 < c / 500 < 0.1 + 0.05 for c in counts)


# ------------------------------------------------------------------------------------ training, evaluation


@pytest.fixture(scope="module")
def prepared(aguvis, tmp_path_factory) -> Path:
    pytest.importorskip("datasets")
    prep = _module("r1v_prepare", R1V / "prepare_data.py")
    out, _, _ = prep.prepare(aguvis / "aitw-l1.json", tmp_path_factory.mktemp("r1v"), images=AITZ, samples=4, seed=0)
    return out


def _env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false", "WANDB_DISABLED": "true", "PYTHON": sys.executable}


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("think", ["1", "0"])
def test_train_script_runs_two_steps_on_cpu(prepared, tmp_path, think):
    """train.sh with the recipe, CPU overrides only: think format on logs both R1-V rewards, off only accuracy."""
    from core.testing import tiny_qwen25vl_path

    out = tmp_path / "run"
    env = {**_env(), "MODEL": str(tiny_qwen25vl_path()), "DATA": str(prepared), "THINK_FORMAT": think,
           "OUTPUT_DIR": str(out), "NPROC": "1", "DS_CONFIG": "", "ATTN": ""}  # CPU: no DeepSpeed, no flash-attn
    cmd = ["bash", str(R1V / "train.sh"), "--max_steps", "2", "--num_generations", "2",
           "--per_device_train_batch_size", "2", "--gradient_accumulation_steps", "1", "--max_completion_length", "16",
           "--bf16", "false", "--use_cpu", "true", "--save_steps", "2", "--dataloader_num_workers", "0"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    state = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    logs = [log for log in state["log_history"] if "loss" in log]
    assert [log["step"] for log in logs] == [1, 2]
    rewards = {k for log in logs for k in log if re.fullmatch(r"rewards/.+/mean", k)}
    assert rewards == ({"rewards/r1v_accuracy/mean", "rewards/r1v_format/mean"} if think == "1"
                       else {"rewards/r1v_accuracy/mean"})
    assert all(0.0 <= log[k] <= 1.0 for log in logs for k in rewards)
    assert (out / "training_log.txt").stat().st_size > 0 and (out / "model.safetensors").is_file()


@needs_data
@pytest.mark.slow
def test_evaluate_predicts_resumes_and_scores(prepared, tmp_path):
    from core.testing import tiny_qwen25vl_path

    out = tmp_path / "eval"
    cmd = [sys.executable, str(R1V / "evaluate.py"), "--model", str(tiny_qwen25vl_path()), "--dataset", str(prepared),
           "--output", str(out), "--batch-size", "2", "--max-new-tokens", "8"]
    proc = subprocess.run([*cmd, "--limit", "3"], cwd=REPO, env=_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 3
    proc = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == len({r["id"] for r in rows}) == 4 and all(isinstance(r["pred"], str) for r in rows)
    metrics = _aitw_metrics(json.loads((out / "report.json").read_text()))
    assert set(metrics) >= {"type", "param", "sr"} and all(0.0 <= metrics[k] <= 1.0 for k in ("type", "param", "sr"))

    # the same scoring on gold answers: R1-V's type and parameter accuracy are 100 %
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({**r, "pred": r["solution"].removeprefix("<answer>").removesuffix("</answer>")})
                            + "\n" for r in rows))
    proc = subprocess.run([sys.executable, "-m", "core", "eval", "--predictions", str(gold), "--benchmark", "aitw",
                           "--json", str(tmp_path / "gold.json")], cwd=REPO, env=_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    metrics = _aitw_metrics(json.loads((tmp_path / "gold.json").read_text()))
    splits = sum(split_call(r["solution"][len("<answer>"):-len("</answer>")]) is not None for r in rows) / 4
    assert metrics["type"] == metrics["param"] == splits  # all but mobile.home(): empty () never splits (R1-V)


def _aitw_metrics(report) -> dict:
    """The ``metrics`` dict of the aitw result inside an eval report."""
    if isinstance(report, dict):
        if "param" in report.get("metrics", {}):
            return report["metrics"]
        report = list(report.values())
    for value in report if isinstance(report, list) else []:
        if isinstance(value, (dict, list)) and (found := _aitw_metrics(value)):
            return found
    return {}
