"""Numbers read back from training frameworks' console logs (no framework import).

:func:`step_metrics`: verl's console logger writes one line per training step, ``step:N - key:value - ...``
(values plain floats or NumPy reprs such as ``np.float64(0.5)``); the tests, ``bench/verl_step.py`` and
``make demo-agent`` read its per-step metrics back with it.
"""

from __future__ import annotations

import re

_STEP_LINE = re.compile(r"\bstep:(\d+) - (.*)$")
_NUMPY_REPR = re.compile(r"^np\.\w+\((.*)\)$")


def step_metrics(output: str) -> dict[int, dict[str, float]]:
    """The metrics of each training step in verl's console ``output``: ``{step: {key: value}}``; values that
    are not numbers are left out, a step logged twice merges its keys (the later value wins)."""
    steps: dict[int, dict[str, float]] = {}
    for line in output.splitlines():
        match = _STEP_LINE.search(line)
        if not match:
            continue
        metrics = steps.setdefault(int(match.group(1)), {})
        for part in match.group(2).split(" - "):
            key, _, value = part.partition(":")
            try:
                metrics[key.strip()] = float(_NUMPY_REPR.sub(r"\1", value.strip()))
            except ValueError:
                continue
    return steps


__all__ = ["step_metrics"]
