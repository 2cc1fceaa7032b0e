"""A LoRA adapter folder without processor files (what ms-swift saves as checkpoint-N) runs in `gui-agent infer
--backend hf` as docs/inference.md shows: base model from adapter_config.json, processor from the base (issue 13, item 6).
The adapter is made with peft on the tiny model, laid out as swift writes it (adapter_config.json +
adapter_model.safetensors only); tests/test_sft_backends.py runs a real swift checkpoint the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.rl_env, pytest.mark.slow]
pytest.importorskip("peft")

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture(scope="module")
def adapter(tmp_path_factory) -> tuple[Path, Path]:
    """(base model folder, adapter folder holding only the adapter files)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    from core.testing import tiny_qwen25vl_path

    base = tiny_qwen25vl_path()
    torch.manual_seed(0)
    model = AutoModelForImageTextToText.from_pretrained(base, dtype=torch.float32)
    # random (not zero) B matrices, so the adapter really changes the answers
    cfg = LoraConfig(r=8, lora_alpha=64, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    out = tmp_path_factory.mktemp("swift-like") / "checkpoint-2"
    get_peft_model(model, cfg).save_pretrained(out)
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "adapter_config.json", "adapter_model.safetensors"]
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == str(base)
    return base, out


@pytest.fixture(scope="module")
def bench(shared_data, tmp_path_factory) -> Path:
    from core.data.cli import run_convert

    out = tmp_path_factory.mktemp("bench")
    written, _ = run_convert("screenspot", "unified", shared_data / "screenspot" / "screenspot_v1_annotations.jsonl",
                             out, images_dir=shared_data / "screenspot" / "images", skip_missing=True)
    return Path(written)


def infer(model: Path, bench: Path, out: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "core", "infer", "--backend", "hf", "--model", str(model), "--input", str(bench),
           "--output", str(out), "--limit", "2", "--max-new-tokens", "6", "--device", "cpu"]
    proc = subprocess.run(cmd, cwd=REPO, env=ENV, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_adapter_folder_without_processor_runs_in_infer(adapter, bench, tmp_path):
    base, lora = adapter
    tuned = infer(lora, bench, tmp_path / "lora.json")
    assert len(tuned) == 2 and all(r["error"] is None for r in tuned)
    plain = infer(base, bench, tmp_path / "base.json")
    assert [r["pred"] for r in tuned] != [r["pred"] for r in plain]  # the adapter is applied, not just the base


def test_adapter_without_a_base_says_to_merge(adapter, bench, tmp_path):
    _, lora = adapter
    broken = tmp_path / "checkpoint-x"
    broken.mkdir()
    cfg = json.loads((lora / "adapter_config.json").read_text())
    del cfg["base_model_name_or_path"]
    (broken / "adapter_config.json").write_text(json.dumps(cfg))
    proc = subprocess.run([sys.executable, "-m", "core", "infer", "--backend", "hf", "--model", str(broken),
                           "--input", str(bench), "--output", str(tmp_path / "p.json")], cwd=REPO, env=ENV,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "--merge_lora" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "p.json").exists()
