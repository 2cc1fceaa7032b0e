"""Round 4 of the reliability issue, through the commands as a user types them: the agent recipe's wrong types and
YAML alias bombs (items 12, 14), the verl dry run's numbers (item 11) and `world play`'s screenshot path and deep
JSON (item 15). Each is one error line naming the key or option, exit 2, never a traceback."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}

BOMB = "\n".join(["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
                 + [f"{k}: &{k} [{', '.join([f'*{p}'] * 9)}]" for p, k in zip("abcdefg", "bcdefgh", strict=True)]
                 + ["grid: [*h, *h, *h, *h, *h, *h, *h, *h, *h]"]) + "\n"


#: CPU seconds a command may use (a work bound, not a clock: a busy machine does not hit it); starting Python and
#: reading a recipe take about one. Past it the kernel stops the command (SIGXCPU), so the test fails instead of hanging.
CPU_S = 30


def _cpu_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_S, CPU_S))


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, env=ENV,
                          input=stdin, check=False, preexec_fn=_cpu_limit)


def one_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, r.stderr[-2000:]
    return errors[0]


@pytest.mark.parametrize(("recipe", "message"), [
    ("grid: [1, 2]\n", "grid: must be one of grid999, grid1000, pixels, got [1, 2]"),
    ("grid: {a: 1}\n", "grid: must be one of grid999, grid1000, pixels, got {'a': 1}"),
    ("on_invalid: [end]\n", "on_invalid: must be one of end, feedback, got ['end']"),
    ("aggregation: {x: 1}\n", "aggregation: must be one of mean, last"),
    ('prompt: "{instruction} {width[0]}"\n', "prompt: only {instruction}, {width}, {height} can be filled in"),
    ('prompt: "{instruction} {height.real.x}"\n', "prompt: only {instruction}"),
    ("{1: 2, max_turns: 3}\n", "unknown key(s) [1]"),
    (BOMB, "its YAML aliases expand to more than 100,000 values"),
    ("grid: &a [*a]\n", "its YAML aliases expand to more than 100,000 values"),
    ("grid: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
], ids=["grid list", "grid dict", "on_invalid list", "aggregation dict", "prompt index", "prompt attribute",
        "int key", "alias bomb", "alias cycle", "deep"])
def test_agent_recipe_shell_names_the_bad_key(tmp_path, recipe, message):
    path = tmp_path / "recipe.yaml"
    path.write_text(recipe)
    error = one_error(run("-m", "core.agent_recipe", "shell", str(path)))  # within CPU_S: an alias bomb is never expanded
    assert len(error) < 600  # bounded
    assert error.startswith(f"error: {path}: ") and message in error, error


def test_rollout_recipe_refuses_an_alias_bomb_and_a_list_grid(tmp_path):
    for text, message in ((BOMB, "YAML aliases expand"), ("grid: [1, 2]\n", "grid: must be one of")):
        (tmp_path / "r.yaml").write_text(text)
        r = run("-m", "core", "rollout", "--recipe", str(tmp_path / "r.yaml"), "--output", str(tmp_path / "o.jsonl"))
        assert r.returncode == 2 and "Traceback" not in r.stderr and message in r.stderr and len(r.stderr) < 2000


def test_a_value_below_the_alias_limit_is_quoted_within_bounds(tmp_path):
    """A shared structure under the limit still reaches the error, quoted in a bounded form."""
    (tmp_path / "r.yaml").write_text("grid: [&a [x, x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a],"
                                     " *b, *b, *b, *b, *b, *b, *b, *b]\n")
    error = one_error(run("-m", "core.agent_recipe", "shell", str(tmp_path / "r.yaml")))
    assert "grid: must be one of" in error and len(error) < 400


@pytest.mark.parametrize(("override", "message"), [
    ("actor_rollout_ref.actor.optim.lr=nan", "actor_rollout_ref.actor.optim.lr: must be a finite number, got nan"),
    ("actor_rollout_ref.actor.kl_loss_coef=inf", "actor_rollout_ref.actor.kl_loss_coef: must be a finite number"),
    ("actor_rollout_ref.rollout.n=0", "actor_rollout_ref.rollout.n: must be >= 1, got 0"),
    # round 5, item 3: the rollout's sampling values by the rules the hf rollout applies to every request
    ("actor_rollout_ref.rollout.temperature=-0.5", "actor_rollout_ref.rollout.temperature: must be >= 0, got -0.5"),
    ("actor_rollout_ref.rollout.top_p=0", "actor_rollout_ref.rollout.top_p: must be > 0, got 0"),
    ("actor_rollout_ref.rollout.top_p=1.5", "actor_rollout_ref.rollout.top_p: must be <= 1, got 1.5"),
    ("actor_rollout_ref.rollout.top_k=-3", "actor_rollout_ref.rollout.top_k: must be >= -1, got -3"),
    ("actor_rollout_ref.rollout.val_kwargs.temperature=nan",
     "actor_rollout_ref.rollout.val_kwargs.temperature: must be a finite number, got nan"),
    # issue 48: the RL methods' keys
    ("+algorithm.nsr_lambda=-1", "algorithm.nsr_lambda: must be >= 0, got -1"),
    ("+algorithm.gigpo.gamma=1.5", "algorithm.gigpo.gamma: must be <= 1, got 1.5"),
    ("+algorithm.gigpo.mode=mean", "algorithm.gigpo.mode must be one of mean_norm, mean_std_norm, got 'mean'"),
    ("+algorithm.replay.enable=True +algorithm.replay.capacity=0", "algorithm.replay.capacity: must be >= 1, got 0"),
])
def test_make_grpo_verl_dry_run_validates_the_numbers(override, message):
    """Round 4, item 11: `make grpo-verl DRY_RUN=1 ARGS=...` stops on the number, naming the key."""
    from core.testing import tiny_qwen25vl_path

    r = subprocess.run(["make", "-s", "-o", ".venvs/rl/.ready", "grpo-verl", "DRY_RUN=1",
                        f"MODEL={tiny_qwen25vl_path()}", "GRPO_RECIPE=recipes/qwen2_5_vl_3b/grpo/config_guir1_verl.yaml",
                        f"ARGS={override}"], cwd=REPO, capture_output=True, text=True, check=False)
    assert r.returncode != 0 and "dry run: OK" not in r.stdout
    assert f"error: config: {message}" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize("screenshot", ["folder", "shot.txt", "missing/shot.png"])
def test_world_play_refuses_a_screenshot_path_it_cannot_write(tmp_path, screenshot):
    (tmp_path / "folder").mkdir()
    r = run("-m", "core", "world", "play", "send_message-3", "--screenshot", str(tmp_path / screenshot), stdin="quit\n")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--screenshot" in r.stderr
    assert not (tmp_path / "shot.txt").exists()


def test_world_play_answers_deep_json_in_one_line(tmp_path):
    r = run("-m", "core", "world", "play", "send_message-3", "--screenshot", str(tmp_path / "s.png"),
            stdin="json " + "[" * 100_000 + "\ngold\nquit\n")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "invalid: json is nested too deeply" in r.stdout and "reward" in r.stdout  # and play goes on
