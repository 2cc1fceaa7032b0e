"""verl/main_ppo.sh, the one launcher of every verl recipe: what it hands verl's trainer on this machine. A stand-in
Python prints the command line and the plugin variables instead of training (the real runs are
tests/test_verl_cpu_training.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HAS_GPU = shutil.which("nvidia-smi") is not None and subprocess.run(
    ["nvidia-smi", "-L"], capture_output=True, check=False).returncode == 0


@pytest.fixture()
def launch(tmp_path):
    fake = tmp_path / "python"
    fake.write_text('#!/usr/bin/env bash\n[[ "$1" == -c ]] && exit 1\n'  # `import vllm` fails: not installed
                    'printf "ARG %s\\n" "$@"\necho "PLATFORM=${VERL_PLATFORM:-}"\n'
                    'echo "MODULES=$VERL_USE_EXTERNAL_MODULES"\necho "PYTHONPATH=$PYTHONPATH"\n')
    fake.chmod(0o755)

    def run(*args: str, **env: str) -> subprocess.CompletedProcess:
        base = {k: v for k, v in os.environ.items() if k not in ("VERL_PLATFORM", "ROLLOUT_ENGINE", "DRY_RUN")}
        return subprocess.run(["bash", str(REPO / "verl" / "main_ppo.sh"), *args], capture_output=True, text=True,
                              env={**base, "PYTHON": str(fake), "WHO": "t", **env}, check=False)

    return run


def args_of(proc: subprocess.CompletedProcess) -> list[str]:
    return [line[4:] for line in proc.stdout.splitlines() if line.startswith("ARG ")]


@pytest.mark.skipif(HAS_GPU, reason="a GPU machine")
def test_on_cpu_the_recipe_then_the_cpu_settings_then_the_users_overrides(launch):
    proc = launch("data.train_batch_size=512", "actor_rollout_ref.rollout.name=vllm", "--",
                  "data.train_batch_size=4")
    assert proc.returncode == 0, proc.stderr
    args = args_of(proc)
    assert args[:2] == ["-m", "verl.trainer.main_ppo"]
    assert args.index("data.train_batch_size=512") < args.index("data.train_batch_size=2") \
        < args.index("data.train_batch_size=4")  # the user's value comes last: it wins
    assert args.index("actor_rollout_ref.rollout.name=vllm") < args.index("actor_rollout_ref.rollout.name=hf")
    assert {"trainer.device=cpu", "actor_rollout_ref.actor.strategy=fsdp2", "++ray_kwargs.ray_init.num_gpus=1",
            "actor_rollout_ref.model.use_remove_padding=False", "actor_rollout_ref.model.use_fused_kernels=True",
            "actor_rollout_ref.model.fused_kernel_options.impl_backend=torch",
            "++ray_kwargs.ray_init.include_dashboard=False"} <= set(args)
    assert "t: no CUDA GPU found: verl on CPU (platform cpu" in proc.stdout
    assert "PLATFORM=cpu" in proc.stdout and "MODULES=verl_cpu_platform,verl_hf_rollout,verl_position_ids_fix" in proc.stdout
    assert f"PYTHONPATH={REPO}/verl/plugins:{REPO}/verl/gui_agent:{REPO}" in proc.stdout


def test_dry_run_checks_the_launch_as_on_a_gpu_machine(launch):
    proc = launch("data.train_batch_size=512", DRY_RUN="1")
    assert proc.returncode == 0, proc.stderr
    args = args_of(proc)
    assert args[0] == str(REPO / "verl" / "dry_run.py") and "data.train_batch_size=512" in args
    assert "actor_rollout_ref.rollout.name=vllm" in args and "trainer.device=cpu" not in args
    assert "no CUDA GPU found" not in proc.stdout


def test_engine_choices(launch):
    gpu_no_vllm = launch("x=1", VERL_PLATFORM="nvidia")
    assert gpu_no_vllm.returncode == 0 and "actor_rollout_ref.rollout.name=hf" in args_of(gpu_no_vllm)
    assert "t: vLLM is not installed: rollouts with transformers" in gpu_no_vllm.stdout
    assert "trainer.device=cpu" not in args_of(gpu_no_vllm)  # only the rollout changes on a GPU
    missing = launch("x=1", ROLLOUT_ENGINE="vllm")
    assert missing.returncode == 2 and missing.stderr.strip() == (
        "t: ROLLOUT_ENGINE=vllm is not installed (GPU: make setup-gpu; or ROLLOUT_ENGINE=hf)")
    bad = launch("x=1", ROLLOUT_ENGINE="v" * 10_000 + "; touch pwned")
    assert bad.returncode == 2 and len(bad.stderr) < 200 and "must be vllm, sglang or hf" in bad.stderr
    assert not (REPO / "pwned").exists()


@pytest.mark.parametrize("value", ["yes", "true", " 1", "1 ", "2", "dry"])
def test_dry_run_takes_1_or_empty_and_refuses_anything_else(launch, value):
    """``DRY_RUN=yes`` once started a real training run: now one line naming DRY_RUN, exit 2, before anything runs."""
    proc = launch("data.train_batch_size=4", DRY_RUN=value)
    assert proc.returncode == 2 and "ARG" not in proc.stdout, proc.stdout
    assert proc.stderr.count("\n") == 1 and "DRY_RUN must be 1" in proc.stderr and repr(value)[1:-1] in proc.stderr


@pytest.mark.skipif(HAS_GPU, reason="a GPU machine")
def test_dry_run_0_or_empty_trains(launch):
    for value in ("0", ""):
        proc = launch("data.train_batch_size=4", DRY_RUN=value)
        assert proc.returncode == 0 and args_of(proc)[:2] == ["-m", "verl.trainer.main_ppo"], proc.stderr


@pytest.mark.parametrize("value", ["CPU", " cpu", "cuda", "gpu", "nvidia ", "tpu"])
def test_verl_platform_is_one_of_verls_names_exactly(launch, value):
    """``VERL_PLATFORM=CPU`` picked verl's cpu platform without the launcher's CPU settings; an unknown name passed
    the dry run. One name check, before anything runs."""
    for dry in ("", "1"):
        proc = launch("data.train_batch_size=4", VERL_PLATFORM=value, DRY_RUN=dry)
        assert proc.returncode == 2 and "ARG" not in proc.stdout, proc.stdout
        assert proc.stderr.count("\n") == 1 and "VERL_PLATFORM must be empty" in proc.stderr


@pytest.mark.skipif(HAS_GPU, reason="a GPU machine")
@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "", "1000"])
def test_cpu_workers_is_a_whole_number_from_1(launch, value):
    proc = launch("data.train_batch_size=4", CPU_WORKERS=value) if value else launch("x=1", CPU_WORKERS="")
    if value == "":  # empty means the default, 1
        assert proc.returncode == 0 and "trainer.n_gpus_per_node=1" in args_of(proc), proc.stderr
        return
    assert proc.returncode == 2 and "ARG" not in proc.stdout
    assert proc.stderr.count("\n") == 1 and "CPU_WORKERS (training processes on the CPU) must be" in proc.stderr
