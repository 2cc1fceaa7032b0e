"""``--help`` of every project command imports no heavy framework (issue 38, item 6).

Measured by what is imported, never by wall time (a loaded machine must not fail a test): every ``gui-agent``
command's help is built in one subprocess that checks ``sys.modules`` after each, and every script of the repository
with a ``__main__`` block (``verl/prepare_gui_agent_data.py``, ``VLM-R1/grpo.py``, ``bench/*.py``, ``Data/utils/*.py``
...) runs ``--help`` in its own subprocess under ``PYTHONPROFILEIMPORTTIME`` (which also covers a script that
re-executes itself in another environment). Also here: help written to a pipe is wide enough that rich cuts no
option name or word (issue 38, item 10), and ``gui-agent --version``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Frameworks that take seconds to import; none may load to print help.
HEAVY = ("torch", "transformers", "verl", "datasets", "vllm", "trl", "ray", "deepspeed", "peft", "accelerate",
         "swift", "llamafactory", "tensorflow", "jax")
#: Folders whose scripts are upstream code or tests, not project commands.
NOT_COMMANDS = ("tests/", "LLaMA-Factory/", "ms-swift/", "VLM-R1/src/", ".venvs/", "outputs/")


def _env() -> dict[str, str]:
    """This checkout's ``core`` first (an editable install elsewhere must not answer), no width set by the user."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH", "PYTHONPROFILEIMPORTTIME")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def project_scripts() -> list[str]:
    """Every Python file of the repository with a ``__main__`` block outside upstream code and tests: scripts by
    path, ``core`` modules as ``-m core.x`` (``core/__main__.py`` is ``gui-agent``, walked below)."""
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=False)
    files = listed.stdout.split() if listed.returncode == 0 else [str(p.relative_to(REPO)) for p in REPO.rglob("*.py")]
    out = []
    for rel in sorted(files):
        if rel.startswith(NOT_COMMANDS) or rel == "core/__main__.py" or not (REPO / rel).is_file():
            continue
        if re.search(r"^if __name__ == .__main__.:", (REPO / rel).read_text(encoding="utf-8"), re.M):
            out.append(rel)
    return out


def heavy_imports(importtime_stderr: str) -> list[str]:
    """The :data:`HEAVY` top-level packages named in ``-X importtime`` lines."""
    names = {m.group(1).split(".")[0] for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)",
                                                           importtime_stderr, re.M)}
    return sorted(names & set(HEAVY))


def test_importtime_lines_are_read():
    stderr = ("import time: self [us] | cumulative | imported package\nimport time:       120 |        120 |   "
              "torch._C\nimport time:  5 |  5 | numpy\nusage: x.py [-h]\n")
    assert heavy_imports(stderr) == ["torch"]


SCRIPTS = project_scripts()


def test_the_scripts_are_found():
    assert {"verl/prepare_gui_agent_data.py", "VLM-R1/grpo.py", "bench/infer_memory.py",
            "Data/utils/convert_to_format.py", "core/recipes.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_help_imports_no_framework(script):
    command = ["-m", script[:-3].replace("/", ".")] if script.startswith("core/") else [script]
    r = subprocess.run([sys.executable, *command, "--help"], cwd=REPO, capture_output=True, text=True, check=False,
                       env={**_env(), "PYTHONPROFILEIMPORTTIME": "1"})
    shown = r.stdout + "".join(line + "\n" for line in r.stderr.splitlines() if not line.startswith("import time:"))
    assert shown.strip(), f"{script} --help printed nothing (exit {r.returncode})"
    assert "Traceback" not in shown, shown[-2000:]
    assert heavy_imports(r.stderr) == [], f"python {script} --help imports {heavy_imports(r.stderr)}"


#: Builds the help of every gui-agent command in one process, as ``gui-agent <path> --help`` would, and reports
#: after each which heavy packages are in ``sys.modules``.
_WALK = r"""
import contextlib, io, json, sys
import typer.main
from core.cli import app, wide_help_when_piped

heavy = json.loads(sys.argv[1])
root = typer.main.get_command(app)

def paths(command, prefix):
    yield prefix
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from paths(sub, [*prefix, name])

def options(path):
    node = root
    for name in path:
        node = node.commands[name]
    return sorted(o for p in node.params for o in p.opts + p.secondary_opts if o.startswith("--"))

wide_help_when_piped(["--help"])  # what core.cli.main does with stdout piped
out = []
for path in paths(root, []):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            root.main([*path, "--help"], prog_name="gui-agent", standalone_mode=True)
            code = 0
        except SystemExit as e:
            code = e.code
    out.append({"command": " ".join(["gui-agent", *path, "--help"]), "code": code, "text": buf.getvalue(),
                "options": options(path), "heavy": sorted(m for m in heavy if m in sys.modules)})
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        root.main(["--version"], prog_name="gui-agent", standalone_mode=True)
    except SystemExit as e:
        code = e.code
out.append({"command": "gui-agent --version", "code": code, "text": buf.getvalue(), "options": [], "heavy": []})
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def gui_agent_help() -> list[dict]:
    r = subprocess.run([sys.executable, "-c", _WALK, json.dumps(HEAVY)], cwd=REPO, capture_output=True, text=True,
                       check=False, env=_env())
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


def test_every_gui_agent_help_imports_no_framework(gui_agent_help):
    version = gui_agent_help.pop()
    assert version["command"] == "gui-agent --version" and version["code"] == 0
    assert re.fullmatch(r"gui-agent \S+.*\n", version["text"]), version["text"]
    commands = {h["command"] for h in gui_agent_help}
    assert {"gui-agent --help", "gui-agent infer --help", "gui-agent rollout --help",
            "gui-agent data convert --help", "gui-agent world play --help"} <= commands
    for h in gui_agent_help:
        assert h["code"] == 0 and h["text"].strip(), h["command"]
        assert h["heavy"] == [], f"{h['command']} imports {h['heavy']}"


def test_piped_help_cuts_no_option_name(gui_agent_help):
    for h in gui_agent_help:
        assert "…" not in h["text"], f"{h['command']}: rich cut a word:\n" + "\n".join(
            line for line in h["text"].splitlines() if "…" in line)
        missing = [o for o in h["options"] if o not in h["text"]]
        assert not missing, f"{h['command']} does not show {missing}"


def test_gui_agent_help_through_a_pipe_is_wide():
    r = subprocess.run([sys.executable, "-m", "core", "infer", "--help"], cwd=REPO, capture_output=True, text=True,
                       check=False, env=_env())
    assert r.returncode == 0, r.stderr[-2000:]
    assert "--gpu-memory-utilization" in r.stdout and "--max-new-tokens" in r.stdout and "…" not in r.stdout


def test_a_width_the_user_sets_wins(monkeypatch):
    from core.cli import PIPED_HELP_WIDTH, wide_help_when_piped

    monkeypatch.setattr(sys, "stdout", open(os.devnull, "w"))  # noqa: SIM115 - not a terminal
    for environ, argv, expected in [({}, ["infer", "--help"], str(PIPED_HELP_WIDTH)), ({"COLUMNS": "100"}, ["--help"], None),
                                    ({"TERMINAL_WIDTH": "90"}, ["--help"], "90")]:
        wide_help_when_piped(argv, environ)
        assert environ.get("TERMINAL_WIDTH") == expected, environ
    sys.stdout.close()
