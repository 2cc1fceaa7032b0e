"""GPU memory and throughput of HF ``generate`` per batch size, Qwen2.5-VL-3B architecture with random weights.

Calibrates ``core.inference.backends.hf.auto_batch_size`` (the rule ``gui-agent infer --backend hf`` uses on
CUDA when ``--batch-size`` is not given). Needs a CUDA GPU, torch and transformers; no download, no tokenizer:
the prompt is random text ids around one screenshot's image tokens (a 1080x2400 phone screen at GUI-R1's
max_pixels 1,258,291: 728x1652 pixels, 1,534 merged image tokens), decoding runs the full ``--new-tokens``.

    python bench/infer_memory.py --batch-sizes 1,8,16,32 --new-tokens 128
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require("torch", "transformers")

#: Qwen2.5-VL-3B-Instruct's architecture (its config.json on the Hugging Face hub)
QWEN25VL_3B = {
    "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16,
    "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 128000, "rope_theta": 1000000.0,
    "tie_word_embeddings": True, "rms_norm_eps": 1e-6, "image_token_id": 151655, "video_token_id": 151656,
    "vision_start_token_id": 151652, "vision_end_token_id": 151653,
    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
    "vision_config": {"depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16,
                      "out_hidden_size": 2048, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
                      "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31], "in_chans": 3,
                      "hidden_act": "silu"},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch-sizes", default="1,8,16,32")
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--text-tokens", type=int, default=300, help="prompt text tokens besides the image")
    ap.add_argument("--width", type=int, default=728)
    ap.add_argument("--height", type=int, default=1652)
    args = ap.parse_args()
    import torch  # after the flags: --help imports no framework
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration


    torch.manual_seed(0)
    config = Qwen2_5_VLConfig(**QWEN25VL_3B)
    model = Qwen2_5_VLForConditionalGeneration(config).to("cuda", torch.bfloat16).eval()
    torch.cuda.synchronize()
    loaded = torch.cuda.memory_allocated()
    gh, gw = args.height // 14, args.width // 14
    n_image = gh * gw // 4
    results = []
    for batch in (int(b) for b in args.batch_sizes.split(",")):
        text = torch.randint(1000, 100000, (batch, args.text_tokens))
        image = torch.cat([torch.tensor([[config.vision_start_token_id]]),
                           torch.full((1, n_image), config.image_token_id),
                           torch.tensor([[config.vision_end_token_id]])], dim=1).expand(batch, -1)
        ids = torch.cat([text[:, :20], image, text[:, 20:]], dim=1).cuda()
        pixel_values = torch.randn(batch * gh * gw, 3 * 2 * 14 * 14, dtype=torch.bfloat16, device="cuda")
        grid = torch.tensor([[1, gh, gw]] * batch, device="cuda")
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), pixel_values=pixel_values,
                                 image_grid_thw=grid, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                                 do_sample=False, eos_token_id=None, pad_token_id=0)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        peak = torch.cuda.max_memory_allocated()
        row = {"batch": batch, "prompt_tokens": ids.shape[1], "new_tokens": out.shape[1] - ids.shape[1],
               "seconds": round(seconds, 2), "screens_per_s": round(batch / seconds, 2),
               "peak_gib": round(peak / 2**30, 2),
               "peak_over_weights_per_row_mib": round((peak - loaded) / batch / 2**20, 1)}
        results.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({"weights_gib": round(loaded / 2**30, 2), "image_tokens": n_image,
                      "gpu": torch.cuda.get_device_name()}))


if __name__ == "__main__":
    main()
