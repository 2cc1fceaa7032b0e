"""Benchmark core.parsers: parses per second per format on typical answers, and the worst time on 1 MB
adversarial inputs.

    .venvs/rl/bin/python bench/parsers.py [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require()

from core.parsers import parse_action  # noqa: E402

MB = 1_000_000

TYPICAL = {
    "guir1": "<think>The search bar is at the top, tap it.</think> <answer>[{'action': 'click', 'point': [364, 118], "
             "'input_text': 'no input text'}]</answer>",
    "guir1 (lenient)": '<think>scroll</think>\n<answer>\n[{"action": "scroll", "point": [-100, -100], '
                       '"input_text": "down"}]\n</answer>',
    "tool_call": 'Thought: The clock app is visible.\nAction: Tap the Clock icon.\n<tool_call>\n{"name": "mobile_use", '
                 '"arguments": {"action": "click", "coordinate": [503, 247]}}\n</tool_call>',
    "pyautogui": "Thought: Search first.\nAction: Click the search box.\n```python\npyautogui.click(x=0.31, y=0.62)\n```",
    "json": '{"action": "type", "text": "shanghai shopping mall"}',
}

ADVERSARIAL = {
    "<answer> + [ x 500k": "<answer>" + "[" * 500_000,
    "{ x 1M": "{" * MB,
    "deep nesting inside size limit": "<answer>" + "[" * 30_000 + "]" * 30_000 + "</answer>",
    "1M-digit number": "<answer>[{'action': 'click', 'point': [" + "9" * (MB - 60) + ", 1]}]</answer>",
    "<tool_call> + { x 1M": "<tool_call>" + "{" * (MB - 11),
    "pyautogui ( x 1M": "pyautogui.click(" + "(" * (MB - 16),
    "1M newlines": "\n" * MB,
    "call keywords, no newlines": "answer(mobile.home()pyautogui." * (MB // 30),
    "unicode junk": ("\u202e\U0001f600\x00\ufffd<answer>" * (MB // 12))[:MB],
    "many tool_call tags": "<tool_call>{}</tool_call>" * (MB // 25),
}


def rate(text: str, seconds: float) -> float:
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(100):
            parse_action(text)
        n += 100
    return n / (time.perf_counter() - t0)


def worst(text: str, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        parse_action(text)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0, help="time per format for the throughput runs")
    args = ap.parse_args()
    print(f"{'format':<20} {'parses/s':>12}  ok")
    for name, text in TYPICAL.items():
        r = parse_action(text)
        print(f"{name:<20} {rate(text, args.seconds):>12,.0f}  {r.ok} {','.join(r.tolerances)}")
    print(f"\n{'adversarial input (<= 1 MB)':<32} {'ms (best of 3)':>15}  error")
    worst_ms = 0.0
    for name, text in ADVERSARIAL.items():
        ms = worst(text) * 1000
        worst_ms = max(worst_ms, ms)
        print(f"{name:<32} {ms:>15.2f}  {parse_action(text).error}")
    print(f"\nworst case: {worst_ms:.2f} ms")


if __name__ == "__main__":
    main()
