"""One validation for every number a user gives (command-line options, option files): finite, of the right kind,
in range, and named in the error."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


def check_number(name: str, value: Any, *, low: float | None = None, high: float | None = None,
                 low_open: bool = False, integer: bool = False) -> Any:
    """``value`` when it is a finite number (an ``int`` with ``integer``; never a bool) with ``low <= value``
    (``low < value`` with ``low_open``) and ``value <= high``; else ``ValueError`` naming ``name``, the value and
    the allowed range. None is returned unchanged (an option left at its default)."""
    if value is None:
        return None
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    below = low is not None and (value <= low if low_open else value < low)
    if below or (high is not None and value > high):
        bounds = [f"{'>' if low_open else '>='} {low:g}"] if low is not None else []
        bounds += [f"<= {high:g}"] if high is not None else []
        raise ValueError(f"{name} must be {' and '.join(bounds)}, got {value!r}")
    return value


def check_numbers(checks: Iterable[tuple[str, Any, dict[str, Any]]]) -> None:
    """:func:`check_number` for each ``(name, value, bounds)``; the first bad one raises."""
    for name, value, bounds in checks:
        check_number(name, value, **bounds)


__all__ = ["check_number", "check_numbers"]
