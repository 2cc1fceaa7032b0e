"""After `make setup`, `source .venvs/rl/bin/activate` runs every command the docs write (`gui-agent`, `python` with
`core`, `swift`, `llamafactory-cli` through its shim), and a repository script run by a Python without the
project's packages says in one line which command to use (exit 2, no traceback)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RL = REPO / ".venvs" / "rl"

# Every entry point, as the docs write it; `python -S` is a Python without site-packages (no project packages).
SCRIPTS = ["verl/prepare_gui_agent_data.py", "verl/dry_run.py", "VLM-R1/grpo.py", "VLM-R1/src/eval/test_rec_r1.py",
           "VLM-R1/src/eval/test_rec_baseline.py", "experiments/demo/run.py", "experiments/r1v/prepare_data.py",
           "experiments/r1v/evaluate.py", *sorted(str(p.relative_to(REPO)) for p in (REPO / "bench").glob("*.py"))]


def bare(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([sys.executable, "-S", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, check=False)


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_under_a_bare_python_names_the_command_in_one_line(script):
    r = bare(script, "--out", "x y")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "lacks typer" in r.stderr
    assert r.stderr.rstrip().endswith(f"run: source .venvs/rl/bin/activate && python {script} --out 'x y'")


def test_agent_recipe_under_a_bare_python_names_the_command_in_one_line():
    """`python -m core.agent_recipe shell` is the first thing run_gui_agent.sh runs (round 4, item 16)."""
    r = bare("-m", "core.agent_recipe", "shell", "my recipe.yaml")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.rstrip().endswith(
        "run: source .venvs/rl/bin/activate && python -m core.agent_recipe shell 'my recipe.yaml'")


def test_python_m_core_under_a_bare_python_names_gui_agent():
    r = bare("-m", "core", "eval", "--help")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("gui-agent: this Python (")
    assert r.stderr.rstrip().endswith("run: source .venvs/rl/bin/activate && gui-agent eval --help")


def test_the_hint_from_another_folder_uses_absolute_paths(tmp_path):
    r = bare(str(REPO / "VLM-R1" / "grpo.py"), cwd=tmp_path)
    assert r.returncode == 2
    assert f"run: source {RL}/bin/activate && python {REPO}/VLM-R1/grpo.py" in r.stderr


def test_scripts_still_run_in_the_rl_environment():
    r = subprocess.run([sys.executable, "VLM-R1/grpo.py", "--help"], cwd=REPO, capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "--model_name_or_path" in r.stdout


def activated(commands: str, path_prefix: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"
    script = f"set -e; source {RL}/bin/activate; {path_prefix}{commands}"
    return subprocess.run(["bash", "-c", script], cwd=REPO, capture_output=True, text=True, env=env,
                          check=False)


def test_activated_rl_environment_runs_gui_agent_python_and_swift():
    r = activated("command -v gui-agent python swift; gui-agent --help >/dev/null; "
                  "python -c 'import core.cli, sys; print(sys.prefix)'; swift sft --help | grep -c -- --tuner_backend")
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert [(Path(line).parent.resolve(), Path(line).name) for line in lines[:3]] == \
        [((RL / "bin").resolve(), n) for n in ("gui-agent", "python", "swift")]
    assert Path(lines[3]).resolve() == RL.resolve() and int(lines[4]) >= 1


def test_llamafactory_cli_shim_runs_llamafactory_from_its_own_environment(tmp_path):
    # The layout make_env.sh writes: .venvs/rl/bin/llamafactory-cli beside .venvs/llamafactory.
    venvs = tmp_path / ".venvs"
    (venvs / "rl" / "bin").mkdir(parents=True)
    shim = venvs / "rl" / "bin" / "llamafactory-cli"
    shutil.copy2(REPO / "scripts" / "llamafactory-cli", shim)
    r = subprocess.run([str(shim), "version"], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and r.stderr.strip().endswith("llamafactory-cli not found; run make setup")
    (venvs / "llamafactory").symlink_to((REPO / ".venvs" / "llamafactory").resolve())
    r = activated("llamafactory-cli version", path_prefix=f"PATH={shim.parent}:$PATH; ")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Welcome to LLaMA Factory, version 0.9.5" in r.stdout


def test_llamafactory_cli_shim_through_a_symlink_finds_its_environment(tmp_path):
    """A link to the installed shim (~/bin/llamafactory-cli, say) runs LLaMA-Factory's environment (round 4, 19)."""
    venvs = tmp_path / "repo" / ".venvs"
    (venvs / "rl" / "bin").mkdir(parents=True)
    (venvs / "llamafactory" / "bin").mkdir(parents=True)
    shim = venvs / "rl" / "bin" / "llamafactory-cli"
    shutil.copy2(REPO / "scripts" / "llamafactory-cli", shim)
    real = venvs / "llamafactory" / "bin" / "llamafactory-cli"
    real.write_text('#!/bin/sh\necho "ran $VIRTUAL_ENV $*"\n')
    real.chmod(0o755)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "llamafactory-cli").symlink_to(shim)
    (tmp_path / "bin" / "lf").symlink_to(tmp_path / "bin" / "llamafactory-cli")  # a link to a link
    for link in ("llamafactory-cli", "lf"):
        r = subprocess.run([str(tmp_path / "bin" / link), "version"], capture_output=True, text=True,
                           check=False)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == f"ran {venvs.resolve() / 'llamafactory'} version"


def test_make_env_installs_the_shim_into_the_rl_environment():
    dry = subprocess.run(["make", "-n", "-W", "scripts/llamafactory-cli", ".venvs/rl/.ready"], cwd=REPO,
                         capture_output=True, text=True, check=False)
    assert dry.stdout.strip() == "bash scripts/make_env.sh rl"  # a changed shim reinstalls the environment


def test_a_command_needing_the_rl_environment_names_it_from_the_base_one():
    # The base install (core + CLI) has no huggingface_hub; `gui-agent model` says where it runs.
    r = subprocess.run([str(REPO / ".venvs" / "base" / "bin" / "python"), "-m", "core", "model", "download", "Org/X"],
                       cwd=REPO, capture_output=True, text=True, check=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.rstrip().endswith("lacks huggingface_hub; run: source .venvs/rl/bin/activate && "
                                      "gui-agent model download Org/X")


def test_before_make_setup_the_hint_starts_with_make_setup(tmp_path):
    # A fresh clone: no .venvs/ yet.
    shutil.copytree(REPO / "core", tmp_path / "core", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "VLM-R1").mkdir()
    shutil.copy2(REPO / "VLM-R1" / "grpo.py", tmp_path / "VLM-R1" / "grpo.py")
    r = bare("VLM-R1/grpo.py", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.rstrip().endswith("run: make setup (in .), then source .venvs/rl/bin/activate && "
                                      "python VLM-R1/grpo.py")


def test_core_modules_are_pyprojects_dependencies():
    import tomllib

    from core.interpreter import CORE_MODULES

    import_names = {"pillow": "PIL"}
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [d.split(">")[0].split("=")[0].split("<")[0].strip().lower() for d in deps]
    assert sorted(import_names.get(n, n) for n in names) == sorted(CORE_MODULES)
