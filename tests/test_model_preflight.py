"""Model weights through make, as the docs write the commands: `make download-model MODEL=<Hub id>` (no network
here: its clear failures), and the pre-flight of every target that takes a model (a Hub id missing from the Hugging
Face cache, a local folder that does not exist: one line, exit 2; a cached Hub id or a real folder passes on to the
target's next check). Also the SFT targets' recipe and run names that follow MODEL and the data, and the GPU-only
targets' one line on a machine without CUDA."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HAS_GPU = subprocess.run(["sh", "-c", "nvidia-smi -L"], capture_output=True, check=False).returncode == 0


@pytest.fixture
def hf_home(tmp_path) -> Path:
    """An empty Hugging Face home: nothing cached."""
    home = tmp_path / "hf"
    home.mkdir()
    return home


def make(*args: str, hf_home: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_CACHE", "HF_HUB_OFFLINE")}
    return subprocess.run(["make", "-s", "-o", ".venvs/rl/.ready", "-o", ".venvs/llamafactory/.ready", *args],
                          cwd=REPO, capture_output=True, text=True, check=False,
                          env={**base, "HF_HOME": str(hf_home), **(env or {})})


def our_lines(r: subprocess.CompletedProcess) -> list[str]:
    """What the target printed, without make's own `make: *** [...] Error 2` line."""
    return [line for line in (r.stdout + r.stderr).splitlines() if not line.startswith("make: ***")]


def cache_model(hf_home: Path, repo_id: str) -> Path:
    """A model in huggingface_hub's cache layout (refs/main -> snapshots/<commit>/config.json)."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = hf_home / "hub" / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "qwen2_5_vl"}')
    return snapshot


def targets(tmp_path: Path) -> dict[str, list[str]]:
    """Every target that takes a model, with what gets it past the checks that come before the model's."""
    agent_data = tmp_path / "agent"
    agent_data.mkdir(exist_ok=True)
    (agent_data / "train.parquet").write_bytes(b"")
    return {"sft-llamafactory": [], "sft-swift": [], "grpo-trl": [], "grpo-swift": [],
            "grpo-verl": ["HAS_CUDA=1"], "grpo-verl-agent": ["HAS_CUDA=1", f"AGENT_DATA={agent_data}"],
            "infer": ["INFER_BACKEND=hf", f"GUIR1_DIR={tmp_path}"],
            "infer-one": ["INFER_BACKEND=hf", "INFER_INPUT=a.parquet", "INFER_OUTPUT=b.json"]}


@pytest.mark.parametrize("target", list(targets(Path("/tmp"))))
def test_hub_id_not_in_the_cache_names_the_download_command(target, tmp_path, hf_home):
    variable = "MODEL_PATH" if target.startswith("infer") else "MODEL"
    r = make(target, f"{variable}=Org/Some-VL-7B-Instruct", *targets(tmp_path)[target], hf_home=hf_home)
    assert r.returncode == 2
    assert our_lines(r) == [f"{target}: {variable}=Org/Some-VL-7B-Instruct is not in the Hugging Face cache "
                            f"({hf_home}/hub): download it with `make download-model MODEL=Org/Some-VL-7B-Instruct`, "
                            f"or set {variable}= a local model folder"]


@pytest.mark.parametrize("target", ["sft-llamafactory", "grpo-trl", "infer-one"])
def test_local_folder_that_does_not_exist_is_one_line(target, tmp_path, hf_home):
    variable = "MODEL_PATH" if target.startswith("infer") else "MODEL"
    r = make(target, f"{variable}={tmp_path}/no/model", *targets(tmp_path)[target], hf_home=hf_home)
    assert r.returncode == 2
    assert our_lines(r) == [f"{target}: {variable}={tmp_path}/no/model: no such folder (a local model folder, or a "
                            f"Hub id such as Qwen/Qwen2.5-VL-3B-Instruct)"]


def test_cached_hub_id_and_local_folder_pass_to_the_data_check(tmp_path, hf_home):
    cache_model(hf_home, "Org/Tiny-VL")
    for model in ("Org/Tiny-VL", str(tmp_path)):
        r = make("sft-swift", f"MODEL={model}", f"SWIFT_DATA={tmp_path}/none.jsonl", hf_home=hf_home)
        assert r.returncode == 2
        assert our_lines(r) == [f"sft-swift: {tmp_path}/none.jsonl not found (export it with --to swift, or set "
                                "SWIFT_DATA=)"]


def test_online_mode_leaves_the_download_to_the_framework(tmp_path, hf_home):
    r = make("grpo-trl", "MODEL=Org/Not-Cached", f"TRL_DATA={tmp_path}/none.hf", hf_home=hf_home,
             env={"HF_HUB_OFFLINE": "0"})
    assert r.returncode == 2 and our_lines(r)[0].startswith(f"grpo-trl: {tmp_path}/none.hf not found")


def test_plain_make_lists_download_model(hf_home):
    r = make(hf_home=hf_home)
    assert "  download-model     model weights into the Hugging Face cache: make download-model MODEL=<Hub id>" \
        in r.stdout


def test_download_model_without_network_fails_in_one_line(hf_home):
    # A closed local port stands in for a machine without access to the Hub; the Makefile's HF_HUB_OFFLINE=1 is
    # turned off for the download.
    r = make("download-model", "MODEL=Qwen/Qwen2.5-VL-3B-Instruct", hf_home=hf_home,
             env={"HF_ENDPOINT": "http://127.0.0.1:9"})
    assert r.returncode == 2
    (line,) = our_lines(r)
    assert line.startswith("download-model: downloading Qwen/Qwen2.5-VL-3B-Instruct needs network access to the "
                           "Hub (http://127.0.0.1:9; a mirror: HF_ENDPOINT=...)")
    assert not (hf_home / "hub" / "models--Qwen--Qwen2.5-VL-3B-Instruct" / "snapshots").exists()


def test_download_model_of_a_local_path_or_offline_says_why(tmp_path, hf_home):
    r = make("download-model", f"MODEL={tmp_path}", hf_home=hf_home)
    assert r.returncode == 2 and our_lines(r) == [f"download-model: MODEL={tmp_path} is a local path: nothing to "
                                                  "download (targets take it as it is)"]
    offline = subprocess.run([str(REPO / ".venvs" / "rl" / "bin" / "gui-agent"), "model", "download", "Org/X"],
                             capture_output=True, text=True, check=False,
                             env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(hf_home)})
    assert offline.returncode == 2 and "run `make download-model MODEL=...`" in offline.stderr
    assert offline.stderr.count("\n") == 1


# SFT recipes, run names and data checks follow MODEL and the data.

def dry(*args: str) -> str:
    r = subprocess.run(["make", "-n", "-o", ".venvs/rl/.ready", "-o", ".venvs/llamafactory/.ready", *args],
                       cwd=REPO, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize(("model", "recipe"), [("Qwen/Qwen2.5-VL-3B-Instruct", "qwen2_5_vl_3b_gui_lora_sft"),
                                               ("Qwen/Qwen2.5-VL-7B-Instruct", "qwen2_5_vl_7b_gui_lora_sft"),
                                               ("Qwen/Qwen3-VL-4B-Instruct", "qwen3_vl_4b_gui_lora_sft")])
def test_sft_llamafactory_picks_the_lora_yaml_and_run_name_of_model(model, recipe):
    out = dry("sft-llamafactory", f"MODEL={model}")
    assert f"train {REPO}/LLaMA-Factory/examples/train_lora/{recipe}.yaml model_name_or_path={model}" in out
    assert f"TENSORBOARD_LOGGING_DIR={REPO}/runs/{recipe} " in out


def test_sft_llamafactory_without_a_yaml_for_model_names_the_ones_there_are(tmp_path, hf_home):
    model = tmp_path / "Qwen2.5-VL-32B-Instruct"
    model.mkdir()
    r = make("sft-llamafactory", f"MODEL={model}", hf_home=hf_home)
    assert r.returncode == 2
    assert our_lines(r) == [f"sft-llamafactory: no LoRA recipe for MODEL={model} (LLaMA-Factory/examples/train_lora/"
                            "qwen2_5_vl_32b_gui_lora_sft.yaml); LoRA recipes are there for: qwen2_5_vl_3b "
                            "qwen2_5_vl_7b qwen3_vl_4b - or set SFT_RECIPE=<yaml>"]


def test_sft_llamafactory_checks_the_dataset_is_exported(tmp_path, hf_home):
    (tmp_path / "dataset_info.json").write_text('{\n  "aitz": {"file_name": "aitz/aitz.json"}\n}')
    base = ["MODEL=" + str(tmp_path), "SFT_RECIPE=LLaMA-Factory/examples/train_lora/qwen2_5_vl_3b_gui_lora_sft.yaml",
            f"SFT_LF_DATA_DIR={tmp_path}", "ARGS=max_steps=0"]
    r = make("sft-llamafactory", *base, "DATASET=gui-r1-3k", hf_home=hf_home)
    assert r.returncode == 2
    assert our_lines(r) == [f"sft-llamafactory: dataset gui-r1-3k not in {tmp_path}/dataset_info.json (export it "
                            "with --to llamafactory, or set DATASET= / SFT_LF_DATA_DIR=)"]
    # The exported name passes every check; LLaMA-Factory itself then starts (and stops: the folder is no model).
    passed = our_lines(make("sft-llamafactory", *base, "DATASET=aitz", "HAS_CUDA=", hf_home=hf_home))
    assert passed[0].startswith("sft-llamafactory: no CUDA GPU found: CPU-safe settings")
    assert not any("not in" in line for line in passed)


def test_sft_swift_checks_the_tuner(tmp_path, hf_home):
    data = tmp_path / "aitz.jsonl"
    data.write_text("{}\n")
    r = make("sft-swift", f"MODEL={tmp_path}", f"SWIFT_DATA={data}", "SWIFT_TUNER=qlora", hf_home=hf_home)
    assert r.returncode == 2
    assert our_lines(r) == ["sft-swift: SWIFT_TUNER=qlora: no ms-swift/examples/sft_qlora.sh; SWIFT_TUNER is one of: "
                            "full lora"]


def test_runs_are_saved_under_the_data_name():
    assert "--output_dir saves/tiny/aitz/grpo-trl " in dry("grpo-trl", "MODEL=tiny", "TRL_DATA=smoke/vlmr1/aitz.hf")
    assert "--output_dir saves/Qwen2.5-VL-3B-Instruct/gui-r1-3k/grpo-trl " in dry("grpo-trl")
    assert "OUTPUT_DIR=saves/tiny/aitz/grpo-swift " in dry("grpo-swift", "MODEL=tiny",
                                                           "SWIFT_GRPO_DATA=smoke/swift/aitz.jsonl")
    assert "OUTPUT_DIR=saves/tiny/aitz/swift-lora " in dry("sft-swift", "MODEL=tiny", "SWIFT_DATA=smoke/swift/aitz.jsonl")


# GPU-only targets on a machine without CUDA.

@pytest.mark.skipif(HAS_GPU, reason="a GPU machine")
@pytest.mark.parametrize(("args", "line"), [
    (["infer-one", "MODEL_PATH=m", "INFER_INPUT=a", "INFER_OUTPUT=b"],
     "infer-one needs an NVIDIA GPU and nvidia-smi finds none here (vLLM; on CPU: INFER_BACKEND=hf)"),
])
def test_gpu_only_targets_say_so_in_one_line(args, line, hf_home):
    r = make(*args, hf_home=hf_home)
    assert r.returncode == 2 and our_lines(r) == [line]


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed")
def test_grpo_verl_without_vllm_names_make_setup_gpu(tmp_path, hf_home):
    """verl trains without vLLM (the transformers rollout), but asking for vLLM where it is not installed is one
    line naming make setup-gpu, before anything starts."""
    r = make("grpo-verl", f"MODEL={tmp_path}", "GRPO_RECIPE=recipes/qwen2_5_vl_3b/grpo/config_guir1_verl.yaml",
             hf_home=hf_home, env={"ROLLOUT_ENGINE": "vllm"})
    assert r.returncode == 2
    assert our_lines(r)[-1] == "grpo-verl: ROLLOUT_ENGINE=vllm is not installed (GPU: make setup-gpu; or ROLLOUT_ENGINE=hf)"


@pytest.mark.skipif(HAS_GPU, reason="a GPU machine")
def test_make_infer_with_vllm_on_cpu_names_the_hf_backend(tmp_path, hf_home):
    r = make("infer", f"MODEL_PATH={tmp_path}", f"GUIR1_DIR={tmp_path}", hf_home=hf_home)
    assert r.returncode == 2
    assert our_lines(r) == ["error: BACKEND=vllm needs an NVIDIA GPU and nvidia-smi finds none here; on CPU: "
                            "BACKEND=hf (make infer INFER_BACKEND=hf)"]
