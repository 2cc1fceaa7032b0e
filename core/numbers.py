"""One validation for every number a user, a file or a model gives: finite, in range, named in the error.

:func:`checked_number` is the owner: readers (``data convert``, gold records, the action model), options
(rewards, the simulated phone) and tools call it and wrap :class:`NumberError` into their own error type when
they have one. It never raises anything but :class:`NumberError` (a ``ValueError``): a 400-digit integer, ``1e999``,
``NaN``, a bool or a string that is no number all come back as one error naming the value's ``name``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


class NumberError(ValueError):
    """A number that cannot be used; ``name`` names it (an option, a field), ``reason`` says why."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"{name}: {reason}")
        self.name, self.reason = name, reason


def checked_number(value: Any, name: str, *, minimum: float | None = None, maximum: float | None = None,
                   above: float | None = None, integer: bool = False) -> float:
    """``value`` as a finite float (an ``int`` when ``integer``), else :class:`NumberError` naming ``name``.

    Accepted: what ``float()`` reads (ints, floats, numpy scalars, numeric strings), never a bool. ``minimum`` /
    ``maximum`` are inclusive bounds, ``above`` an exclusive lower bound; ``integer`` refuses a fractional value
    (2.9 is an error, 3.0 becomes 3).
    """
    shown = _shown(value)
    if isinstance(value, bool):
        raise NumberError(name, f"must be a number, got {shown}")
    try:
        number = float(value)
    except OverflowError:  # an int beyond the float range (about 1.8e308)
        raise NumberError(name, f"must be a finite number, got {shown} (beyond the float range)") from None
    except (TypeError, ValueError):
        raise NumberError(name, f"must be a number, got {shown}") from None
    if not math.isfinite(number):
        raise NumberError(name, f"must be a finite number, got {shown}")
    if integer and not number.is_integer():
        raise NumberError(name, f"must be a whole number, got {shown}")
    if minimum is not None and number < minimum:
        raise NumberError(name, f"must be >= {minimum:g}, got {shown}")
    if maximum is not None and number > maximum:
        raise NumberError(name, f"must be <= {maximum:g}, got {shown}")
    if above is not None and not number > above:
        raise NumberError(name, f"must be > {above:g}, got {shown}")
    return int(number) if integer else number


def is_finite_number(value: Any) -> bool:
    """Whether ``value`` is an int or float (never a bool) that is a finite float: the test of "a number" in a
    structure read from a file (a box, a polygon vertex). An int beyond the float range (``10**400``) is not one;
    it never raises (``math.isfinite`` raises ``OverflowError`` on such an int)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def checked_numbers(checks: Iterable[tuple[str, Any, dict[str, Any]]]) -> None:
    """:func:`checked_number` for each ``(name, value, bounds)`` whose value is given (None: an option left at its
    default); the first bad one raises. How a command checks all its numeric options before it starts."""
    for name, value, bounds in checks:
        if value is not None:
            checked_number(value, name, **bounds)


def _shown(value: Any) -> str:
    """``value``'s repr bounded to about 60 characters, start and end kept (:func:`core.console.quoted`; a huge int
    is shown by its size: Python refuses to print > 4300 digits)."""
    from core.console import quoted

    return quoted(value, 60)


__all__ = ["NumberError", "checked_number", "checked_numbers", "is_finite_number"]
