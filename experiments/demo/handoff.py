"""Hand a checkpoint written by LLaMA-Factory's environment (transformers 5.6) to the rl environment (5.10).

:func:`handoff` loads the full-SFT output folder with the rl env's ``AutoModelForImageTextToText`` and
``AutoProcessor``, re-saves both with that transformers (safetensors, fp32), and checks that every tensor of the
re-saved model equals the trained one bit for bit, so trl and ``gui-agent infer`` read exactly what was trained.
Processor files missing from the source (LLaMA-Factory writes the tokenizer, not always the image processor) come
from ``processor_from`` (the base model the run started from).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

#: Files that make up a processor (tokenizer + image processor + chat template).
PROCESSOR_FILES = ("preprocessor_config.json", "chat_template.json", "tokenizer.json", "tokenizer_config.json",
                   "vocab.json", "merges.txt", "added_tokens.json", "special_tokens_map.json")


def _tensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    out: dict = {}
    for f in sorted(folder.glob("*.safetensors")):
        out.update(load_file(f))
    return out


def handoff(src: str | Path, dst: str | Path, *, processor_from: str | Path | None = None) -> Path:
    """Re-save the checkpoint ``src`` into ``dst`` (replaced atomically) with this environment's transformers."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    src, dst = Path(src), Path(dst)
    if not (src / "config.json").is_file():
        raise FileNotFoundError(f"{src}: no config.json (not a saved model folder)")
    staging = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", dir=dst.parent))
    try:
        full = staging / "input"
        shutil.copytree(src, full)
        for name in PROCESSOR_FILES:
            if processor_from is not None and not (full / name).exists() and (Path(processor_from) / name).exists():
                shutil.copy2(Path(processor_from) / name, full / name)
        model = AutoModelForImageTextToText.from_pretrained(full, dtype=torch.float32)
        processor = AutoProcessor.from_pretrained(full)
        out = staging / "output"
        model.save_pretrained(out, safe_serialization=True)
        processor.save_pretrained(out)
        trained, saved = _tensors(full), _tensors(out)
        mismatched = [k for k in saved if k not in trained or not torch.equal(saved[k], trained[k])]
        if mismatched:
            raise RuntimeError(f"handoff {src}: re-saved tensors differ from the trained ones: {mismatched[:5]}")
        if dst.exists():
            shutil.rmtree(dst)
        out.rename(dst)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dst
