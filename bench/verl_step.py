"""Seconds per verl training step on this machine, and where a step goes, for both verl recipes of this project.

    python bench/verl_step.py [--steps 3] [--recipes guir1,agent] [--tiny-dir DIR]

Each recipe runs verl's own trainer through ``verl/main_ppo.sh`` exactly as ``make grpo-verl`` /
``make grpo-verl-agent AGENT_DEVICE=cpu`` launch it (on a machine without a GPU: the ``cpu`` platform and the ``hf``
rollout), with the tiny random models of ``core.testing``: GUI-R1's recipe on AitZ rows from ../shared (2 prompts x 5 samples, 128 response tokens), the
mobile-agent recipe on ``prepare_gui_agent_data.py`` demo rows (2 prompts x 2 episodes, 512 response tokens).

Printed per recipe: seconds per step (the mean over the steps after the first, which also pays start-up), the
share of a step spent in rollout (``timing_s/gen``: generation, the reward and, for the agent, the phone),
log-probs (``old_log_prob`` + ``ref``), the actor update (``update_actor``), the weight sync (``update_weights``)
and the rest (advantages, checkpoint, bookkeeping), as ratios of the step measured in the same run; the wall time
of the whole launch; and peak memory: the largest resident set of the launch's whole process tree (Ray workers
included), sampled every 0.5 s, plus verl's own peak device memory where a GPU is used; and the machine's 1-minute
load average before and after each launch (above the core count: other work shared the cores, the times are upper
bounds). verl 0.9.1's v1 trainer scores rewards inside the rollout (its reward loop), so the rollout share includes
them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.interpreter import require  # noqa: E402

require("psutil", "verl")

import psutil  # noqa: E402

from core.training_logs import step_metrics  # noqa: E402

PARTS = {"rollout": ("timing_s/gen",), "log-probs": ("timing_s/old_log_prob", "timing_s/ref"),
         "update": ("timing_s/update_actor",), "weight sync": ("timing_s/update_weights",)}


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[str, float, float]:
    """(output, wall seconds, peak resident GiB of the process tree) of ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0]

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                tree = [root, *root.children(recursive=True)]
                peak[0] = max(peak[0], sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                pass
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = proc.communicate()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd[:3])} ... exited {proc.returncode}:\n{output[-4000:]}")
    return output, time.perf_counter() - start, peak[0] / 2**30


def guir1_command(model: Path, work: Path, steps: int) -> list[str]:
    convert = [sys.executable, "-m", "core", "data", "convert", "--from", "aitw", "--to", "verl", "--input",
               str(ROOT.parent / "shared" / "data" / "aitz"), "--output", str(work / "export"), "--name", "aitz",
               "--max-pixels", "200704"]
    subprocess.run(convert, cwd=ROOT, check=True, capture_output=True)
    (work / "data").mkdir()
    for split in ("train", "test"):
        shutil.copy(work / "export" / "aitz.parquet", work / "data" / f"{split}.parquet")
    recipe = ROOT / "recipes" / "qwen2_5_vl_3b" / "grpo"
    return ["bash", "verl/main_ppo.sh", "--config-path", str(recipe), "--config-name", "config_guir1_verl",
            f"actor_rollout_ref.model.path={model}", f"data.train_files={work / 'data' / 'train.parquet'}",
            f"data.val_files={work / 'data' / 'test.parquet'}",
            f"reward.custom_reward_function.path={ROOT / 'verl' / 'reward_fn.py'}", "--",
            f"trainer.total_training_steps={steps}", "trainer.save_freq=-1", "trainer.test_freq=-1",
            "data.mm_processor_kwargs.min_pixels=3136", "data.mm_processor_kwargs.max_pixels=200704",
            "data.max_response_length=128"]


def agent_command(model: Path, work: Path, steps: int) -> list[str]:
    subprocess.run([sys.executable, "verl/prepare_gui_agent_data.py", "--output_dir", str(work / "data"),
                    "--create_demo", "--demo_samples", "4"], cwd=ROOT, check=True, capture_output=True)
    return ["bash", "verl/examples/run_qwen3_vl_8b_gui_agent_cpu.sh", f"trainer.total_training_steps={steps}",
            "trainer.save_freq=-1", "trainer.test_freq=-1", "data.max_response_length=512"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3, help="training steps per recipe (>= 2)")
    parser.add_argument("--recipes", default="guir1,agent", help="comma list of guir1, agent")
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be >= 2 (the first step also pays start-up)")
    from core import testing

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    print(f"verl steps on {os.cpu_count()} CPUs, {args.steps} steps per recipe, tiny models")
    for recipe in args.recipes.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            if recipe == "guir1":
                cmd = guir1_command(testing.tiny_qwen25vl_path(), work, args.steps)
            elif recipe == "agent":
                env["MODEL_PATH"], env["DATA_DIR"] = str(testing.tiny_qwen3vl_path()), str(work / "data")
                cmd = agent_command(Path(env["MODEL_PATH"]), work, args.steps)
            else:
                parser.error(f"unknown recipe {recipe[:40]!r} (guir1, agent)")
            load_before = os.getloadavg()[0]
            output, wall, peak_gib = run_measured(cmd, env)
        steps = step_metrics(output)
        later = [steps[s] for s in sorted(steps)[1:]]
        per_step = sum(m["timing_s/step"] for m in later) / len(later)
        shares = {name: sum(sum(m.get(k, 0.0) for k in keys) for m in later) / len(later) / per_step
                  for name, keys in PARTS.items()}
        shares["other"] = 1 - sum(shares.values())
        device_peak = max((m.get("actor/perf/max_memory_allocated_gb", 0.0) for m in later), default=0.0)
        print(f"{recipe}: {per_step:.1f} s/step (steps 2-{args.steps}; step 1 {steps[1]['timing_s/step']:.1f} s), "
              f"launch {wall:.0f} s, peak resident {peak_gib:.1f} GiB (process tree)"
              + (f", peak device {device_peak:.1f} GiB" if device_peak else "")
              + f", load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after")
        print("  share of a step: " + ", ".join(f"{name} {share:.0%}" for name, share in shares.items()))


if __name__ == "__main__":
    main()
