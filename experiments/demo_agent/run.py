"""`make demo-agent`: the tiny random Qwen3-VL learns multi-step phone tasks by acting, with verl's multi-turn agent
recipe on CPU, measured on held-out episodes against its start and its controls.

    .venvs/rl/bin/python experiments/demo_agent/run.py [--out outputs/demo-agent] [--profile full|ci] [--seed K]

Stages (each one line with its wall and CPU time; ``<out>/logs/<stage>.log`` has its commands' output):

1. ``model``: ``gui-agent tiny-model --family qwen3-vl`` (random weights, the real tokenizer);
2. ``sft_data``: scripted episodes of the first agent_train tasks as the recipe's own conversations
   (``core.rollout.sft``: the ``mobile_use`` tool schema as the chat template writes it, the loop's turns), in
   LLaMA-Factory's sharegpt layout;
3. ``sft``: ``llamafactory-cli train`` on the shipped Qwen3-VL full-SFT YAML, a checkpoint every ``save_steps``;
4. ``start``: the start rule on validation (agent_val): every checkpoint answers the validation tasks by sampling;
   the start is the one with the most families where a GRPO group is mixed more often than not (``start.json``
   lists every checkpoint measured);
5. ``rl_data``: ``verl/prepare_gui_agent_data.py`` rows of agent_train tasks after SFT's, validation rows of
   agent_val;
6. ``grpo`` / ``grpo_shuffled`` / ``grpo_plain``: ``make grpo-verl-agent AGENT_DEVICE=cpu`` from the start (the
   recipe file, the run's overrides), merged to a Hugging Face folder by ``make merge-verl``; ``more_sft``:
   LLaMA-Factory SFT continued from the start's checkpoint on the RL tasks' scripted episodes for the CPU time of
   the ``grpo`` run;
7. ``eval/<run>``: ``gui-agent rollout --recipe`` of every model (and of the start) on the same held-out agent_test
   tasks, greedy, fixed seed; then ``report.json``, ``report.md`` and the plots (:mod:`report`).

A stage whose settings are unchanged and whose output is complete is reused (``<out>/stages/<name>.json``);
``--fresh`` redoes every stage. The last line printed is the report folder.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from core.interpreter import load_script, require  # noqa: E402

require("torch", "transformers", "yaml")

demo = load_script("demo_run", ROOT / "experiments" / "demo" / "run.py")  # stages, commands, hand-off: make demo's
report = load_script("demo_agent_report", HERE / "report.py")

from core.agent_recipe import AgentRecipe  # noqa: E402
from core.io import atomic_write_text  # noqa: E402

RL, LF = demo.RL, demo.LF
#: The runs trained from the start, in the report's order (``more_sft`` is SFT for the same CPU time).
GRPO_RUNS = ("grpo", "grpo_shuffled", "grpo_plain")
RUNS = ("start", *GRPO_RUNS, "more_sft")


def task_ids(split: str, n: int, skip: int = 0) -> list[str]:
    """The ids of tasks ``skip`` .. ``skip + n`` of a simulated-phone ``split`` (listed seed by seed)."""
    from core.world import list_tasks

    tasks = list(list_tasks(split))
    if skip + n > len(tasks):
        raise SystemExit(f"demo-agent: {split} has {len(tasks)} tasks, {skip + n} asked")
    return [t.id for t in tasks[skip:skip + n]]


def write_sft_data(recipe: Any, model: Path, ids: list[str], out: Path, name: str, per_screen: int = 1
                   ) -> dict[str, Any]:
    """Scripted episodes of ``ids`` under ``recipe`` (an AgentRecipe) as LLaMA-Factory dataset ``name`` in ``out``
    (core.rollout.sft); ``per_screen`` > 1 adds episodes of up to ``per_screen`` - 1 other goals on each task's start
    screen (:func:`core.world.task_variants`), so the screenshot alone never tells the answer."""
    from transformers import AutoTokenizer

    from core.rollout.sft import scripted_transcripts, tools_system_text, write_llamafactory_sft
    from core.world import get_task, task_variants

    tasks = []
    for task in map(get_task, ids):
        tasks += [task, *(variant for _, variant in task_variants(task, per_screen - 1))]
    system = tools_system_text(AutoTokenizer.from_pretrained(model), recipe)
    counts = write_llamafactory_sft(scripted_transcripts(tasks, recipe), out, name=name, system=system)
    if counts["failed"]:
        raise SystemExit(f"demo-agent: {counts['failed']} scripted episodes of {name} failed (the gold plan must "
                         f"solve every task)")
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "demo-agent")
    ap.add_argument("--profile", default="full", help="config.yaml profile: full (make demo-agent) or ci (tests)")
    ap.add_argument("--config", type=Path, default=HERE / "config.yaml")
    ap.add_argument("--seed", type=int, help="training seed (the model's random weights, SFT, RL) instead of the "
                    "profile's; `make demo-agent-seeds` runs several")
    ap.add_argument("--fresh", action="store_true", help="redo every stage even when its output is current")
    args = ap.parse_args(argv)
    cfg = demo.load_profile(ap, args.config, args.profile)
    if args.seed is not None:
        if not 0 <= args.seed < 2 ** 32:
            ap.error(f"--seed must be in [0, 2**32), got {args.seed}")
        cfg["seed"] = args.seed
    seed = cfg["seed"]
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = demo.stage_env(cfg)
    logs = out / "logs"
    stages = demo.Stages(out, args.fresh)
    run = demo.run
    t_start = time.monotonic()
    recipe = ROOT / cfg["recipe"]
    agent_recipe = AgentRecipe.load(recipe)  # read once: the SFT data and SFT's image bound
    ga = [RL / "gui-agent"]
    models, data = out / "models", out / "data"
    s, r, e = cfg["sft"], cfg["rl"], cfg["eval"]
    recipe_key = {"recipe": recipe.read_text(encoding="utf-8"), "seed": seed, "threads": cfg["threads"]}

    # 1. model
    base = models / "base"
    stages("model", {"seed": seed}, [base / "config.json"],
           lambda: run([*ga, "tiny-model", "--family", "qwen3-vl", "--output", base, "--seed", seed, "--overwrite"],
                       logs / "model.log", env=env))

    # 2-3. SFT data and SFT
    sft_ids = task_ids("agent_train", s["tasks"])
    data_key = {**recipe_key, "sft_tasks": s["tasks"], "per_screen": s["instructions_per_screen"]}
    stages("sft_data", data_key, [data / "lf" / "dataset_info.json"],
           lambda: write_sft_data(agent_recipe, base, sft_ids, data / "lf", "agent_sft", s["instructions_per_screen"]))
    sft_raw = models / "sft-llamafactory"
    sft_key = {**data_key, "sft": s}

    def train_sft(start: Path, dataset: str, overrides: dict, raw: Path, log_name: str) -> None:
        shutil.rmtree(raw, ignore_errors=True)
        (logs / f"{log_name}.log").unlink(missing_ok=True)
        overrides = {**overrides, "model_name_or_path": start, "dataset": dataset, "dataset_dir": data / "lf",
                     "output_dir": raw, "template": "qwen3_vl_nothink", "image_max_pixels": agent_recipe.max_screenshot_pixels,
                     "image_min_pixels": 1024, "seed": seed, "data_seed": seed, "report_to": "none",
                     "bf16": "false", "deepspeed": "null", "dataloader_num_workers": 0,
                     "preprocessing_num_workers": 1, "overwrite_cache": "true"}
        run([LF / "llamafactory-cli", "train", ROOT / s["yaml"], *[f"{k}={v}" for k, v in overrides.items()]],
            logs / f"{log_name}.log", cwd=ROOT / "LLaMA-Factory", env=env, show=True)

    stages("sft", sft_key, [sft_raw / "trainer_state.json"],
           lambda: train_sft(base, "agent_sft", s["overrides"], sft_raw, "sft"))

    def rollout(model: Path, ids: list[str], dst: Path, log_name: str, *, temperature: float = 0.0,
                gallery: int = 0) -> None:
        for f in demo.PROCESSOR_FILES + ("video_preprocessor_config.json",):  # trainers save weights + tokenizer
            if not (model / f).exists() and (base / f).exists():
                shutil.copy2(base / f, model / f)
        run([*ga, "rollout", "--recipe", recipe, "--backend", "hf", "--model", model, "--device", "cpu",
             "--tasks", ",".join(ids), "--max-new-tokens", e["max_new_tokens"], "--temperature", temperature,
             "--workers", e["workers"], "--seed", seed, "--gallery", gallery, "--output", dst, "--overwrite"],
            logs / f"{log_name}.log", env=env)

    # 4. the start, chosen on validation
    st = cfg["start"]
    val_ids = task_ids("agent_val", st["val_tasks"])
    start_key = {**sft_key, "start": st}

    def choose_start() -> None:
        candidates = []
        for ckpt in sorted(sft_raw.glob("checkpoint-*"), key=lambda p: int(p.name.rsplit("-", 1)[1])):
            dst = out / "start" / ckpt.name
            rollout(ckpt, val_ids, dst, "start", temperature=st["temperature"])
            fam = report.family_success(report.episodes(dst / "episodes.jsonl"))
            candidates.append({"step": int(ckpt.name.rsplit("-", 1)[1]), "per_family": fam})
        choice = report.choose_start(candidates, st["group"])
        demo.handoff(sft_raw / f"checkpoint-{choice['step']}", models / "start", processor_from=base)
        atomic_write_text(out / "start" / "start.json", json.dumps(choice, indent=1) + "\n")

    stages("start", start_key, [out / "start" / "start.json", models / "start" / "config.json"], choose_start)

    # 5. RL data: agent_train tasks after SFT's, validation rows of agent_val
    rl_data = data / "rl"
    rl_data_key = {**recipe_key, "sft_tasks": s["tasks"], "prompt_tasks": r["prompt_tasks"], "val": r["val_tasks"]}
    stages("rl_data", rl_data_key, [rl_data / "train.parquet", rl_data / "test.parquet"],
           lambda: run([RL / "python", ROOT / "verl" / "prepare_gui_agent_data.py", "--output_dir", rl_data,
                        "--create_demo", "--train_split", "agent_train", "--skip", s["tasks"], "--demo_samples",
                        r["prompt_tasks"], "--test_split", "agent_val", "--test_samples", r["val_tasks"],
                        "--recipe", recipe], logs / "rl_data.log", env=env))

    # 6. the runs from the start
    rl_key = {**start_key, **rl_data_key, "rl": {k: v for k, v in r.items() if k != "runs"}}

    def grpo(name: str) -> None:
        ckpt = models / f"{name}-verl"
        shutil.rmtree(ckpt, ignore_errors=True)
        shutil.rmtree(models / name, ignore_errors=True)
        (logs / f"{name}.log").unlink(missing_ok=True)
        overrides = [f"trainer.total_training_steps={r['steps']}", f"trainer.save_freq={r['steps']}",
                     f"trainer.test_freq={r['test_freq']}", "trainer.val_before_train=True",
                     f"trainer.default_local_dir={ckpt}", f"data.seed={seed}", f"trainer.experiment_name={name}",
                     *r["overrides"], *r["runs"][name]]
        knobs = [f"{k}={v}" for k, v in r["env"].items()]
        # Ray's logical GPU tokens of verl's CPU platform (docs/grpo-verl.md) need CUDA_VISIBLE_DEVICES unset
        ray_env = {k: v for k, v in env.items() if k != "CUDA_VISIBLE_DEVICES"}
        run(["make", "--no-print-directory", "grpo-verl-agent", "AGENT_DEVICE=cpu", f"MODEL={models / 'start'}",
             f"AGENT_DATA={rl_data}", f"AGENT_RECIPE={recipe}", f"ARGS={' '.join(overrides)}", *knobs],
            logs / f"{name}.log", env=ray_env, show=True)
        run(["make", "--no-print-directory", "merge-verl", f"CKPT={ckpt}", f"OUT={models / name}"],
            logs / f"{name}.log", env=env)
        report.write_curve(logs / f"{name}.log", out / "curves" / f"{name}.json")

    for name in GRPO_RUNS:
        stages(name, {**rl_key, "run": r["runs"][name]}, [models / name / "config.json", out / "curves" / f"{name}.json"],
               lambda name=name: grpo(name))

    rl_ids = task_ids("agent_train", r["prompt_tasks"], skip=s["tasks"])

    def more_sft() -> None:
        """SFT from the start's own checkpoint on the RL tasks' scripted episodes, as many steps as the ``grpo``
        run's time buys at the SFT stage's seconds a step. Wall time on the same 2 cores stands for CPU time: both
        stages keep both cores busy, and the Ray workers of a verl launch are not this process's children, so their
        CPU seconds cannot be counted here."""
        write_sft_data(agent_recipe, base, rl_ids, data / "lf", "agent_rl_tasks", s["instructions_per_screen"])
        times = report.stage_times(out)
        per_step = times["sft"]["wall_s"] / s["overrides"]["max_steps"]
        steps = max(1, math.floor(times["grpo"]["wall_s"] / per_step))
        step = json.loads((out / "start" / "start.json").read_text())["step"]
        raw = models / "more_sft-llamafactory"
        train_sft(sft_raw / f"checkpoint-{step}", "agent_rl_tasks",
                  {**s["overrides"], "max_steps": steps, "save_steps": steps, "warmup_steps": 0}, raw, "more_sft")
        demo.handoff(raw, models / "more_sft", processor_from=base)
        atomic_write_text(out / "curves" / "more_sft.json", json.dumps({"steps": steps, "sft_s_per_step": per_step,
                                                                          "budget_s": times["grpo"]["wall_s"]}))

    stages("more_sft", {**rl_key, "more": "grpo cpu time"}, [models / "more_sft" / "config.json"], more_sft)

    # 7. held-out evaluation, the same tasks for every model
    test_ids = task_ids("agent_test", e["test_tasks"])
    for name in RUNS:
        key = {**(start_key if name == "start" else rl_key), "eval": e, "run": name,
               "trained": (r["runs"].get(name) if name in GRPO_RUNS else None)}
        stages(f"eval/{name}", key, [out / "eval" / name / "episodes.jsonl"],
               lambda name=name: rollout(models / name, test_ids, out / "eval" / name, f"eval_{name}",
                                         gallery=e["gallery"]))

    folder = report.write_report(out, profile=args.profile, seed=seed, times=stages.times,
                                 wall_s=time.monotonic() - t_start, families=cfg["families"])
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
