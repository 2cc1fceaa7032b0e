"""`make` variables are never evaluated by a shell (issue "Reliability, round 4", item 1; docs/reliability.md,
"Make variables"): a hostile value on every target that takes one, under `make -n` and in real runs, creates no
file; names are refused by make itself, before anything runs."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Each hostile value, {p} the file it would create if a shell evaluated it.
HOSTILE = ["x';touch {p};'", "`touch {p}`", "$$(touch {p})", 'x"; touch {p}; "', "a b;touch {p}", "x'\\''$$(touch {p})",
           # make's own functions (issue 50 item 11): a command-line value is read unexpanded, never run by make
           "$(shell touch {p})", "x $(file >{p},touch)"]
#: Every target and the user values (paths, lists) it puts on a command line.
TARGETS = {
    "grpo-verl": ["MODEL", "GRPO_RECIPE", "VERL_DATA", "LOG_ROOT", "ARGS", "RECIPE_MODEL"],
    "grpo-trl": ["MODEL", "TRL_RECIPE", "TRL_DATA", "TRL_OUTPUT", "LOG_ROOT", "ARGS"],
    "grpo-swift": ["MODEL", "SWIFT_GRPO_RECIPE", "SWIFT_GRPO_DATA", "SWIFT_GRPO_OUTPUT", "SWIFT_GRPO_TEMPLATE", "ARGS"],
    "sft-llamafactory": ["MODEL", "SFT_RECIPE", "SFT_LF_DATA_DIR", "SFT_OUTPUT", "SFT_LF_TEMPLATE", "LOG_ROOT", "ARGS"],
    "sft-swift": ["MODEL", "SWIFT_DATA", "SFT_SWIFT_OUTPUT", "SFT_SWIFT_TEMPLATE", "LOG_ROOT", "ARGS"],
    "download-model": ["MODEL"],
    "gui-agent-data": ["AGENT_RECIPE", "AGENT_DATA", "AGENT_DEMO_SAMPLES"],
    "grpo-verl-agent": ["MODEL", "AGENT_DATA", "AGENT_RECIPE", "DRY_RUN", "ARGS"],
    "data": ["GUIR1_DIR", "DATA_ROOT", "LF_DATA_DIR", "DATA_TARGETS", "DATA_RECIPE", "DATA_WORKERS", "DATA_ARGS",
             "DATA_PIXELS"],
    "data-convert": ["DATA_INPUT", "DATA_FROM", "DATA_OUT", "DATA_IMAGES", "DATA_TARGETS", "DATA_ARGS"],
    "data-inspect": ["DATA_INPUT", "DATA_FROM", "DATA_IMAGES"],
    "data-download": ["GUIR1_DIR", "HFD_ARGS"],
    "infer": ["MODEL_PATH", "INFER_DATA", "PRED_DIR", "INFER_BACKEND", "INFER_PRESET", "INFER_PROMPT", "INFER_ARGS"],
    "infer-one": ["MODEL_PATH", "INFER_INPUT", "INFER_OUTPUT", "INFER_PRESET", "INFER_MAX_PIXELS", "INFER_ARGS"],
    "eval": ["PRED_DIR", "EVAL_OUT", "EVAL_MODES", "EVAL_BENCHMARK"],
    "bench-eval": ["BENCH_ARGS"],
    "demo": ["DEMO_OUT", "SHARED_DATA", "DEMO_ARGS"],
    "demo-seeds": ["DEMO_SEEDS", "DEMO_SEEDS_OUT", "SHARED_DATA"],
    "test": ["PYTEST_ARGS"],
    "test-all": ["PYTEST_ARGS"],
    "test-fast": ["PYTEST_ARGS"],
    "test-inference": ["PYTEST_ARGS"],
    "setup-web": ["CHROMIUM", "CHROMEDRIVER"],
    "setup-gpu": ["GPU_WORK"],
    "setup-gpu-check": ["GPU_WORK"],
    "bench-miniwob": ["BENCH_ARGS"],
    "bench-parsers": ["BENCH_ARGS"],
}
#: Word lists (mk/shell.mk qwords): split at whitespace, each word one quoted argument.
WORD_LISTS = {"ARGS", "BENCH_ARGS", "DATA_ARGS", "DATA_INPUT", "DATA_PIXELS", "DATA_TARGETS", "DEMO_ARGS", "DEMO_SEEDS",
              "HFD_ARGS", "INFER_ARGS", "PYTEST_ARGS"}
#: Targets whose recipes take no user value: only the fixed environment folders (VENVS, RL...), refused when set.
NO_VALUES = ["docs", "lint"]
#: Values make itself checks (names): refused with one line, exit 2, whatever they hold.
NAMES = {"DATASET": ["sft-llamafactory", "data"], "SWIFT_TUNER": ["sft-swift"],
         "LOGGER": ["grpo-verl", "grpo-trl", "grpo-swift", "sft-llamafactory", "sft-swift", "grpo-verl-agent"],
         "AGENT_DEVICE": ["grpo-verl-agent"]}
SKIP_ENVS = ["-o", ".venvs/rl/.ready", "-o", ".venvs/llamafactory/.ready", "-o", ".venvs/base/.ready"]


def make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", *SKIP_ENVS, *args], cwd=REPO, capture_output=True, text=True,
                          check=False, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def q(word: str) -> str:
    """mk/shell.mk's q: bare when safe, else single-quoted with each ' written '\\''."""
    return word if re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", word) else "'" + word.replace("'", "'\\''") + "'"


def unquoted(text: str, word: str) -> list[int]:
    """Where ``word`` stands in the shell ``text`` outside single quotes: what bash would read as code, not as
    text. Double quotes are followed (a ' inside them quotes nothing), and so is ``$(...)`` inside them (quotes
    count again there); a backslash escapes the next character outside single quotes."""
    found, stack, i = [], ["top"], 0  # top (also inside $(...)), dq, sq
    while i < len(text):
        state, c = stack[-1], text[i]
        if text.startswith(word, i) and state != "sq":
            found.append(i)
        if state == "sq":
            if c == "'":
                stack.pop()
        elif c == "\\":
            i += 1
        elif state == "dq" and c == '"':
            stack.pop()
        elif state == "dq" and text.startswith("$(", i):
            stack.append("cmd")
            i += 1
        elif state != "dq" and c in "'\"":
            stack.append("sq" if c == "'" else "dq")
        elif state == "cmd" and c == ")":
            stack.pop()
        i += 1
    return found


def test_the_quote_checker_sees_code():
    assert len(unquoted("echo 'a touch' \"b 'touch'\" touch", "touch")) == 2  # in "...", ' quotes nothing
    assert len(unquoted("x \"$(echo 'touch') touch\" 'x'\\''touch'", "touch")) == 1  # $(...) quotes again
    assert unquoted("echo x'\\'' touch' 'a\"b touch'", "touch") == []


def needs(target: str) -> list[str]:
    """What a target needs to reach its command line under `make -n` (otherwise a required value is empty)."""
    return {"infer-one": ["MODEL_PATH=m", "INFER_INPUT=i", "INFER_OUTPUT=o", "INFER_BACKEND=hf"],
            "data-convert": ["DATA_FROM=screenagent", "DATA_INPUT=x"], "data-inspect": ["DATA_INPUT=x"],
            "infer": ["MODEL_PATH=m"], "grpo-verl": ["DRY_RUN=1"], "grpo-verl-agent": ["DRY_RUN=1"]}.get(target, [])


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_make_n_never_evaluates_a_hostile_value(target, value, tmp_path):
    pwned = tmp_path / "pwned"
    hostile = value.format(p=pwned)
    for var in TARGETS[target]:
        r = make("-n", target, *needs(target), f"{var}={hostile}")
        assert not pwned.exists(), (target, var, r.stdout)
        assert r.returncode == 0, (target, var, r.stderr)
        assert "touch" in r.stdout or var in ("RECIPE_MODEL",), (target, var)  # the value did reach a command
        shown = r.stdout
        if var in WORD_LISTS:  # each word one argument, quoted (or the whole list one quoted word: infer)
            shown = shown.replace(" ".join(map(q, hostile.replace("$$", "$").split())), "WORDS")
        assert not unquoted(shown, "touch"), (target, var, shown)  # the value is only quoted text


def test_default_values_give_the_same_commands():
    """CI runs `make setup-web && make test`: with no value given their commands are the documented ones (make test:
    two xdist workers without the repeat tests, docs/testing.md)."""
    xdist = "-n 2"  # two xdist workers (docs/testing.md)
    assert make("-n", "test").stdout.splitlines()[-1] == f'.venvs/rl/bin/python -m pytest {xdist} -m "not repeat" '
    assert make("-n", "test-all").stdout.splitlines()[-1] == f".venvs/rl/bin/python -m pytest {xdist} "
    assert make("-n", "test-fast").stdout.splitlines()[-1] == f'.venvs/rl/bin/python -m pytest {xdist} -m "not slow" '
    web = make("-n", "setup-web").stdout
    for line in ("if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \\",
                 ".venvs/rl/bin/pip install -q --disable-pip-version-check -c requirements/rl.lock.txt "
                 "-c requirements/web.lock.txt -r requirements/web.in",
                 "browser=$(/usr/bin/chromium --version 2>/dev/null | grep -oE '[0-9]+\\.[0-9.]+' | head -1); \\",
                 "driver=$(/usr/bin/chromedriver --version 2>/dev/null | grep -oE '[0-9]+\\.[0-9.]+' | head -1); \\"):
        assert line in web.splitlines(), line
    echo = next(x for x in web.splitlines() if "is missing" in x).split(">&2")[0]
    said = subprocess.run(["bash", "-c", echo], capture_output=True, text=True, check=True).stdout
    assert said == "setup-web: /usr/bin/chromium or /usr/bin/chromedriver is missing and installing them needs root;" \
                   " run:\n"
    assert make("-n", "test", "PYTEST_ARGS=-x -k parsers").stdout.splitlines()[-1] == \
        f'.venvs/rl/bin/python -m pytest {xdist} -m "not repeat" -x -k parsers'


@pytest.mark.parametrize("var", ["VENVS", "RL", "LF", "BASE"])
@pytest.mark.parametrize("target", [*NO_VALUES, "test", "setup-web", "setup-gpu-check"])
def test_the_environment_folders_cannot_be_set(target, var, tmp_path):
    """docs, lint (and every target) put only the environments' folders on their command lines: fixed, so a
    value given for one stops make in one line before anything runs."""
    pwned = tmp_path / "pwned"
    for value in HOSTILE[:4]:
        r = make("-n", target, f"{var}={value.format(p=pwned)}")
        assert r.returncode == 2 and r.stdout == "" and not pwned.exists(), (target, var, r.stdout)
        assert "VENVS, BASE, RL and LF are fixed" in r.stderr and r.stderr.count("\n") == 1
    assert make("-n", target, "VENVS=.venvs").returncode == 0


@pytest.mark.parametrize("target", ["download-model", "grpo-trl", "grpo-swift", "sft-llamafactory", "sft-swift",
                                    "grpo-verl", "grpo-verl-agent"])
def test_a_real_run_with_a_hostile_model_stops_in_one_line(target, tmp_path):
    pwned = tmp_path / "pwned"
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "train.parquet").write_bytes(b"")
    for value in ("x';touch {p};'", "`touch {p}`"):
        r = make(target, f"MODEL={value.format(p=pwned)}", f"AGENT_DATA={tmp_path / 'd'}", "DRY_RUN=1")
        assert r.returncode == 2 and not pwned.exists(), (target, r.stdout, r.stderr)
        assert "touch" in r.stdout + r.stderr  # the preflight named the value it refused


def test_a_real_run_with_a_hostile_agent_recipe_names_it(tmp_path):
    pwned = tmp_path / "pwned"
    r = make("gui-agent-data", f"AGENT_RECIPE=x';touch {pwned};'", f"AGENT_DATA={tmp_path / 'out'}")
    assert r.returncode == 2 and not pwned.exists()
    assert "recipe file not found" in r.stderr


@pytest.mark.parametrize(("var", "target"), [(v, t) for v, ts in NAMES.items() for t in ts])
def test_a_name_that_is_no_name_is_refused_by_make(var, target, tmp_path):
    pwned = tmp_path / "pwned"
    for value in (f"x';touch {pwned};'", f"`touch {pwned}`", "a b", ""):
        r = make("-n", target, *needs(target), f"{var}={value}")
        assert r.returncode == 2 and not pwned.exists() and r.stdout == "", (var, target, r.stdout)
        assert f"{target}: {var} must be" in r.stderr and r.stderr.count("\n") == 1


def test_recipe_model_is_computed_without_a_shell():
    """RECIPE_MODEL (the recipes/<model> folder) comes from make functions: same names as before."""
    for model, folder in [("Qwen/Qwen2.5-VL-3B-Instruct", "qwen2_5_vl_3b"), ("Qwen/Qwen3-VL-8B-Instruct", "qwen3_vl_8b"),
                          ("/models/My.Model-7B", "my_model_7b")]:
        out = make("-n", "grpo-verl", "DRY_RUN=1", f"MODEL={model}").stdout
        assert f"recipes/{folder}/grpo/config_guir1_verl.yaml" in out
