"""Common mistakes with `gui-agent` get one clear line and exit 2, and leave nothing under the output's name
(issue 13, item 7): an unknown reward or reward option, the HF / vLLM backend from the base environment."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RL = REPO / ".venvs" / "rl" / "bin" / "gui-agent"
BASE = REPO / ".venvs" / "base" / "bin" / "gui-agent"


def run(exe: Path, *args: str) -> subprocess.CompletedProcess:
    if not exe.is_file():
        pytest.skip(f"{exe} missing (make setup)")
    return subprocess.run([str(exe), *args], cwd=REPO, capture_output=True, text=True, check=False)


@pytest.mark.parametrize(("args", "message"), [
    (["--reward", "nope"], "error: unknown --reward 'nope'; choose one of: r1gui, "),
    (["--reward", "r1gui", "--mode", "nope"], "error: unknown --mode 'nope'; choose one of: default, guir1"),
    (["--reward", "gui_agent", "--mode", "guir1"], "error: --reward gui_agent takes no --mode"),
])
def test_score_usage_errors_are_one_line(tmp_path, args, message):
    src = tmp_path / "c.jsonl"
    src.write_text(json.dumps({"completion": "<answer>[]</answer>", "ground_truth": "{}"}) + "\n")
    r = run(RL, "score", *args, "--input", str(src), "--output", str(tmp_path / "scored.jsonl"))
    assert r.returncode == 2
    assert r.stderr.splitlines() == [r.stderr.splitlines()[0]] and r.stderr.startswith(message), r.stderr
    assert list(tmp_path.iterdir()) == [src]


@pytest.fixture(scope="module")
def bench_file(shared_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    r = run(RL, "data", "convert", "--from", "screenspot", "--to", "unified", "--skip-missing", "--input",
            str(shared_data / "screenspot" / "screenspot_v1_annotations.jsonl"), "--images",
            str(shared_data / "screenspot" / "images"), "--output", str(out))
    assert r.returncode == 0, r.stderr
    return out / "screenspot_v1_annotations.parquet"


@pytest.mark.parametrize("backend", ["hf", "vllm"])
def test_infer_from_the_base_env_names_the_env_to_use(bench_file, tmp_path, backend):
    out = tmp_path / "pred" / "screenspot_test.json"
    r = run(BASE, "infer", "--backend", backend, "--model", str(tmp_path / "model"), "--input", str(bench_file),
            "--output", str(out))
    assert r.returncode == 2
    lines = [line for line in r.stderr.splitlines() if line.startswith("error")]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"the {backend} backend needs" in lines[0] and ".venvs/rl/bin/gui-agent" in lines[0]
    assert not out.exists()


def test_convert_to_vlmr1_from_the_base_env_writes_nothing(shared_data, tmp_path):
    out = tmp_path / "vlmr1"
    r = run(BASE, "data", "convert", "--from", "screenspot", "--to", "vlmr1", "--skip-missing", "--input",
            str(shared_data / "screenspot" / "screenspot_v1_annotations.jsonl"), "--images",
            str(shared_data / "screenspot" / "images"), "--output", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().startswith("error:") and "'datasets' package" in r.stderr and ".venvs/rl/bin" in r.stderr
    assert not out.exists() or [p.name for p in out.rglob("*") if not p.name.startswith(".")] == []  # no final name


def test_data_convert_shows_a_progress_bar_on_a_terminal(shared_data, tmp_path):
    """The command the README shows, in a pseudo-terminal: tqdm draws its bar (rows and rate)."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    if not RL.is_file():
        pytest.skip(f"{RL} missing (make setup)")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a 120-column terminal
    proc = subprocess.Popen([str(RL), "data", "convert", "--from", "aitw", "--to", "llamafactory", "--input",
                             str(shared_data / "aitz"), "--output", str(tmp_path / "lf"), "--name", "aitz"],
                            cwd=REPO, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait() == 0
    os.close(master)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert "llamafactory aitz: " in text and "4step" in text and "step/s]" in text, text[-2000:]


@pytest.mark.parametrize("seed", [str(2**64), str(2**70), "-1"])
def test_tiny_model_seed_beyond_64_bits_is_one_line_naming_it(tmp_path, seed):
    """``gui-agent tiny-model --seed 2**70`` (reachable through ``make demo-seeds DEMO_SEEDS=...``) was a traceback."""
    r = run(RL, "tiny-model", "--output", str(tmp_path / "m"), "--seed", seed)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "--seed" in r.stderr and "2**64 - 1" in r.stderr, r.stderr
    assert not (tmp_path / "m").exists()
