"""Seconds per verl training step on this machine, where a step goes, and what the CPU engine's response-only
output layer saves, for both verl recipes of this project.

    python bench/verl_step.py [--steps 3] [--recipes guir1,agent] [--engines verl,response]

Each recipe runs verl's own trainer through ``verl/main_ppo.sh`` exactly as ``make grpo-verl`` /
``make grpo-verl-agent AGENT_DEVICE=cpu`` launch it (on a machine without a GPU: the ``cpu`` platform and the ``hf``
rollout), with the tiny random models of ``core.testing``: GUI-R1's recipe on AitZ rows from ../shared (2 prompts x 5
samples, 128 response tokens); the mobile-agent recipe at ``make demo-agent``'s batch (its recipe file, the ``full``
profile's run knobs and overrides of experiments/demo_agent/config.yaml: 4 tasks x 4 episodes, turns of at most 96
tokens, GiGPO) on ``prepare_gui_agent_data.py`` curriculum rows of ``agent_train``.

Every recipe launches once per engine, one after another in the same run: ``verl`` is verl 0.9.1's own actor/ref
engine (``VERL_CPU_RESPONSE_LOGPROBS=0``), ``response`` the CPU platform's default
(``verl/plugins/verl_response_logprobs.py``: the output layer at the trained response positions only).

Printed per recipe and engine: seconds per step (the mean over the steps after the first, which also pays
start-up), the seconds of a step in rollout (``timing_s/gen``: generation, the phone and the reward: verl 0.9.1's v1
trainer scores rewards inside the rollout, its reward loop; for the mobile-agent recipe also the seconds an episode
spent in generation, on the phone, in its reward and building its tokens, ``timing_s/episode/<part>/mean``, which
need not add up to the rollout's wall time: the episodes of a step run concurrently), log-probs (``old_log_prob`` + ``ref``), the actor update
(``update_actor``), the weight sync (``update_weights``) and the rest (advantages, bookkeeping); the wall time of the
whole launch; peak memory: the largest resident set of the launch's whole process tree (Ray workers included),
sampled every 0.5 s; verl's on-policy check (``training/rollout_probs_diff_max``: the rollout's log-probs against
the actor's, which must stay below 1e-3 with either engine); the machine's 1-minute load average before and after
each launch (above the core count: other work shared the cores, the times are upper bounds). Then, per recipe, the
ratios ``response`` / ``verl`` of each of those, measured in this run.
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

require("psutil", "verl", "yaml")

import psutil  # noqa: E402

from core.training_logs import step_metrics  # noqa: E402

#: Engine name -> VERL_CPU_RESPONSE_LOGPROBS (verl/plugins/verl_response_logprobs.py).
ENGINES = {"verl": "0", "response": "1"}
#: Seconds an episode of the mobile-agent recipe (the ``gui_agent`` loop's ``extra_fields["timing_s"]``, logged by
#: ``gui_agent_trainer`` as ``timing_s/episode/<part>/mean``): the rollout's generation, phone, reward and token
#: building apart.
EPISODE_PARTS = ("generate", "phone", "reward", "tokens")
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
    """The ``make grpo-verl-agent AGENT_DEVICE=cpu`` launch at ``make demo-agent``'s batch."""
    import yaml

    demo = yaml.safe_load((ROOT / "experiments" / "demo_agent" / "config.yaml").read_text())["full"]
    rl = demo["rl"]
    recipe = ROOT / demo["recipe"]
    subprocess.run([sys.executable, "verl/prepare_gui_agent_data.py", "--output_dir", str(work / "data"),
                    "--create_demo", "--train_split", "agent_train", "--demo_samples", str(4 * steps),
                    "--test_split", "agent_val", "--test_samples", "4", "--recipe", str(recipe)],
                   cwd=ROOT, check=True, capture_output=True)
    overrides = [f"trainer.total_training_steps={steps}", "trainer.save_freq=-1", "trainer.test_freq=-1",
                 "trainer.val_before_train=False", *rl["overrides"], *rl["runs"]["grpo"]]
    return ["make", "--no-print-directory", "grpo-verl-agent", "AGENT_DEVICE=cpu", f"MODEL={model}",
            f"AGENT_DATA={work / 'data'}", f"AGENT_RECIPE={recipe}", f"ARGS={' '.join(overrides)}",
            *(f"{k}={v}" for k, v in rl["env"].items())]


def measure(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """One launch: seconds a step and per part (steps after the first), the first step, the launch, peak GiB,
    the on-policy check and the load averages."""
    load_before = os.getloadavg()[0]
    output, wall, peak_gib = run_measured(cmd, env)
    steps = step_metrics(output)
    later = [steps[s] for s in sorted(steps)[1:]]
    per_step = sum(m["timing_s/step"] for m in later) / len(later)
    out = {"step": per_step, "first step": steps[min(steps)]["timing_s/step"], "launch": wall, "peak GiB": peak_gib,
           "probs diff": max(m.get("training/rollout_probs_diff_max", float("nan")) for m in steps.values()),
           "load before": load_before, "load after": os.getloadavg()[0]}
    for name, keys in PARTS.items():
        out[name] = sum(sum(m.get(k, 0.0) for k in keys) for m in later) / len(later)
    out["other"] = per_step - sum(out[name] for name in PARTS)
    for part in EPISODE_PARTS:  # the mobile-agent recipe only
        values = [m[f"timing_s/episode/{part}/mean"] for m in later if f"timing_s/episode/{part}/mean" in m]
        if values:
            out[f"episode {part}"] = sum(values) / len(values)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3, help="training steps per launch (>= 2)")
    parser.add_argument("--recipes", default="guir1,agent", help="comma list of guir1, agent")
    parser.add_argument("--engines", default="verl,response", help="comma list of verl, response")
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be >= 2 (the first step also pays start-up)")
    engines = args.engines.split(",")
    if not set(engines) <= set(ENGINES):
        parser.error(f"--engines takes {', '.join(ENGINES)}")
    from core import testing

    base_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    base_env.pop("CUDA_VISIBLE_DEVICES", None)  # verl's CPU platform counts Ray's logical GPU tokens
    print(f"verl steps on {os.cpu_count()} CPUs, {args.steps} steps per launch, tiny models")
    for recipe in args.recipes.split(","):
        if recipe not in ("guir1", "agent"):
            parser.error(f"unknown recipe {recipe[:40]!r} (guir1, agent)")
        results = {}
        for engine in engines:
            env = {**base_env, "VERL_CPU_RESPONSE_LOGPROBS": ENGINES[engine]}
            with tempfile.TemporaryDirectory() as tmp:
                work = Path(tmp)
                if recipe == "guir1":
                    cmd = guir1_command(testing.tiny_qwen25vl_path(), work, args.steps)
                else:
                    cmd = agent_command(testing.tiny_qwen3vl_path(), work, args.steps)
                r = results[engine] = measure(cmd, env)
            parts = ", ".join(f"{name} {r[name]:.1f}" for name in (*PARTS, "other"))
            print(f"{recipe} / {engine}: {r['step']:.1f} s/step (steps 2-{args.steps}; step 1 {r['first step']:.1f} s): "
                  f"{parts}; launch {r['launch']:.0f} s, peak resident {r['peak GiB']:.2f} GiB (process tree), "
                  f"rollout-vs-actor log-prob diff {r['probs diff']:.1e}, load average {r['load before']:.1f} "
                  f"before / {r['load after']:.1f} after")
            if "episode generate" in r:  # episodes run concurrently: these add up to more than the rollout's wall
                print(f"{recipe} / {engine}: seconds an episode (mean, steps 2-{args.steps}): " + ", ".join(
                    f"{part} {r[f'episode {part}']:.3g}" for part in EPISODE_PARTS))
        if len(results) == 2:
            new, old = results["response"], results["verl"]
            keys = ("step", *PARTS, "launch", "peak GiB")
            print(f"{recipe}: response / verl: " + ", ".join(
                f"{k} x{new[k] / old[k]:.2f}" for k in keys if old[k] > 0))


if __name__ == "__main__":
    main()
