"""Benchmark of ``core.eval``: rows/s scoring 100k prediction rows, and peak Python memory at 10k vs 100k rows
(flat when scoring streams).

    make bench-eval [BENCH_ARGS="--rows 100000"]      (= .venvs/rl/bin/python bench/eval.py)

Rows are GUI-R1 navigation rows (AndroidControl-style: click / long_press / type / scroll / press_back, gold
points on a 1080x2400 screen) and ScreenSpot grounding rows, with predictions right or wrong at random (seeded).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require()

from core.eval.metrics import evaluate  # noqa: E402

ACTIONS = ("click", "long_press", "type", "scroll", "press_back", "open_app")


def nav_row(i: int, rng: random.Random) -> dict:
    a = ACTIONS[i % len(ACTIONS)]
    gx, gy = rng.uniform(0, 1080), rng.uniform(0, 2400)
    right = rng.random() < 0.6
    text = {"type": "search for cheap flights", "scroll": "down", "open_app": "Clock"}.get(a, "no input text")
    return {"id": i, "instruction": "do the thing", "history": "None", "gt_action": a, "gt_bbox": [gx, gy],
            "gt_input_text": text, "group": "android", "ui_type": a, "image_size": [1080, 2400],
            "pred": f"<think>...</think><answer>[{{'action': '{a}', 'point': [1, 2]}}]</answer>",
            "pred_action": a if right else "click",
            "pred_coord": [gx + rng.uniform(-50, 50), gy + rng.uniform(-50, 50)] if right else [5.0, 5.0],
            "pred_input_text": text if right else "no input text"}


def grounding_row(i: int, rng: random.Random) -> dict:
    x1, y1 = rng.uniform(0, 1800), rng.uniform(0, 1000)
    return {"id": i, "instruction": "open settings", "gt_bbox": [x1, y1, x1 + 80, y1 + 40],
            "group": ("mobile", "desktop", "web")[i % 3], "ui_type": ("text", "icon")[i % 2],
            "image_size": [1920, 1080], "pred_action": "click", "pred_input_text": "no input text",
            "pred_coord": [x1 + rng.uniform(-20, 100), y1 + rng.uniform(-10, 50)]}


def write_rows(path: Path, n: int, make) -> Path:
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps(make(i, rng)) + "\n")
    return path


def rate(path: Path, bench: str, mode: str, n: int) -> float:
    t0 = time.perf_counter()
    res = evaluate(path, bench, mode)
    dt = time.perf_counter() - t0
    assert res.n_rows == n
    return n / dt


def peak_mib(path: Path, bench: str, mode: str) -> float:
    tracemalloc.start()
    evaluate(path, bench, mode)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        small_n = max(1, args.rows // 10)
        for name, make, bench in (("navigation", nav_row, "androidcontrol_high"),
                                  ("grounding", grounding_row, "screenspot")):
            print(f"{name}: writing {args.rows} + {small_n} prediction rows ...", flush=True)
            big = write_rows(Path(d) / f"{name}_big.jsonl", args.rows, make)
            small = write_rows(Path(d) / f"{name}_small.jsonl", small_n, make)
            for mode in ("strict", "guir1"):
                print(f"{name} {mode}: scoring (rate, then peak memory at both sizes) ...", flush=True)
                r = rate(big, bench, mode, args.rows)
                m_small, m_big = peak_mib(small, bench, mode), peak_mib(big, bench, mode)
                print(f"{name:10s} {mode:6s} {args.rows} rows: {r:9.0f} rows/s; peak Python memory "
                      f"{m_small:.2f} MiB at {small_n} rows, {m_big:.2f} MiB at {args.rows} rows", flush=True)


if __name__ == "__main__":
    main()
