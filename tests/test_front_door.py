"""The commands README.md and Data/README.md show, run as written through make (issue 13): plain `make`,
`make data-download` (no network here: the command it runs, and its clear failure), the `make data` variables,
folder sources through `make data-convert`, `make bench-eval`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUIR1_FILES = ["train.parquet", "test.parquet", "androidcontrol_high_test.parquet",
               "androidcontrol_low_test.parquet", "guiact_web_test.parquet", "guiodyssey_test.parquet",
               "omniact_web_test.parquet", "omniact_desktop_test.parquet", "screenspot_pro_test.parquet",
               "screenspot_test.parquet"]


def make(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=False)


def test_plain_make_prints_the_front_door_and_runs_nothing():
    r = make()
    assert r.returncode == 0, r.stderr
    for target in ("setup", "setup-gpu", "demo", "data-download", "data", "data-convert", "infer", "eval", "bench"):
        assert f"  {target}" in r.stdout
    assert "==" not in r.stdout  # no conversion started


def test_data_download_uses_the_env_tool_with_offline_mode_off(tmp_path):
    # The Makefile exports HF_HUB_OFFLINE=1 for every target; the download target turns it off for itself.
    r = make("data-download", f"GUIR1_DIR={tmp_path / 'gui'}", "HFD_ARGS=--dry-run", env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    cmd = r.stdout.strip().split()
    assert cmd[0] == "HF_HUB_OFFLINE=0"
    assert cmd[1] == str(REPO / ".venvs" / "rl" / "bin" / "hf") and Path(cmd[1]).is_file()
    assert cmd[2:4] == ["download", "ritzzai/GUI-R1"]
    assert cmd[4:4 + len(GUIR1_FILES)] == GUIR1_FILES
    assert cmd[cmd.index("--repo-type") + 1] == "dataset"
    assert cmd[cmd.index("--local-dir") + 1] == str(tmp_path / "gui")


def test_data_download_without_network_fails_saying_what_to_do(tmp_path):
    # A closed local port stands in for a machine without access to the Hub.
    r = make("data-download", f"GUIR1_DIR={tmp_path / 'gui'}", env={"HF_ENDPOINT": "http://127.0.0.1:9"})
    assert r.returncode != 0
    assert "needs network access to the Hub" in r.stderr and "HF_ENDPOINT" in r.stderr
    assert "HF_HUB_OFFLINE" not in r.stderr  # offline mode was not what stopped it
    assert not (tmp_path / "gui" / "train.parquet").exists()


def test_hfd_refuses_offline_mode_with_the_command_to_use():
    r = subprocess.run(["bash", "Data/hfd.sh"], cwd=REPO, capture_output=True, text=True,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=False)
    assert r.returncode == 2 and "make data-download" in r.stderr


def test_make_data_convert_takes_a_folder_source(shared_data, tmp_path):
    session = shared_data / "screenagent" / "session1"
    r = make("data-convert", "DATA_FROM=screenagent", f"DATA_INPUT={session}", f"DATA_OUT={tmp_path}")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    from core.data.unified import iter_steps

    steps = list(iter_steps(tmp_path / "unified" / "session1.parquet"))
    assert steps and all(s.source == "screenagent" for s in steps)


def test_make_data_with_another_source_is_data_convert(shared_data, tmp_path):
    ann = shared_data / "screenspot" / "screenspot_v1_annotations.jsonl"
    r = make("data", "DATA_FROM=screenspot", f"DATA_INPUT={ann}", f"DATA_OUT={tmp_path}", "DATA_TARGETS=unified swift",
             f"DATA_IMAGES={shared_data / 'screenspot' / 'images'}", "DATA_ARGS=--skip-missing")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert (tmp_path / "unified" / "screenspot_v1_annotations.parquet").is_file()
    assert len((tmp_path / "swift" / "screenspot_v1_annotations.jsonl").read_text().splitlines()) == 4


def test_make_data_targets_pick_the_formats(shared_data, tmp_path):
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary
    from core.inference.bench import write_guir1_benchmark

    steps = list(READERS["aitw"](shared_data / "aitz", summary=ConversionSummary()))
    raw = tmp_path / "raw"
    write_guir1_benchmark(steps[:2], raw / "train.parquet")
    r = make("data", f"GUIR1_DIR={raw}", f"DATA_ROOT={tmp_path / 'out'}", "DATA_TARGETS=swift unified")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["swift", "unified"]
    assert len((tmp_path / "out" / "swift" / "gui-r1-3k.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize("target", ["data-convert", "data-inspect"])
def test_data_convert_without_input_says_what_to_set(target):
    r = make(target, "DATA_FROM=screenagent")
    assert r.returncode == 2 and "set DATA_INPUT=" in r.stdout


def test_make_bench_eval_prints_as_it_goes():
    r = make("bench-eval", "BENCH_ARGS=--rows 300")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "navigation: writing 300 + 30 prediction rows ..."
    assert sum("rows/s" in line for line in lines) == 4


@pytest.mark.skipif(subprocess.run(["sh", "-c", "nvidia-smi -L"], capture_output=True, check=False).returncode == 0,
                    reason="a GPU machine: make setup-gpu would install")
def test_setup_gpu_refuses_without_a_gpu_and_names_the_check():
    r = make("setup-gpu")
    assert r.returncode == 2 and "needs an NVIDIA GPU" in r.stdout and "make setup-gpu-check" in r.stdout


def test_gpu_pins_agree_with_each_other():
    """requirements/gpu-rl.txt: vLLM's torch is the one make_env.sh accepts; pyproject's [gpu] extra pins the same."""
    pins = dict(line.split("==") for line in (REPO / "requirements" / "gpu-rl.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    assert pins["vllm"] == "0.31.0" and pins["torch"] == "2.13.0"
    assert f'"{pins["torch"]}"' in (REPO / "scripts" / "make_env.sh").read_text()
    extra = (REPO / "pyproject.toml").read_text()
    assert f'gpu = ["vllm=={pins["vllm"]}", "deepspeed=={pins["deepspeed"]}"]' in extra


def test_one_data_root_for_download_data_and_infer(tmp_path):
    """make data-download writes, make data reads and make infer predicts from the same folder (GUIR1_DIR)."""
    root = tmp_path / "gui-r1"
    dl = make("data-download", f"GUIR1_DIR={root}", "HFD_ARGS=--dry-run")
    assert f"--local-dir {root}" in dl.stdout
    data = make("data", f"GUIR1_DIR={root}")
    assert data.returncode != 0 and f"no {root}/train.parquet: run make data-download" in data.stdout
    infer = make("infer", "MODEL_PATH=ckpt", f"GUIR1_DIR={root}")
    assert infer.returncode != 0 and f"DATA_DIR '{root}' does not exist (make data-download" in infer.stderr
    dry = make("-n", "infer", "MODEL_PATH=ckpt")
    assert "DATA_DIR=Data/GUI-R1-3K " in dry.stdout
