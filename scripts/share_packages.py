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


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (already normalized) lies inside the folder ``root``."""
    return path == root or root in path.parents


def link_distribution(info: Path, src_venv: Path, src_site: Path, dst_venv: Path, dst_site: Path) -> int:
    """Hard-link every file of one distribution into the target; returns the bytes shared (0: nothing linked).

    Every RECORD path stays inside its environment: its source inside the source venv and its target inside the
    target venv, ``..`` resolved by name (a console script's ``../../../bin/x`` is inside; a path that climbs out,
    or an absolute one, links nothing for the distribution), and the target's existing folders resolved too (a
    symbolic link there cannot carry a link outside). A source file that is a symbolic link, or not a regular
    file, links nothing either: its target could be any file of the machine (pip writes regular files only)."""
    with open(info / "RECORD", newline="") as f:
        rel_paths = [row[0] for row in csv.reader(f) if row]
    plan = []
    for rel in rel_paths:
        src = Path(os.path.normpath(src_site / rel))
        dst = Path(os.path.normpath(dst_site / rel))
        if not (_inside(src, src_venv) and _inside(dst, dst_venv)):
            return 0  # a RECORD line that leaves its environment: let pip decide
        if src.is_symlink() or not src.is_file() or dst.exists() or dst.is_symlink():
            return 0  # incomplete or odd source, or something already there: let pip decide
        plan.append((src, dst))
    made = []
    try:
        for src, dst in plan:
            dst.parent.mkdir(parents=True, exist_ok=True)
            if not _inside(dst.parent.resolve(), dst_venv.resolve()):
                raise OSError(f"{dst.parent} leads outside {dst_venv}")
            if dst.parent == dst_venv / "bin" and _is_script(src):
                _write_script(src, dst, dst_venv)
            else:
                os.link(src, dst, follow_symlinks=False)
            made.append(dst)
    except OSError:  # another filesystem, permissions, a link out: undo this distribution, pip installs it
        for dst in made:
            dst.unlink(missing_ok=True)
        return 0
    return sum(src.stat().st_size for src, _ in plan)


def _is_script(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"#!"


#: The first lines of a script pip gave the /bin/sh shebang (an interpreter path with a space, or a long one).
_SH_SHEBANG = re.compile(rb"\A#!/bin/sh\n'''exec' .*\n' '''\n")
#: Longest shebang line the kernel reads whole (pip's distlib: 127, 512 on macOS).
MAX_SHEBANG = 512 if sys.platform == "darwin" else 127


def shebang(python: Path) -> bytes:
    """The shebang pip writes for a console script run by ``python`` (its vendored distlib,
    ``ScriptMaker._build_shebang`` and ``enquote_executable``): ``#!<python>`` when the path has no space and the
    line fits :data:`MAX_SHEBANG`; else ``/bin/sh`` re-executing the quoted interpreter, so a path with a space
    still runs the script."""
    executable = os.fsencode(python)
    if b" " in executable:
        executable = b'"' + executable + b'"'
    if b" " not in executable and len(executable) + 3 <= MAX_SHEBANG:
        return b"#!" + executable + b"\n"
    return b"#!/bin/sh\n'''exec' " + executable + b' "$0" "$@"\n' + b"' '''\n"


def _write_script(src: Path, dst: Path, dst_venv: Path) -> None:
    """Copy a console script with its shebang (either form pip writes) pointing at the target's interpreter."""
    data = src.read_bytes()
    sh = _SH_SHEBANG.match(data)
    body = data[sh.end():] if sh else ([*data.split(b"\n", 1), b""])[1]
    dst.write_bytes(shebang(dst_venv / "bin" / "python") + body)
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
            size = link_distribution(info, src_venv, src_site, dst_venv, dst_site)
            if size:
                shared += size
                names.append(f"{name}=={version}")
    if names:
        print(f"linked {len(names)} distributions from {src_venv.name} ({shared / 2**30:.1f} GiB not copied): "
              + ", ".join(names))


if __name__ == "__main__":
    main(sys.argv[1:])
