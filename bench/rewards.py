"""Reward throughput for a GRPO-sized batch (512 prompts x 8 samples): completions/s per reward and mode.

    .venvs/rl/bin/python bench/rewards.py [--prompts 512] [--samples 8]

Completions are a realistic mix (hit, miss, pretty-printed JSON, wrong action, long reasoning, junk).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require()

from core.rewards import score_batch  # noqa: E402

GUIR1 = [
    "<think>{t}</think><answer>[{{'action': 'click', 'point': [{x}, {y}], 'input_text': 'no input text'}}]</answer>",
    "<think>{t}</think>\n<answer>[\n  {{\"action\": \"click\", \"point\": [{x}, {y}], \"input_text\": \"\"}}\n]</answer>",
    "<think>{t}</think><answer>[{{'action': 'type', 'point': [-100, -100], 'input_text': 'hello world'}}]</answer>",
    "{t} I would click at ({x}, {y})",
]
TOOL = ('Thought: {t}\nAction: tap\n<tool_call>\n{{"name": "mobile_use", "arguments": '
        '{{"action": "click", "coordinate": [{x}, {y}]}}}}\n</tool_call>')


def batch(n: int, rng: random.Random, templates: list[str]) -> list[str]:
    out = []
    for _ in range(n):
        t = " ".join(rng.choice(["the", "search", "button", "is", "at", "top", "left"]) for _ in range(rng.randint(20, 400)))
        out.append(rng.choice(templates).format(t=t, x=rng.randint(0, 1000), y=rng.randint(0, 1000)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=512)
    ap.add_argument("--samples", type=int, default=8)
    args = ap.parse_args()
    n = args.prompts * args.samples
    rng = random.Random(0)
    gt = json.dumps({"action": "click", "gt_bbox": [200, 200, 600, 600], "input_text": "no input text"})
    guir1 = batch(n, rng, GUIR1)
    runs = [("r1gui", {"mode": "guir1"}, guir1, {}), ("r1gui", {"mode": "default"}, guir1, {}),
            ("r1gui_format", {}, guir1, {}), ("aitw", {}, guir1, {"frame": "grid1000"}),
            ("gui_agent", {}, batch(n, rng, [TOOL]), {"frame": "grid1000"})]
    print(f"batch: {args.prompts} prompts x {args.samples} samples = {n} completions")
    for name, options, comps, extra in runs:
        t0 = time.perf_counter()
        score_batch(name, comps, [gt] * n, [extra] * n, **options)
        dt = time.perf_counter() - t0
        label = name + (f" ({options['mode']})" if "mode" in options else "")
        print(f"{label:24s} {n / dt:10.0f} completions/s   {dt * 1000:8.1f} ms per batch")


if __name__ == "__main__":
    main()
