"""verl 0.9.1 trains on CPU, through verl's own trainer (``python -m verl.trainer.main_ppo``, launched by the make
targets through ``verl/main_ppo.sh``) with this project's ``cpu`` platform and ``hf`` rollout (``verl/plugins``):

- GUI-R1's recipe, ``make grpo-verl`` with the tiny Qwen2.5-VL on AitZ rows from ../shared: two optimizer steps,
  every per-step metric docs/grpo-verl.md names present and finite, the rollout's log-probs equal to the actor's
  recomputed ones (verl's own comparison), the actor's weights changed, the FSDP checkpoint merged by
  ``python -m verl.model_merger`` and answering ``gui-agent infer --backend hf``;
- the mobile-agent recipe, ``make grpo-verl-agent AGENT_DEVICE=cpu`` with the tiny Qwen3-VL on ``make
  gui-agent-data`` rows: episodes in the simulated phone through the ``mobile_use`` tool and the ``gui_agent``
  loop, two optimizer steps and the per-step ``gui_agent/*`` metrics.

Recipes' rewards are 0 for a random model's answers, so the two recipe runs add an entropy bonus
(``actor.entropy_coeff``) and a larger learning rate: the update then reaches the weights, which is what those runs
check (a verl GRPO sign test, learning from a reward, is not here yet). No wall-clock limit is asserted (a busy machine is slower,
not wrong); the subprocess timeouts only stop a hung run."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.rl_env, pytest.mark.slow]

torch = pytest.importorskip("torch")
pytest.importorskip("verl")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
       "TOKENIZERS_PARALLELISM": "false", "RAY_DEDUP_LOGS": "0"}
ENV.pop("VERL_PLATFORM", None)  # the launcher decides, as for a user
#: A hung run is stopped after this; it is no speed requirement.
HANG = 3600

#: Per-step metrics docs/grpo-verl.md names for `make grpo-verl` (checked present and finite at every step).
GUIR1_METRICS = (
    "critic/score/mean", "reward/format/mean", "reward/accuracy/mean", "actor/pg_loss", "actor/kl_loss",
    "actor/entropy", "actor/grad_norm", "actor/lr", "response_length/mean", "prompt_length/mean",
    "training/rollout_probs_diff_max", "timing_s/step", "timing_s/gen", "timing_s/old_log_prob", "timing_s/ref",
    "timing_s/update_actor", "timing_s/update_weights")
#: ... and docs/verl-agent.md for `make grpo-verl-agent` (its reward parts, per step).
AGENT_METRICS = ("critic/score/mean", "actor/pg_loss", "actor/kl_loss", "actor/entropy", "actor/grad_norm",
                 "num_turns/mean", "response_length/mean", "training/rollout_probs_diff_max", "timing_s/step",
                 *(f"gui_agent/{part}/mean" for part in ("type", "coord", "text", "format", "success", "turns",
                                                         "invalid", "tool_calls")))
FAST_ARGS = ["trainer.total_training_steps=2", "trainer.save_freq=2", "actor_rollout_ref.actor.entropy_coeff=0.01",
             "actor_rollout_ref.actor.optim.lr=1e-3"]


def step_metrics(output: str) -> dict[int, dict[str, float]]:
    """The metrics of each training step verl's console logger printed (``step:N - key:value - ...``)."""
    steps: dict[int, dict[str, float]] = {}
    for line in output.splitlines():
        match = re.search(r"\bstep:(\d+) - (.*)$", line)
        if not match:
            continue
        metrics = steps.setdefault(int(match.group(1)), {})
        for part in match.group(2).split(" - "):
            key, _, value = part.partition(":")
            value = re.sub(r"^np\.\w+\((.*)\)$", r"\1", value.strip())
            try:
                metrics[key.strip()] = float(value)
            except ValueError:
                continue
    return steps


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=REPO, env={**ENV, **kwargs.pop("env", {})}, capture_output=True, text=True,
                          timeout=HANG, **kwargs)
    return proc


def assert_trained(proc: subprocess.CompletedProcess, names: tuple[str, ...]) -> dict[int, dict[str, float]]:
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "no CUDA GPU found: verl on CPU" in output
    steps = step_metrics(output)
    assert sorted(steps) == [1, 2], sorted(steps)
    for step, metrics in steps.items():
        missing = [name for name in names if name not in metrics]
        assert not missing, (step, missing)
        assert all(math.isfinite(metrics[name]) for name in names), {n: metrics[n] for n in names}
        # the on-policy check: verl compares the rollout's log-probs with the actor's recomputed ones
        assert metrics["training/rollout_probs_diff_max"] < 1e-3, metrics["training/rollout_probs_diff_max"]
        assert metrics["actor/grad_norm"] > 0
    return steps


@pytest.fixture(scope="module")
def guir1_data(tmp_path_factory) -> Path:
    """AitZ rows from ../shared in verl's format (``data/{train,test}.parquet``) and the unified format."""
    root = tmp_path_factory.mktemp("grpo_verl")
    convert = run([sys.executable, "-m", "core", "data", "convert", "--from", "aitw", "--to", "verl", "--input",
                   str(DATA / "aitz"), "--output", str(root / "export"), "--name", "aitz", "--max-pixels", "200704"])
    assert convert.returncode == 0, convert.stderr[-3000:]
    unified = run([sys.executable, "-m", "core", "data", "convert", "--from", "aitw", "--to", "unified", "--input",
                   str(DATA / "aitz"), "--output", str(root / "unified"), "--name", "aitz"])
    assert unified.returncode == 0, unified.stderr[-3000:]
    (root / "data").mkdir()
    for split in ("train", "test"):
        shutil.copy(root / "export" / "aitz.parquet", root / "data" / f"{split}.parquet")
    return root


@pytest.fixture(scope="module")
def guir1_run(guir1_data):
    from core.testing import tiny_qwen25vl_path

    root = guir1_data
    args = [*FAST_ARGS, "actor_rollout_ref.rollout.n=2", "data.max_response_length=16",
            "data.mm_processor_kwargs.min_pixels=3136", "data.mm_processor_kwargs.max_pixels=200704",
            f"trainer.default_local_dir={root / 'ckpt'}"]
    proc = run(["make", "grpo-verl", f"MODEL={tiny_qwen25vl_path()}", "RECIPE_MODEL=qwen2_5_vl_3b",
                f"VERL_DATA={root / 'data'}", f"LOG_ROOT={root / 'runs'}", f"ARGS={' '.join(args)}"])
    return proc, root


def test_grpo_verl_trains_two_steps_on_cpu(guir1_run):
    proc, root = guir1_run
    steps = assert_trained(proc, GUIR1_METRICS)
    assert steps[2]["actor/lr"] == pytest.approx(1e-3)
    assert (root / "ckpt" / "global_step_2" / "actor").is_dir()


def test_grpo_verl_checkpoint_merges_and_answers(guir1_run, tmp_path):
    from transformers import AutoModelForImageTextToText

    from core.testing import tiny_qwen25vl_path

    proc, root = guir1_run
    assert proc.returncode == 0, proc.stdout[-3000:]
    merged = tmp_path / "merged"
    merge = run([sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp", "--local_dir",
                 str(root / "ckpt" / "global_step_2" / "actor"), "--target_dir", str(merged)])
    assert merge.returncode == 0, merge.stderr[-3000:]
    trained = AutoModelForImageTextToText.from_pretrained(merged).state_dict()
    start = AutoModelForImageTextToText.from_pretrained(tiny_qwen25vl_path()).state_dict()
    assert trained.keys() == start.keys()
    changed = [name for name in start if not torch.equal(start[name], trained[name])]
    assert len(changed) > len(start) // 2, f"{len(changed)} of {len(start)} tensors changed"
    out = tmp_path / "predictions.jsonl"
    infer = run([sys.executable, "-m", "core", "infer", "--backend", "hf", "--model", str(merged), "--input",
                 str(root / "unified" / "aitz.parquet"), "--output", str(out), "--device", "cpu", "--limit", "2",
                 "--max-new-tokens", "8"])
    assert infer.returncode == 0, infer.stderr[-3000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(isinstance(row["pred"], str) and not row.get("error") for row in rows), rows


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory):
    from core.testing import tiny_qwen3vl_path

    root = tmp_path_factory.mktemp("grpo_verl_agent")
    data = run(["make", "gui-agent-data", f"AGENT_DATA={root / 'data'}", "AGENT_DEMO_SAMPLES=4"])
    assert data.returncode == 0, data.stderr[-3000:]
    args = [*FAST_ARGS, "data.max_response_length=128", f"trainer.default_local_dir={root / 'ckpt'}"]
    proc = run(["make", "grpo-verl-agent", "AGENT_DEVICE=cpu", f"MODEL={tiny_qwen3vl_path()}",
                f"AGENT_DATA={root / 'data'}", f"ARGS={' '.join(args)}"],
               env={"TRAIN_BATCH_SIZE": "1", "PPO_MINI_BATCH_SIZE": "1"})  # one group of 2 episodes a step
    return proc, root


def test_grpo_verl_agent_trains_two_steps_on_cpu(agent_run):
    proc, root = agent_run
    steps = assert_trained(proc, AGENT_METRICS)
    for metrics in steps.values():
        assert metrics["num_turns/mean"] >= 2  # the prompt turn and at least one model turn
        assert metrics["gui_agent/turns/mean"] >= 1 and 0 <= metrics["gui_agent/success/mean"] <= 1
    assert (root / "ckpt" / "global_step_2" / "actor").is_dir()
