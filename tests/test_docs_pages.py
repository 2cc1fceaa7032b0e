"""The pages a newcomer reads first (issue 38, item 11), checked against the commands they show: docs/first-hour.md
prints what its data commands print, and every line docs/troubleshooting.md explains is the line the command
really prints (run here, each cheap: make's own checks, the model check, the wrong Python)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
SKIP_ENVS = ["-o", ".venvs/rl/.ready", "-o", ".venvs/llamafactory/.ready", "-o", ".venvs/base/.ready"]


def run(args: list[str]) -> str:
    r = subprocess.run(args, cwd=REPO, capture_output=True, text=True, check=False,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return r.stdout + r.stderr


def block_after(page: str, command_start: str) -> str:
    """The ```text block that follows the ```bash block holding the line that starts with ``command_start``."""
    i = page.index(command_start)
    start = page.index("```text\n", i) + len("```text\n")
    return page[start:page.index("```", start)]


def test_first_hour_data_commands_print_what_the_page_shows(shared_data, tmp_path):
    page = (DOCS / "first-hour.md").read_text(encoding="utf-8")
    shown = block_after(page, "gui-agent tiny-model --output outputs/tiny").splitlines()
    gui_agent = str(Path(sys.executable).parent / "gui-agent")
    printed = []
    for target, extra in (("vlmr1", ["--max-pixels", "200704"]), ("unified", [])):
        line = next(ln for ln in page.splitlines() if ln.startswith(f"gui-agent data convert --from aitw --to {target} "))
        args = line.split()[1:]
        args[args.index("--input") + 1] = str(shared_data / "aitz")
        args[args.index("--output") + 1] = str(tmp_path / "outputs" / "smoke" / target)
        assert args[args.index("--name") + 1] == "aitz" and all(e in args for e in extra)
        out = run([gui_agent, *args])
        printed += [ln.replace(str(tmp_path) + "/", "") for ln in out.splitlines()
                    if ln.startswith(("read ", "wrote "))]
    assert printed == shown[1:], "\n".join(printed)


#: (command, the fixed part of the line it prints) for the lines docs/troubleshooting.md explains.
TROUBLE = [
    (["make", "-s", *SKIP_ENVS, "grpo-trl", "MODEL=/nonexistent"],
     "no such folder (a local model folder, or a Hub id such as Qwen/Qwen2.5-VL-3B-Instruct)"),
    (["make", "-s", *SKIP_ENVS, "grpo-trl", "LOGGER=x"], "LOGGER must be one of console tensorboard wandb, got"),
    (["make", "-s", *SKIP_ENVS, "sft-llamafactory", "DATASET=a;b"],
     "DATASET must be a name (letters, digits, . _ -), got"),
    (["make", "-s", *SKIP_ENVS, "data", "GUIR1_DIR=/nonexistent"],
     "/train.parquet: run make data-download (or set GUIR1_DIR)"),
    (["make", "-s", *SKIP_ENVS, "data-convert", "DATA_FROM=aitw"],
     "set DATA_INPUT=<file or folder> (and DATA_FROM=<source>; see Data/README.md)"),
    (["make", "-s", *SKIP_ENVS, "grpo-verl-agent", "AGENT_DATA=/nonexistent"],
     "/train.parquet not found (make gui-agent-data, or set AGENT_DATA=)"),
    (["make", "-s", *SKIP_ENVS, "grpo-trl", "MODEL=.venvs", "TRL_DATA=/nonexistent"],
     "not found (export it with --to vlmr1, or set TRL_DATA=)"),
    (["make", "-s", *SKIP_ENVS, "grpo-verl", "MODEL=.venvs"], "not found (ls recipes/*/grpo/; set GRPO_RECIPE=)"),
    (["make", "-s", *SKIP_ENVS, "infer-one", "MODEL_PATH=x", "INFER_INPUT=a", "INFER_OUTPUT=b", "HAS_CUDA="],
     "needs an NVIDIA GPU and nvidia-smi finds none here (vLLM; on CPU: INFER_BACKEND=hf)"),
    (["make", "-s", "help", "PRESET=x"],
     "make: PRESET is not a variable of this project's makefiles (make vars lists them); did you mean INFER_PRESET?"),
    (["make", "-s", "VENVS=x", "help"], "VENVS, BASE, RL and LF are fixed"),
    ([sys.executable, "-I", "-S", "verl/prepare_gui_agent_data.py", "--help"],
     "lacks"),
]


@pytest.mark.parametrize(("command", "fragment"), TROUBLE, ids=[" ".join(c[-2:]) for c, _ in TROUBLE])
def test_troubleshooting_explains_the_line_the_command_prints(command, fragment):
    page = re.sub(r"\s+", " ", (DOCS / "troubleshooting.md").read_text(encoding="utf-8"))
    out = run(command)
    assert fragment in out, out[-2000:]
    assert fragment in page, f"docs/troubleshooting.md does not show: {fragment}"
