"""Counts every data command ends with: read, written, skipped by reason (nothing is silently dropped)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ConversionSummary:
    read: int = 0
    written: int = 0
    skipped: Counter = field(default_factory=Counter)
    #: first few (record, reason) pairs per reason, for the report
    examples: dict[str, list[str]] = field(default_factory=dict)
    #: facts the run detected and the user should see (e.g. the box convention of a file)
    notes: list[str] = field(default_factory=list)

    def note(self, message: str) -> None:
        if message not in self.notes:
            self.notes.append(message)

    def skip(self, reason: str, record: str) -> None:
        self.skipped[reason] += 1
        ex = self.examples.setdefault(reason, [])
        if len(ex) < 5:
            ex.append(record)

    @property
    def n_skipped(self) -> int:
        return sum(self.skipped.values())

    def as_dict(self) -> dict:
        return {"read": self.read, "written": self.written, "skipped": dict(self.skipped),
                "examples": self.examples, "notes": self.notes}

    def render(self) -> str:
        lines = [f"read {self.read}, written {self.written}, skipped {self.n_skipped}"]
        for reason, n in sorted(self.skipped.items()):
            lines.append(f"  skipped {n} x {reason} (e.g. {', '.join(self.examples.get(reason, []))})")
        return "\n".join(lines)


class NothingWritten(ValueError):
    """Records were read and every one was skipped: an error like a run whose every row failed (exit 2, one line),
    never an empty output file."""


def refuse_nothing_written(summary: ConversionSummary, *, skip_missing: bool = False) -> None:
    """Raise :class:`NothingWritten` when ``summary`` read records (or skipped some) and wrote none; called before
    an output is published, so no empty file is left under its name. ``skip_missing``: the run skipped bad
    records instead of stopping (the message says how to see the first one)."""
    if summary.written or not (summary.read or summary.n_skipped):
        return
    reasons = ", ".join(f"{n} x {reason}" for reason, n in summary.skipped.most_common(3))
    more = len(summary.skipped) - 3
    hint = "; fix the input (or --images), or run without --skip-missing to stop at the first bad record"
    raise NothingWritten(f"every record was skipped ({summary.read} read: {reasons or 'no reason recorded'}"
                         f"{f', {more} more reasons' if more > 0 else ''}), so nothing was written and no output "
                         f"file is left{hint if skip_missing else ''}")


__all__ = ["ConversionSummary", "NothingWritten", "refuse_nothing_written"]
