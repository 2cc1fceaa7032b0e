"""The hf backend's batch size when ``--batch-size`` is not given: the CPU default, or on CUDA the rows that fit the
free GPU memory (read from a fake reading here), with the per-row estimate checked against the H100 measurement
of the Qwen2.5-VL-3B architecture (``bench/infer_memory.py``)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.inference.backends import DEFAULT_BATCH_SIZE
from core.inference.backends.hf import (
    FREE_MEMORY_FRACTION,
    MAX_AUTO_BATCH,
    PROMPT_TEXT_TOKENS,
    max_prompt_tokens,
    pick_batch_size,
    row_bytes,
)
from core.inference.requests import DEFAULT_POLICY, ResizePolicy

GIB, MIB = 2**30, 2**20
#: Qwen2.5-VL-3B-Instruct's language model (its config.json)
QWEN25VL_3B_TEXT = SimpleNamespace(num_hidden_layers=36, num_key_value_heads=2, hidden_size=2048,
                                   num_attention_heads=16, intermediate_size=11008)
#: bench/infer_memory.py on an H100, bf16: peak GPU memory over the weights, per row, at 1,836 prompt tokens
MEASURED_ROW_MIB = {8: 284.1, 32: 280.6, 64: 280.1}


def never_read() -> int:
    raise AssertionError("free GPU memory read where it must not be")


def test_row_estimate_covers_the_measured_peak_with_little_slack():
    est = row_bytes(QWEN25VL_3B_TEXT, prompt_tokens=1_836, new_tokens=128, dtype_bytes=2) / MIB
    for measured in MEASURED_ROW_MIB.values():
        assert measured <= est <= 1.15 * measured
    # more new tokens only add their KV cache: 36 layers x 2 KV heads x 128 x 2 (K, V) x 2 bytes a token
    longer = row_bytes(QWEN25VL_3B_TEXT, prompt_tokens=1_836, new_tokens=1_128, dtype_bytes=2) / MIB
    assert longer - est == pytest.approx(1_000 * 36 * 2 * 128 * 2 * 2 / MIB)


def test_prompt_bound_counts_every_screenshot_at_max_pixels():
    assert max_prompt_tokens(DEFAULT_POLICY) == 1_258_291 // 28**2 + PROMPT_TEXT_TOKENS == 2_244
    assert max_prompt_tokens(ResizePolicy(max_pixels=200_704, factor=28), screenshots=3) == 3 * 256 + 640


def test_cpu_keeps_the_default_and_a_given_size_wins():
    assert pick_batch_size(None, "cpu", never_read, MIB) == (DEFAULT_BATCH_SIZE, "CPU default")
    assert pick_batch_size(5, "cuda:1", never_read, MIB) == (5, "given")
    assert pick_batch_size(0, "cpu", never_read, MIB)[0] == 1


def test_cuda_fills_the_free_memory_up_to_the_cap():
    per_row = row_bytes(QWEN25VL_3B_TEXT, prompt_tokens=max_prompt_tokens(DEFAULT_POLICY), new_tokens=1024,
                        dtype_bytes=2)
    rows, why = pick_batch_size(None, "cuda", lambda: 71 * GIB, per_row)  # an H100 after the 3B weights (7.1 GiB)
    assert rows == MAX_AUTO_BATCH and "71.0 GiB free GPU memory" in why
    for free in (4 * GIB, 10 * GIB, 20 * GIB):  # smaller GPUs: as many rows as fit the usable fraction
        rows, _ = pick_batch_size(None, "cuda", lambda free=free: free, per_row)
        assert 1 < rows < MAX_AUTO_BATCH
        assert rows * per_row <= FREE_MEMORY_FRACTION * free < (rows + 1) * per_row
    assert pick_batch_size(None, "cuda", lambda: 100 * MIB, per_row)[0] == 1  # never below one row
