"""`make demo`: the tiny random Qwen2.5-VL learns the simulated phone on CPU, measured before and after.

    .venvs/rl/bin/python experiments/demo/run.py [--out outputs/demo] [--profile full|ci] [--shared-data ../shared/data]

Stages (each one line with its wall time; training shows its progress bars):

1. ``model``: ``gui-agent tiny-model`` (random weights, the real tokenizer);
2. ``data``: ``gui-agent world export`` of train tasks and of held-out tasks (held out by layout seed and by task
   family), converted with ``gui-agent data convert`` to LLaMA-Factory (SFT), vlmr1 (GRPO) and the unified parquet
   (evaluation); the phone screenshots of ``../shared/data`` (AitZ, GUIOdyssey) join the SFT and GRPO data when
   that folder exists;
3. ``before_sft`` / ``after_sft`` / ``after_grpo``: ``gui-agent infer`` on the held-out screens, ``experiments/guir1/
   eval.sh`` (both metric modes), the r1gui reward of each answer (``gui-agent score``) and ``gui-agent rollout``
   (task success in the simulated phone);
4. ``sft``: ``llamafactory-cli train`` on the shipped full-SFT YAML (overrides in ``config.yaml``), then the
   checkpoint is re-saved by the rl environment's transformers (:mod:`handoff`) so trl and inference load it;
5. ``grpo``: ``VLM-R1/grpo.py`` (trl ``GRPOTrainer``, GUI-R1's r1gui reward) from the SFT checkpoint;
6. ``baselines``: the same held-out screens and episodes answered by the trivial baselines (``gui-agent infer
   --backend baseline --model random|centre``, ``gui-agent rollout --policy random|centre``); then the report
   (``report.md``, ``report.json``, plots, galleries). The last line printed is the report folder.

A stage whose settings are unchanged and whose output is complete is reused (``<out>/stages/<name>.json``), so a
second run only rebuilds what changed; ``--fresh`` redoes every stage.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(ROOT))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require("torch", "transformers", "trl", "datasets", "yaml")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import report as report_mod  # noqa: E402  (experiments/demo/report.py)
from handoff import handoff  # noqa: E402

RL = ROOT / ".venvs" / "rl" / "bin"
LF = ROOT / ".venvs" / "llamafactory" / "bin"
EVAL_STAGES = ("before_sft", "after_sft", "after_grpo")
#: The held-out rows are GUI-R1 `high` navigation steps, scored as AndroidControl-high.
BENCHMARK = "androidcontrol_high"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(cmd: list[Any], log_file: Path, cwd: Path = ROOT, env: dict | None = None, show: bool = False) -> None:
    """Run ``cmd``; its output and its wall time go to ``log_file`` (output to stderr too with ``show``); a
    non-zero exit stops the demo."""
    cmd = [str(c) for c in cmd]
    log_file.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with open(log_file, "a", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        for raw in iter(lambda: proc.stdout.read(4096), b""):
            fh.write(raw.decode("utf-8", "replace"))
            if show:
                sys.stderr.buffer.write(raw)
                sys.stderr.flush()
        code = proc.wait()
        fh.write(f"# exit {code} after {time.monotonic() - t0:.1f} s\n")
    if code:
        raise SystemExit(f"demo: `{' '.join(cmd[:4])} ...` failed (exit {code}); see {log_file}")


class Stages:
    """Stage bookkeeping: ``<out>/stages/<name>.json`` holds the settings hash and the wall time of a finished stage;
    ``<out>/logs/<name>.log`` the output of its commands."""

    def __init__(self, out: Path, fresh: bool):
        self.dir = out / "stages"
        self.logs = out / "logs"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.fresh = fresh
        self.times: dict[str, dict] = {}

    def __call__(self, name: str, settings: Any, outputs: list[Path], fn) -> None:
        key = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]
        marker = self.dir / f"{name}.json"
        if not self.fresh and marker.is_file() and all(p.exists() for p in outputs):
            done = json.loads(marker.read_text())
            if done.get("key") == key:
                self.times[name] = {"wall_s": done["wall_s"], "reused": True}
                log(f"[demo] {name:<11} reused ({done['wall_s']:.0f} s when built)")
                return
        marker.unlink(missing_ok=True)
        (self.logs / f"{name}.log").unlink(missing_ok=True)  # the stage's log holds only its latest run
        log(f"[demo] {name:<11} ...")
        t0 = time.monotonic()
        fn()
        wall = time.monotonic() - t0
        marker.write_text(json.dumps({"key": key, "wall_s": round(wall, 1)}))
        self.times[name] = {"wall_s": round(wall, 1), "reused": False}
        log(f"[demo] {name:<11} done in {wall:.0f} s")


def stage_env(cfg: dict) -> dict:
    """Environment of every child process: offline, fixed thread counts, no CUDA, deterministic hashing."""
    env = dict(os.environ)
    threads = str(cfg["threads"])
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads, CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0",
               DISABLE_VERSION_CHECK="1")
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "demo")
    ap.add_argument("--profile", default="full", help="config.yaml profile: full (make demo) or ci (tests)")
    ap.add_argument("--config", type=Path, default=HERE / "config.yaml")
    ap.add_argument("--shared-data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--fresh", action="store_true", help="redo every stage even when its output is current")
    args = ap.parse_args(argv)

    import yaml

    profiles = yaml.safe_load(args.config.read_text())
    if args.profile not in profiles:
        ap.error(f"--profile {args.profile!r}: not in {args.config} (has {', '.join(profiles)})")
    cfg = profiles[args.profile]
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = stage_env(cfg)
    logs = out / "logs"
    stages = Stages(out, args.fresh)
    t_start = time.monotonic()
    px = ["--min-pixels", cfg["min_pixels"], "--max-pixels", cfg["max_pixels"]]
    ga = [RL / "gui-agent"]

    data = out / "data"
    # Real screenshots: ``{folder of ../shared/data: gui-agent data convert --from reader}``, the folders present.
    real = {name: args.shared_data / name for name in (cfg["data"].get("real") or {})
            if (args.shared_data / name).is_dir()}
    # Each stage's settings: only what it depends on, so a change rebuilds that stage and the ones after it.
    common = {k: cfg[k] for k in ("seed", "threads", "min_pixels", "max_pixels")}
    data_key = {**common, "data": cfg["data"], "real": {k: str(v.resolve()) for k, v in real.items()}}
    measure = {"eval": cfg["eval"], "rollout": cfg["rollout"]}
    sft_key = {**data_key, "sft": cfg["sft"]}
    grpo_key = {**sft_key, "grpo": cfg["grpo"]}

    # 1. model
    base = out / "models" / "base"
    stages("model", {"seed": cfg["seed"]}, [base],
           lambda: run([*ga, "tiny-model", "--output", base, "--seed", cfg["seed"], "--overwrite"], logs / "model.log", env=env))

    # 2. data

    def build_data() -> None:
        d = cfg["data"]
        world = [*ga, "world", "export", "--levels", "high", "--overwrite"]  # the stage rebuilds its data
        run([*world, "--split", "train", "--n", d["train_tasks"], "--output", data / "train.parquet"], logs / "data.log", env=env)
        run([*world, "--split", "test_seed", "--n", d["heldout_seed_tasks"], "--output", data / "heldout_seed.parquet"],
            logs / "data.log", env=env)
        run([*world, "--split", "test_family", "--n", d["heldout_family_tasks"], "--output",
             data / "heldout_family.parquet"], logs / "data.log", env=env)
        # One held-out parquet (both splits) so infer/eval/score see one file.
        run([RL / "python", HERE / "report.py", "concat", data / "heldout.parquet", data / "heldout_seed.parquet",
             data / "heldout_family.parquet"], logs / "data.log", env=env)
        conv = [*ga, "data", "convert", "--from", "unified", *px, "--overwrite"]
        run([*conv, "--to", "llamafactory", "--input", data / "train.parquet", "--output", data / "lf" / "simphone",
             "--name", "simphone"], logs / "data.log", env=env)
        run([*conv, "--to", "vlmr1", "--input", data / "train.parquet", "--output", data / "vlmr1", "--name", "train"],
            logs / "data.log", env=env)
        run([*conv, "--to", "vlmr1", "--input", data / "heldout.parquet", "--output", data / "vlmr1", "--name",
             "heldout"], logs / "data.log", env=env)
        for name, folder in real.items():
            reader = ["data", "convert", "--from", cfg["data"]["real"][name], "--input", folder, *px, "--overwrite"]
            run([*ga, *reader, "--to", "llamafactory", "--output", data / "lf" / name, "--name", name],
                logs / "data.log", env=env)
            run([*ga, *reader, "--to", "vlmr1", "--output", data / "vlmr1", "--name", name], logs / "data.log", env=env)

    stages("data", data_key,
           [data / "heldout.parquet", data / "lf" / "dataset_info.json", data / "vlmr1" / "train.hf"], build_data)

    # 3-5. evaluations and training
    models = {"before_sft": base, "after_sft": out / "models" / "sft", "after_grpo": out / "models" / "grpo"}

    def evaluate(sdir: Path, log_file: Path, *, model: Path | None = None, baseline: str | None = None) -> None:
        """The held-out screens and episodes answered by the hf ``model``, or without one by the ``baseline``
        (random / centre)."""
        shutil.rmtree(sdir, ignore_errors=True)
        pred = sdir / "predictions" / f"{BENCHMARK}_test.json"
        e, r = cfg["eval"], cfg["rollout"]
        hf = ["--backend", "hf", "--model", model, "--max-new-tokens", e["max_new_tokens"], "--device", "cpu"]
        run([*ga, "infer", *(hf if model else ["--backend", "baseline", "--model", baseline]), "--input",
             data / "heldout.parquet", "--output", pred, *px, "--batch-size", e["batch_size"], "--seed", cfg["seed"]],
            log_file, env=env, show=model is not None)
        run(["bash", ROOT / "experiments/guir1/eval.sh", pred.parent, sdir / "eval"], log_file, env=env)
        run([RL / "python", HERE / "report.py", "score", pred, data / "vlmr1" / "heldout.jsonl", sdir / "scored.jsonl"],
            log_file, env=env)
        run([*ga, "rollout", *(hf if model else ["--policy", baseline]), "--env", "sim-phone", "--tasks", "test",
             "--episodes", r["episodes"], "--max-steps", r["max_steps"], "--seed", cfg["seed"], *px, "--output",
             sdir / "rollout"], log_file, env=env, show=model is not None)

    def evaluate_model(stage: str) -> None:
        evaluate(out / "stages_out" / stage, logs / f"{stage}.log", model=models[stage])

    def eval_outputs(stage: str) -> list[Path]:
        sdir = out / "stages_out" / stage
        return [sdir / "scored.jsonl", sdir / "rollout" / "summary.json", sdir / "eval" / "strict" / "report.json"]

    stages("before_sft", {**data_key, **measure}, eval_outputs("before_sft"), lambda: evaluate_model("before_sft"))

    def sft() -> None:
        s = cfg["sft"]
        raw = out / "models" / "sft-llamafactory"
        shutil.rmtree(raw, ignore_errors=True)
        datasets = ",".join(["simphone", *real])
        overrides = {**s["overrides"], "model_name_or_path": base, "dataset": datasets,
                     "dataset_dir": data / "lf", "output_dir": raw, "template": "qwen2_vl",
                     "image_max_pixels": cfg["max_pixels"], "image_min_pixels": cfg["min_pixels"],
                     "seed": cfg["seed"], "data_seed": cfg["seed"], "report_to": "none",
                     # CPU-safe settings, as `make sft-llamafactory` sets them without CUDA (mk/sft.mk)
                     "bf16": "false", "deepspeed": "null", "dataloader_num_workers": 0, "preprocessing_num_workers": 1}
        run([LF / "llamafactory-cli", "train", ROOT / s["yaml"], *[f"{k}={v}" for k, v in overrides.items()]],
            logs / "sft.log", cwd=ROOT / "LLaMA-Factory", env=env, show=True)
        handoff(raw, models["after_sft"], processor_from=base)

    stages("sft", sft_key, [models["after_sft"], out / "models" / "sft-llamafactory"], sft)
    stages("after_sft", {**sft_key, **measure}, eval_outputs("after_sft"),
           lambda: evaluate_model("after_sft"))

    def grpo() -> None:
        g = cfg["grpo"]
        shutil.rmtree(models["after_grpo"], ignore_errors=True)
        flags = {**g["flags"], "seed": cfg["seed"], "bf16": "false", "use_cpu": "true", "use_vllm": "false",
                 "dataloader_num_workers": 0, "report_to": "none", "min_pixels": cfg["min_pixels"],
                 "max_pixels": cfg["max_pixels"]}
        run([RL / "python", ROOT / "VLM-R1/grpo.py", "--config", ROOT / g["recipe"], "--model_name_or_path",
             models["after_sft"], "--dataset", ":".join(str(data / "vlmr1" / f"{d}.hf") for d in ["train", *real]),
             "--output_dir", models["after_grpo"],
             *[a for k, v in flags.items() for a in (f"--{k}", v)]], logs / "grpo.log", env=env, show=True)

    stages("grpo", grpo_key, [models["after_grpo"] / "config.json"], grpo)
    stages("after_grpo", {**grpo_key, **measure}, eval_outputs("after_grpo"),
           lambda: evaluate_model("after_grpo"))

    def baselines() -> None:
        for policy in report_mod.BASELINES:
            evaluate(out / "stages_out" / "baselines" / policy, logs / "baselines.log", baseline=policy)

    stages("baselines", {**data_key, **measure}, [p for b in report_mod.BASELINES for p in eval_outputs(f"baselines/{b}")],
           baselines)

    folder = report_mod.write_report(out, profile=args.profile, times=stages.times, real=real,
                                     total_s=time.monotonic() - t_start)
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
