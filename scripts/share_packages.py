"""Seed a new environment with hard links to the heavy packages another environment already installed.

torch's PyPI build for x86_64 brings ~5.3 GB (torch, triton, the nvidia-* CUDA libraries) into every venv, and the
rl and llamafactory environments pin the same versions. Linking those files (same filesystem: no copy, no extra
disk) before pip runs makes pip find them installed and skip them, so `make setup` needs ~5 GB less free disk.

Only distributions pinned to the same version in the target's lock file are linked, whole (every file its RECORD
lists, the dist-info included); console scripts get the target's interpreter in their shebang. Safe to share:
pip never edits an installed file in place (it unlinks and writes anew), so removing or upgrading a package in
one environment leaves the other's links intact. Anything unexpected (another filesystem, a missing file) links
nothing for that distribution and pip installs it as usual.

usage: python scripts/share_packages.py SOURCE_VENV TARGET_VENV LOCK_FILE
"""

from __future__ import annotations

import csv
import os
import re
import sys
from pathlib import Path

# The distributions worth sharing: the multi-GB CUDA build of torch and what it pulls in.
HEAVY = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-.*)$")


def normalize(name: str) -> str:
    """PEP 503 name normalization."""
    return re.sub(r"[-_.]+", "-", name).lower()


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    if len(found) != 1:
        raise SystemExit(f"error: {venv}: expected one lib/python3*/site-packages, found {len(found)}")
    return found[0]


def pins(lock: Path) -> dict[str, str]:
    """name -> version for every `name==version` line of a pip freeze lock file."""
    out = {}
    for line in lock.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)", line.strip())
        if m:
            out[normalize(m.group(1))] = m.group(2)
    return out


def installed(site: Path) -> dict[str, tuple[str, Path]]:
    """name -> (version, dist-info folder) for every distribution installed in `site`."""
    out = {}
    for info in site.glob("*.dist-info"):
        meta = info / "METADATA"
        if not meta.is_file():
            continue
        fields = dict(
            line.split(": ", 1) for line in meta.read_text(errors="replace").splitlines()[:20] if ": " in line
        )
        if "Name" in fields and "Version" in fields:
            out[normalize(fields["Name"])] = (fields["Version"].strip(), info)
    return out


def link_distribution(info: Path, src_site: Path, dst_venv: Path, dst_site: Path) -> int:
    """Hard-link every file of one distribution into the target; returns the bytes shared (0: nothing linked)."""
    with open(info / "RECORD", newline="") as f:
        rel_paths = [row[0] for row in csv.reader(f) if row]
    plan = []
    for rel in rel_paths:
        src = (src_site / rel).resolve()
        dst = (dst_site / rel).resolve()
        if not src.is_file() or dst.exists():
            return 0  # incomplete source or something already there: let pip decide
        plan.append((src, dst))
    made = []
    try:
        for src, dst in plan:
            dst.parent.mkdir(parents=True, exist_ok=True)
            if dst.parent == dst_venv / "bin" and _is_script(src):
                _write_script(src, dst, dst_venv)
            else:
                os.link(src, dst)
            made.append(dst)
    except OSError:  # another filesystem, permissions: undo this distribution, pip installs it
        for dst in made:
            dst.unlink(missing_ok=True)
        return 0
    return sum(src.stat().st_size for src, _ in plan)


def _is_script(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"#!"


def _write_script(src: Path, dst: Path, dst_venv: Path) -> None:
    """Copy a console script with its shebang pointing at the target's interpreter."""
    lines = src.read_bytes().split(b"\n", 1)
    dst.write_bytes(b"#!" + str(dst_venv / "bin" / "python").encode() + b"\n" + (lines[1] if len(lines) > 1 else b""))
    dst.chmod(0o755)


def main(argv: list[str]) -> None:
    if len(argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    src_venv, dst_venv, lock = (Path(a).resolve() for a in argv)
    if not (src_venv / "bin" / "python").exists() or not lock.is_file():
        return  # nothing to share from
    src_site, dst_site = site_packages(src_venv), site_packages(dst_venv)
    wanted, have, there = pins(lock), installed(src_site), installed(dst_site)
    shared, names = 0, []
    for name, (version, info) in sorted(have.items()):
        if HEAVY.match(name) and wanted.get(name) == version and name not in there:
            size = link_distribution(info, src_site, dst_venv, dst_site)
            if size:
                shared += size
                names.append(f"{name}=={version}")
    if names:
        print(f"linked {len(names)} distributions from {src_venv.name} ({shared / 2**30:.1f} GiB not copied): "
              + ", ".join(names))


if __name__ == "__main__":
    main(sys.argv[1:])
