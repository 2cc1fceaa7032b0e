"""Stamps that make a make target idempotent (mk/data.mk): a target that wrote an output records how, and a rerun
whose inputs and command are unchanged says the output is up to date instead of failing on it.

    python scripts/stamp.py fresh STAMP KEY INPUT...   exit 0: STAMP exists, was written for KEY, and no file of the
                                                       INPUTs (folders: every file below them) is newer than it;
                                                       exit 1: STAMP exists (the output is this target's) but KEY or
                                                       an input changed; exit 3: no STAMP (nothing known of the output)
    python scripts/stamp.py write STAMP KEY            record KEY in STAMP (after the output is complete)

KEY is the command that made the output, as one string. Standard library only; reads mtimes, never file contents.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

FRESH, CHANGED, UNKNOWN = 0, 1, 3


def newest(paths: list[Path]) -> float:
    """The newest mtime among the paths and every file below the folders among them (0 for none)."""
    times = [0.0]
    for path in paths:
        if path.is_dir():
            for root, _, files in os.walk(path):
                times += [(Path(root) / f).stat().st_mtime for f in files]
            times.append(path.stat().st_mtime)
        elif path.exists():
            times.append(path.stat().st_mtime)
    return max(times)


def fresh(stamp: Path, key: str, inputs: list[Path]) -> int:
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))["key"]
    except (OSError, ValueError, KeyError, TypeError):
        return UNKNOWN
    if recorded != key or newest(inputs) > stamp.stat().st_mtime:
        return CHANGED
    return FRESH


def write(stamp: Path, key: str) -> int:
    tmp = stamp.with_name(stamp.name + ".tmp")
    tmp.write_text(json.dumps({"key": key}) + "\n", encoding="utf-8")
    os.replace(tmp, stamp)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "fresh":
        return fresh(Path(argv[1]), argv[2], [Path(p) for p in argv[3:]])
    if len(argv) == 3 and argv[0] == "write":
        return write(Path(argv[1]), argv[2])
    print("usage: python scripts/stamp.py fresh STAMP KEY INPUT... | write STAMP KEY", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
