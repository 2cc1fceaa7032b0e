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
5. ``grpo_data``: the GRPO prompts (curriculum tasks, one goal per screen); ``grpo_<run>``: ``VLM-R1/grpo.py`` (trl
   ``GRPOTrainer``) from the SFT checkpoint, one run per reward (r1gui, Gaussian, the shuffled control);
6. ``baselines``: the same held-out screens and episodes answered by the trivial baselines (``gui-agent infer
   --backend baseline --model random|centre``, ``gui-agent rollout --policy random|centre``); then the report
   (``report.md``, ``report.json``, plots, galleries). The last line printed is the report folder.

A stage whose settings are unchanged and whose output is complete is reused (``<out>/stages/<name>.json``), so a
second run only rebuilds what changed; ``--fresh`` redoes every stage.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
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

import curriculum  # noqa: E402  (experiments/demo/curriculum.py)
import report as report_mod  # noqa: E402  (experiments/demo/report.py)
import sharpen  # noqa: E402  (experiments/demo/sharpen.py)
from handoff import PROCESSOR_FILES, handoff  # noqa: E402

from core.io import atomic_write_text  # noqa: E402
from core.world.tasks import CURRICULUM_SPLITS  # noqa: E402

RL = ROOT / ".venvs" / "rl" / "bin"
LF = ROOT / ".venvs" / "llamafactory" / "bin"
EVAL_STAGES = ("before_sft", "after_sft", "after_grpo")
#: The held-out rows are GUI-R1 `high` navigation steps, scored as AndroidControl-high.
BENCHMARK = "androidcontrol_high"
#: LLaMA-Factory dataset names of the SFT data (data/lf/<name>).
LF_DATASETS = {"train": "simphone", "curriculum_train": "curriculum"}
#: The curriculum settings the data stage depends on.
CURRICULUM_DATA = ("train", "val_tasks", "test_tasks")


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
            if show and sys.stderr.isatty():  # progress bars only on a terminal; the log file has everything
                sys.stderr.buffer.write(raw)
                sys.stderr.flush()
        code = proc.wait()
        fh.write(f"# exit {code} after {time.monotonic() - t0:.1f} s\n")
    if code:
        raise SystemExit(f"demo: `{' '.join(cmd[:4])} ...` failed (exit {code}); see {log_file}")


class Stages:
    """Stage bookkeeping: ``<out>/stages/<name>.json`` holds the settings hash, the wall time and the CPU time (user +
    sys of its child processes: the machine is shared, so wall time is noisy) of a finished stage;
    ``<out>/logs/<name>.log`` the output of its commands. One line is printed per stage."""

    def __init__(self, out: Path, fresh: bool, only: list[str] | None = None):
        self.out = out
        self.logs = out / "logs"
        self.fresh = fresh
        self.only = only
        self.times: dict[str, dict] = {}

    def __call__(self, name: str, settings: Any, outputs: list[Path], fn) -> None:
        if self.only is not None and not any(fnmatch.fnmatch(name, pattern) for pattern in self.only):
            return
        key = report_mod.stage_key(settings)
        marker = report_mod.stage_record(self.out, name)
        if not self.fresh and marker.is_file() and all(p.exists() for p in outputs):
            done = json.loads(marker.read_text())
            if done.get("key") == key:
                self.times[name] = {"wall_s": done["wall_s"], "cpu_s": done.get("cpu_s"), "reused": True}
                log(f"[demo] {name:<22} reused ({done['wall_s']:.0f} s when built)")
                return
        marker.unlink(missing_ok=True)
        (self.logs / f"{name.replace('/', '_')}.log").unlink(missing_ok=True)  # a stage's log holds its latest run
        t0, c0 = time.monotonic(), _children_cpu()
        fn()
        wall, cpu = time.monotonic() - t0, _children_cpu() - c0
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({"key": key, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}))
        self.times[name] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "reused": False}
        log(f"[demo] {name:<22} done in {wall:.0f} s (cpu {cpu:.0f} s)")


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes (and this one)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def stage_env(cfg: dict) -> dict:
    """Environment of every child process: offline, fixed thread counts, no CUDA, deterministic hashing."""
    env = dict(os.environ)
    threads = str(cfg["threads"])
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads, CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0",
               DISABLE_VERSION_CHECK="1")
    return env


def load_profile(ap: argparse.ArgumentParser, config: Path, profile: str) -> dict:
    """Profile ``profile`` of the YAML file ``config`` (a mapping of profiles); an unknown name is ``ap``'s usage
    error listing the file's profiles."""
    import yaml

    profiles = yaml.safe_load(config.read_text())
    if profile not in profiles:
        ap.error(f"--profile {profile!r}: not in {config} (has {', '.join(profiles)})")
    return profiles[profile]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "demo")
    ap.add_argument("--profile", default="full", help="config.yaml profile: full (make demo) or ci (tests)")
    ap.add_argument("--config", type=Path, default=HERE / "config.yaml")
    ap.add_argument("--shared-data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--seed", type=int, help="training seed (the model's random weights, SFT, GRPO) instead of the "
                    "profile's; `make demo-seeds` runs several")
    ap.add_argument("--fresh", action="store_true", help="redo every stage even when its output is current")
    ap.add_argument("--only", nargs="+", metavar="STAGE", help="build only these stages (shell patterns such as "
                    "'grpo_*'; the stages they need must be built already) and write no report: independent stages "
                    "can run as parallel processes on one --out")
    args = ap.parse_args(argv)
    cfg = load_profile(ap, args.config, args.profile)
    if args.seed is not None:
        cfg["seed"] = args.seed
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not sys.stderr.isatty():  # the hand-offs load models in this process: no progress bars off a terminal
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    env = stage_env(cfg)
    logs = out / "logs"
    stages = Stages(out, args.fresh, args.only)
    t_start = time.monotonic()
    px = ["--min-pixels", cfg["min_pixels"], "--max-pixels", cfg["max_pixels"]]
    ga = [RL / "gui-agent"]
    cur = cfg["curriculum"]

    data = out / "data"
    conv = [*ga, "data", "convert", "--from", "unified", "--template", cfg["template"], *px, "--overwrite"]
    world = [*ga, "world", "export", "--levels", "high", "--overwrite"]  # a stage rebuilds its data

    # Real screenshots: ``{folder of ../shared/data: gui-agent data convert --from reader}``, the folders present.
    real = {name: args.shared_data / name for name in (cfg["data"].get("real") or {})
            if (args.shared_data / name).is_dir()}
    # Each stage's settings: only what it depends on, so a change rebuilds that stage and the ones after it.
    common = {k: cfg[k] for k in ("seed", "threads", "model", "template", "min_pixels", "max_pixels")}
    data_key = {**common, "data": cfg["data"], "curriculum_data": {k: cur[k] for k in CURRICULUM_DATA},
                "real": {k: str(v.resolve()) for k, v in real.items()}}
    measure = {"eval": cfg["eval"], "rollout": cfg["rollout"]}
    cur_measure = {"eval": cfg["eval"], "episodes": cur["episodes"], "max_steps": cur["max_steps"]}
    sft_key = {**data_key, "sft": cfg["sft"]}

    # 1. model
    base = out / "models" / "base"
    tied = "--tied-embeddings" if cfg["model"]["tied_embeddings"] else "--untied-embeddings"
    stages("model", report_mod.model_settings(cfg), [base],
           lambda: run([*ga, "tiny-model", "--output", base, "--seed", cfg["seed"], tied, "--overwrite"],
                       logs / "model.log", env=env))

    # 2. data

    def build_data() -> None:
        d = cfg["data"]
        dlog = logs / "data.log"
        run([*world, "--split", "train", "--n", d["train_tasks"], "--output", data / "train.parquet"], dlog, env=env)
        run([*world, "--split", "test_seed", "--n", d["heldout_seed_tasks"], "--output", data / "heldout_seed.parquet"],
            dlog, env=env)
        run([*world, "--split", "test_family", "--n", d["heldout_family_tasks"], "--output",
             data / "heldout_family.parquet"], dlog, env=env)
        # One held-out parquet (both splits) so infer/eval/score see one file.
        run([RL / "python", HERE / "report.py", "concat", data / "heldout.parquet", data / "heldout_seed.parquet",
             data / "heldout_family.parquet"], dlog, env=env)
        # The curriculum: train, validation (settings and curves) and test (the reported numbers) layout seeds.
        parts = []  # the training rows, part by part: families, their first N tasks, goals per start screen
        for i, part in enumerate(cur["train"]):
            parts.append(data / f"curriculum_train_{i}.parquet")
            run([*world, "--split", "curriculum_train", "--families", ",".join(part["families"]), "--n", part["tasks"],
                 "--instructions-per-screen", part["instructions_per_screen"], "--output", parts[-1]], dlog, env=env)
        run([RL / "python", HERE / "report.py", "concat", data / "curriculum_train.parquet", *parts], dlog, env=env)
        for split in ("val", "test"):
            run([*world, "--split", f"curriculum_{split}", "--n", cur[f"{split}_tasks"], "--output",
                 data / f"curriculum_{split}.parquet"], dlog, env=env)
        for name in ("train", "curriculum_train"):
            run([*conv, "--to", "llamafactory", "--input", data / f"{name}.parquet", "--output",
                 data / "lf" / LF_DATASETS[name], "--name", LF_DATASETS[name]], dlog, env=env)
        for name in ("train", "heldout", "curriculum_train", "curriculum_val", "curriculum_test"):
            run([*conv, "--to", "vlmr1", "--input", data / f"{name}.parquet", "--output",
                 data / "vlmr1", "--name", name], dlog, env=env)
        for name, folder in real.items():
            reader = ["data", "convert", "--from", cfg["data"]["real"][name], "--input", folder, "--template",
                      cfg["template"], *px, "--overwrite"]
            run([*ga, *reader, "--to", "llamafactory", "--output", data / "lf" / name, "--name", name], dlog, env=env)
            run([*ga, *reader, "--to", "vlmr1", "--output", data / "vlmr1", "--name", name], dlog, env=env)

    stages("data", data_key, [data / "heldout.parquet", data / "lf" / "dataset_info.json",
                              data / "vlmr1" / "curriculum_test.jsonl"], build_data)

    # 3-5. evaluations and training
    grpo_runs = list(cfg["grpo"]["runs"])
    models = {"before_sft": base, "after_sft": out / "models" / "sft",
              **{f"after_grpo_{r}": out / "models" / f"grpo_{r}" for r in grpo_runs}}
    models["after_grpo"] = models["after_grpo_r1gui"]  # the realistic-phone table's GRPO model: GUI-R1's reward

    def evaluate(sdir: Path, log_file: Path, *, model: Path | None = None, baseline: str | None = None,
                 heldout: str = "heldout", tasks: str = "test", episodes: int | None = None,
                 max_steps: int | None = None, full_eval: bool = True) -> None:
        """The held-out screens ``data/<heldout>.parquet`` and the online episodes of ``tasks`` answered by the hf
        ``model``, or without one by the ``baseline`` (random / centre); ``full_eval`` adds GUI-R1's evaluator in
        both metric modes."""
        shutil.rmtree(sdir, ignore_errors=True)
        pred = sdir / "predictions" / f"{BENCHMARK}_test.json"
        e, r = cfg["eval"], cfg["rollout"]
        hf = ["--backend", "hf", "--model", model, "--max-new-tokens", e["max_new_tokens"], "--device", "cpu"]
        run([*ga, "infer", *(hf if model else ["--backend", "baseline", "--model", baseline]), "--input",
             data / f"{heldout}.parquet", "--output", pred, *px, "--prompt", cfg["template"], "--batch-size",
             e["batch_size"], "--seed", cfg["seed"]], log_file, env=env, show=model is not None)
        if full_eval:
            run(["bash", ROOT / "experiments/guir1/eval.sh", pred.parent, sdir / "eval"], log_file, env=env)
        run([RL / "python", HERE / "report.py", "score", pred, data / "vlmr1" / f"{heldout}.jsonl",
             sdir / "scored.jsonl"], log_file, env=env)
        if episodes == 0:
            return
        run([*ga, "rollout", *(hf if model else ["--policy", baseline]), "--template", cfg["template"], "--env",
             "sim-phone", "--tasks", tasks,
             "--episodes", episodes or r["episodes"], "--max-steps", max_steps or r["max_steps"], "--seed", cfg["seed"],
             *px, "--output", sdir / "rollout"], log_file, env=env, show=model is not None)

    def curve(checkpoints: Path, name: str, processor_from: Path, heldout: str = "curriculum_val",
              every: int = 1) -> None:
        """Accuracy on ``data/<heldout>.parquet`` (a validation set) of every ``checkpoint-<step>`` under
        ``checkpoints`` whose step is a multiple of ``every``: the points ``[step, accuracy]`` of run ``name``'s
        curve, in ``curves/<name>.json``."""
        points = []
        for ckpt in sorted(checkpoints.glob("checkpoint-*"), key=lambda p: int(p.name.rsplit("-", 1)[1])):
            if int(ckpt.name.rsplit("-", 1)[1]) % every:
                continue
            for f in PROCESSOR_FILES:  # trainers save the weights; inference also needs the processor
                if not (ckpt / f).exists() and (processor_from / f).exists():
                    shutil.copy2(processor_from / f, ckpt / f)
            sdir = out / "curves" / name / ckpt.name
            evaluate(sdir, logs / f"curve_{name}.log", model=ckpt, heldout=heldout, episodes=0, full_eval=False)
            points.append([int(ckpt.name.rsplit("-", 1)[1]), curriculum.curve_accuracy(sdir / "scored.jsonl")])
        atomic_write_text(out / "curves" / f"{name}.json", json.dumps(points) + "\n")

    def evaluate_model(stage: str) -> None:
        evaluate(out / "stages_out" / stage, logs / f"{stage}.log", model=models[stage])

    def eval_outputs(stage: str) -> list[Path]:
        sdir = out / "stages_out" / stage
        return [sdir / "scored.jsonl", sdir / "rollout" / "summary.json", sdir / "eval" / "strict" / "report.json"]

    stages("before_sft", {**data_key, **measure}, eval_outputs("before_sft"), lambda: evaluate_model("before_sft"))

    def train_sft(start: Path, datasets: list[str], overrides: dict, raw: Path, log_name: str) -> None:
        """``llamafactory-cli train`` on the shipped full-SFT YAML from ``start`` into ``raw`` (replaced; its log
        ``logs/<log_name>.log`` too)."""
        shutil.rmtree(raw, ignore_errors=True)
        (logs / f"{log_name}.log").unlink(missing_ok=True)
        overrides = {**overrides, "model_name_or_path": start, "dataset": ",".join(datasets),
                     "dataset_dir": data / "lf", "output_dir": raw, "template": "qwen2_vl",
                     "image_max_pixels": cfg["max_pixels"], "image_min_pixels": cfg["min_pixels"],
                     "seed": cfg["seed"], "data_seed": cfg["seed"], "report_to": "none",
                     # CPU-safe settings, as `make sft-llamafactory` sets them without CUDA (mk/sft.mk)
                     "bf16": "false", "deepspeed": "null", "dataloader_num_workers": 0, "preprocessing_num_workers": 1}
        run([LF / "llamafactory-cli", "train", ROOT / cfg["sft"]["yaml"], *[f"{k}={v}" for k, v in overrides.items()]],
            logs / f"{log_name}.log", cwd=ROOT / "LLaMA-Factory", env=env, show=True)

    def sft() -> None:
        raw = out / "models" / "sft-llamafactory"
        train_sft(base, [LF_DATASETS["train"], LF_DATASETS["curriculum_train"], *real], cfg["sft"]["overrides"], raw,
                  "sft")
        handoff(raw, models["after_sft"], processor_from=base)
        curve(raw, "sft", base, every=cfg["sft"].get("curve_every", 1))

    stages("sft", sft_key, [models["after_sft"], out / "models" / "sft-llamafactory", out / "curves" / "sft.json"],
           sft)
    stages("after_sft", {**sft_key, **measure}, eval_outputs("after_sft"), lambda: evaluate_model("after_sft"))

    # GRPO's prompts: the first N curriculum_train tasks, one goal per screen, every family (its own stage, so a
    # change reruns only GRPO).
    def grpo_data() -> None:
        run([*world, "--split", "curriculum_train", "--n", cfg["grpo"]["prompt_tasks"], "--output",
             data / "curriculum_grpo.parquet"], logs / "grpo_data.log", env=env)
        run([*conv, "--to", "vlmr1", "--input", data / "curriculum_grpo.parquet", "--output", data / "vlmr1",
             "--name", "curriculum_grpo"], logs / "grpo_data.log", env=env)

    stages("grpo_data", {**common, "prompt_tasks": cfg["grpo"]["prompt_tasks"]},
           [data / "vlmr1" / "curriculum_grpo.hf"], grpo_data)

    def train_grpo(start: Path, dataset: Path, flags: dict, dst: Path, log_name: str) -> None:
        """``VLM-R1/grpo.py`` (trl ``GRPOTrainer``) on the GUI-R1 recipe from ``start`` into ``dst`` (replaced; its
        log ``logs/<log_name>.log`` too: the report reads the training reward there)."""
        shutil.rmtree(dst, ignore_errors=True)
        (logs / f"{log_name}.log").unlink(missing_ok=True)
        flags = {**flags, "seed": cfg["seed"], "bf16": "false", "use_cpu": "true", "use_vllm": "false",
                 "dataloader_num_workers": 0, "report_to": "none", "min_pixels": cfg["min_pixels"],
                 "max_pixels": cfg["max_pixels"]}
        args = []
        for k, v in flags.items():
            args += [f"--{k}", *(v if isinstance(v, list) else [v])]
        run([RL / "python", ROOT / "VLM-R1/grpo.py", "--config", ROOT / cfg["grpo"]["recipe"], "--model_name_or_path",
             start, "--dataset", dataset, "--output_dir", dst, *args], logs / f"{log_name}.log", env=env, show=True)

    def grpo(run_name: str) -> None:
        g = cfg["grpo"]
        dst = models[f"after_grpo_{run_name}"]
        train_grpo(models["after_sft"], data / "vlmr1" / "curriculum_grpo.hf", {**g["flags"], **(g["runs"][run_name] or {})},
                   dst, f"grpo_{run_name}")
        curve(dst, f"grpo_{run_name}", models["after_sft"])

    # Each GRPO run's settings: the shared flags and its own (a change to one run rebuilds only that run).
    grpo_keys = {r: {**sft_key, "grpo": {k: v for k, v in cfg["grpo"].items() if k != "runs"},
                     "run": cfg["grpo"]["runs"][r]} for r in grpo_runs}
    for r in grpo_runs:
        stages(f"grpo_{r}", grpo_keys[r], [models[f"after_grpo_{r}"] / "config.json",
                                           out / "curves" / f"grpo_{r}.json"], lambda r=r: grpo(r))
    stages("after_grpo", {**grpo_keys["r1gui"], **measure}, eval_outputs("after_grpo"),
           lambda: evaluate_model("after_grpo"))

    def baselines() -> None:
        for policy in report_mod.BASELINES:
            evaluate(out / "stages_out" / "baselines" / policy, logs / "baselines.log", baseline=policy)

    stages("baselines", {**data_key, **measure}, [p for b in report_mod.BASELINES for p in eval_outputs(f"baselines/{b}")],
           baselines)

    # 6. the curriculum's test screens and episodes, each stage on the same screens
    def evaluate_curriculum(stage: str) -> None:
        model = None if stage == "random" else models[stage]
        evaluate(out / "curriculum" / stage, logs / f"curriculum_{stage}.log", model=model,
                 baseline="random" if model is None else None, heldout="curriculum_test", tasks="curriculum_test",
                 episodes=cur["episodes"], max_steps=cur["max_steps"], full_eval=False)

    for stage in curriculum.STAGES:
        trained = {"random": data_key, "after_sft": sft_key}.get(stage) or grpo_keys[stage.removeprefix("after_grpo_")]
        key = {**trained, **cur_measure, "stage": stage}
        outputs = [out / "curriculum" / stage / "scored.jsonl", out / "curriculum" / stage / "rollout" / "summary.json"]
        stages(f"curriculum/{stage}", key, outputs, lambda stage=stage: evaluate_curriculum(stage))

    # 7. sharpening (issue 40): from the SFT checkpoint that partly reads the families on validation, GRPO with the
    # r1gui reward, its shuffled-reward control and SFT continued for the same CPU time; all from the same start.
    sh = cfg["sharpen"]
    sh_models = out / "models" / "sharpen"
    sh_out = out / "sharpen"
    sh_fams = [*sh["families"], *sh["anchors"]]
    # Prompts from layout seeds after those SFT and the every-family GRPO took (curriculum_train lists seed by seed).
    used_seeds = max([math.ceil(p["tasks"] / len(p["families"])) for p in cur["train"]]
                     + [math.ceil(cfg["grpo"]["prompt_tasks"] / len(CURRICULUM_SPLITS["curriculum_train"][0]))])
    sh_data_key = {**data_key, "sharpen": {k: sh[k] for k in ("families", "anchors", "prompt_tasks", "val_tasks",
                                                               "test_tasks", "instructions_per_screen")},
                   "used_seeds": used_seeds}

    def sharpen_data() -> None:
        dlog = logs / "sharpen_data.log"
        # Every instruction of a screen (all 4 directions), in seed order: the prompts and rows trained, and the
        # family screens measured.
        run([*world, "--split", "curriculum_train", "--families", ",".join(sh_fams), "--skip",
             used_seeds * len(sh_fams), "--n", sh["prompt_tasks"], "--instructions-per-screen",
             sh["instructions_per_screen"], "--output", data / "sharpen_train.parquet"], dlog, env=env)
        for split in ("val", "test"):
            run([*world, "--split", f"curriculum_{split}", "--families", ",".join(sh["families"]), "--n",
                 sh[f"{split}_tasks"], "--instructions-per-screen", sh["instructions_per_screen"], "--output",
                 data / f"sharpen_{split}.parquet"], dlog, env=env)
        run([*conv, "--to", "llamafactory", "--input", data / "sharpen_train.parquet", "--output",
             data / "lf" / "sharpen", "--name", "sharpen"], dlog, env=env)
        for name in ("sharpen_train", "sharpen_val", "sharpen_test"):
            run([*conv, "--to", "vlmr1", "--input", data / f"{name}.parquet", "--output", data / "vlmr1", "--name",
                 name], dlog, env=env)

    stages("sharpen_data", sh_data_key, [data / "vlmr1" / "sharpen_test.jsonl", data / "vlmr1" / "sharpen_train.hf",
                                         data / "lf" / "sharpen"], sharpen_data)
    sft_raw = out / "models" / "sft-llamafactory"
    start_key = {**sft_key, **sh_data_key, "band": sh["start_band"], "eval": cfg["eval"]}

    def sharpen_start() -> None:
        """The SFT checkpoints answer the families' validation screens, the last first, until one lies inside the
        band (the rule takes the latest such one, so the earlier ones need no answers); the start is chosen by the
        band among those answered."""
        low, high = sh["start_band"]
        candidates = []
        for ckpt in sorted(sft_raw.glob("checkpoint-*"), key=lambda p: -int(p.name.rsplit("-", 1)[1])):
            for f in PROCESSOR_FILES:
                if not (ckpt / f).exists() and (base / f).exists():
                    shutil.copy2(base / f, ckpt / f)
            sdir = sh_out / "select" / ckpt.name
            evaluate(sdir, logs / "sharpen_start.log", model=ckpt, heldout="sharpen_val", episodes=0, full_eval=False)
            candidates.insert(0, (int(ckpt.name.rsplit("-", 1)[1]), curriculum.curve_accuracy(sdir / "scored.jsonl")))
            if low <= candidates[0][1] <= high:
                break
        choice = {"families": sh["families"], **sharpen.choose_start(candidates, low, high)}
        sh_models.mkdir(parents=True, exist_ok=True)
        handoff(sft_raw / f"checkpoint-{choice['step']}", sh_models / "start", processor_from=base)
        atomic_write_text(sh_out / "start.json", json.dumps(choice, indent=1) + "\n")

    stages("sharpen_start", start_key, [sh_out / "start.json", sh_models / "start" / "config.json"], sharpen_start)
    run_keys = {name: {**start_key, "grpo": {k: v for k, v in cfg["grpo"].items() if k != "runs"},
                       "run": sh["runs"][name]} for name in sharpen.RUNS.values()}

    def sharpen_train(name: str) -> None:
        dst = sh_models / name
        if name == sharpen.SFT_RUN:  # LLaMA-Factory from the start's own checkpoint, on the prompts' gold answers
            step = json.loads((sh_out / "start.json").read_text())["step"]
            raw = sh_models / f"{name}-llamafactory"
            train_sft(sft_raw / f"checkpoint-{step}", ["sharpen"], {**cfg["sft"]["overrides"], **sh["runs"][name]},
                      raw, "sharpen_more_sft")
            handoff(raw, dst, processor_from=base)
        else:
            train_grpo(sh_models / "start", data / "vlmr1" / "sharpen_train.hf",
                       {**cfg["grpo"]["flags"], **(sh["runs"][name] or {})}, dst, f"grpo_sharpen_{name}")

    def sharpen_curve(name: str) -> None:
        raw = sh_models / (f"{name}-llamafactory" if name == sharpen.SFT_RUN else name)
        curve(raw, f"sharpen_{name}", sh_models / "start", heldout="sharpen_val")

    for name in sharpen.RUNS.values():
        stages(f"sharpen/train_{name}", run_keys[name], [sh_models / name / "config.json"],
               lambda name=name: sharpen_train(name))
        stages(f"sharpen/curve_{name}", run_keys[name], [out / "curves" / f"sharpen_{name}.json"],
               lambda name=name: sharpen_curve(name))

    def sharpen_eval(stage: str) -> None:
        model = sh_models / ("start" if stage == "start" else sharpen.RUNS[stage])
        for part, heldout in (("family", "sharpen_test"), ("whole", "curriculum_test")):
            evaluate(sh_out / stage / part, logs / f"sharpen_{stage}.log", model=model, heldout=heldout, episodes=0,
                     full_eval=False)

    for stage in sharpen.STAGES:
        key = {**(start_key if stage == "start" else run_keys[sharpen.RUNS[stage]]), **cur_measure}
        stages(f"sharpen/{stage}", key, [sh_out / stage / part / "scored.jsonl" for part in ("family", "whole")],
               lambda stage=stage: sharpen_eval(stage))

    if args.only is not None:
        return 0
    folder = report_mod.write_report(out, profile=args.profile, times=stages.times, real=real,
                                     total_s=time.monotonic() - t_start)
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
