"""verl/plugins/verl_response_logprobs.py: the CPU engine's forward computes the output layer at the trained response
positions only, with verl's numbers there.

The model comparison runs this file as a script in a fresh process: verl's ``apply_monkey_patch`` replaces the
Qwen-VL classes' ``forward`` for the whole process, which must not leak into other tests of the worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "verl" / "plugins"))


def test_response_positions_mark_the_token_before_each_trained_response_token():
    from verl_response_logprobs import response_positions

    # sequence 0: prompt of 3, response of 4 whose 3rd token is a tool token (mask 0); sequence 1: prompt 2, response 2
    masks = [torch.tensor([1, 1, 0, 1]), torch.tensor([1, 1])]
    got = response_positions(torch.tensor([3, 2]), masks, seq_len=7)
    assert got.tolist() == [[False, False, True, True, False, True, False],
                            [False, True, True, False, False, False, False]]


def test_logprobs_at_equals_a_full_log_softmax_at_the_marked_positions():
    from verl_response_logprobs import logprobs_at

    gen = torch.Generator().manual_seed(0)
    hidden, weight = torch.randn(2, 5, 8, generator=gen), torch.randn(50, 8, generator=gen)
    labels = torch.randint(0, 50, (2, 5), generator=gen)
    positions = torch.tensor([[False, True, True, False, False], [True, False, False, False, True]])
    log_probs, entropy = logprobs_at(hidden, weight, labels, positions, temperature=0.7)
    full = (hidden @ weight.t() / 0.7).log_softmax(-1)
    want = full.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    want_entropy = -(full.exp() * full).sum(-1)
    assert torch.allclose(log_probs[positions], want[positions], atol=1e-5)
    assert torch.allclose(entropy[positions], want_entropy[positions], atol=1e-4)
    assert not log_probs[~positions].any() and not entropy[~positions].any()


def compare(family: str) -> dict:
    """verl's fused-kernel forward against the wrapped one on the tiny ``family`` model: the largest differences of
    log-probs and entropies at the marked positions and of the parameter gradients of a loss over them, and whether
    the unmarked positions are 0."""
    from PIL import Image
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from verl.models.transformers.monkey_patch import apply_monkey_patch
    from verl_response_logprobs import DECODER_CALLS, _POSITIONS, response_positions, wrap_forward

    from core.testing import tiny_model_path

    torch.manual_seed(0)
    path = tiny_model_path(family)
    model = AutoModelForImageTextToText.from_pretrained(path, torch_dtype=torch.float32)
    apply_monkey_patch(model=model, use_remove_padding=False, use_fused_kernels=True, fused_kernels_backend="torch")
    processor = AutoProcessor.from_pretrained(path)
    # two sequences of one length with a screenshot each (verl's Qwen2.5-VL forward needs an image): the prompt, then
    # 10 random tokens as the response
    text = processor.apply_chat_template([{"role": "user", "content": [{"type": "image"},
                                                                       {"type": "text", "text": "Tap the icon."}]}],
                                         add_generation_prompt=True)
    images = [Image.new("RGB", (56, 56), (40 * i, 120, 200)) for i in range(2)]
    enc = processor(text=[text, text], images=images, return_tensors="pt")
    response = torch.randint(10, 1000, (2, 10))
    input_ids = torch.cat([enc["input_ids"], response], dim=1)
    batch, seq_len = input_ids.shape
    prompt_len = enc["input_ids"].shape[1]
    # the two passes get the same inputs; the positions need not be the model's own rope index for the comparison
    position_ids = torch.arange(seq_len).expand(4, batch, seq_len).clone()
    inputs = {"input_ids": input_ids, "attention_mask": torch.ones(batch, seq_len, dtype=torch.long),
              "position_ids": position_ids, "pixel_values": enc["pixel_values"],
              "image_grid_thw": enc["image_grid_thw"], "temperature": 0.9, "return_dict": True, "use_cache": False}
    positions = response_positions(torch.tensor([prompt_len, prompt_len]),
                                   [torch.tensor([1] * 4 + [0] * 3 + [1] * 3), torch.tensor([1] * 5 + [0] * 5)],
                                   seq_len)

    def run(marked: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
        model.zero_grad()
        _POSITIONS.set(marked)
        out = model(**inputs)
        _POSITIONS.set(None)
        (out.log_probs[positions].sum() + 0.3 * out.entropy[positions].sum()).backward()
        return out.log_probs.detach(), out.entropy.detach(), [p.grad.clone() for p in model.parameters()
                                                                if p.grad is not None]

    verl_lp, verl_ent, verl_grads = run(None)
    wrap_forward(type(model), DECODER_CALLS[model.config.model_type])
    lp, ent, grads = run(positions)
    return {"log_prob_diff": float((lp - verl_lp)[positions].abs().max()),
            "entropy_diff": float((ent - verl_ent)[positions].abs().max()),
            "grad_diff": max(float((a - b).abs().max()) for a, b in zip(grads, verl_grads, strict=True)),
            "grad_scale": max(float(b.abs().max()) for b in verl_grads), "n_grads": len(grads),
            "unmarked_zero": bool(not lp[~positions].any() and not ent[~positions].any()),
            "marked": int(positions.sum())}


@pytest.mark.parametrize("family", ["qwen2.5-vl", "qwen3-vl"])
def test_the_wrapped_forward_gives_verls_log_probs_entropies_and_gradients(family):
    pytest.importorskip("verl")
    proc = subprocess.run([sys.executable, __file__, family], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["marked"] == 12 and got["n_grads"] > 10, got
    assert got["log_prob_diff"] < 1e-4 and got["entropy_diff"] < 1e-3, got
    assert got["grad_diff"] <= 1e-4 * got["grad_scale"], got
    assert got["unmarked_zero"], got


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    print(json.dumps(compare(sys.argv[1])))
