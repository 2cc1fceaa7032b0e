"""Build hygiene: pyproject's license is an SPDX expression (setuptools' table form stops working after
2027-02-18) with the license file shipped, and the base environment has a lock file that pins what it holds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENVS = REPO / ".venvs"


def test_wheel_metadata_has_the_spdx_license_and_no_deprecation_warning(tmp_path):
    # Built from a copy: setuptools writes its egg-info beside the sources.
    src = tmp_path / "src"
    shutil.copytree(REPO / "core", src / "core", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    r = subprocess.run([str(VENVS / "rl" / "bin" / "pip"), "wheel", "-v", "--no-deps", "--no-build-isolation",
                        str(src), "-w", str(tmp_path)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "`project.license` as a TOML table is deprecated" not in r.stdout + r.stderr
    (wheel,) = tmp_path.glob("gui_agent-*.whl")
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        licenses = [n for n in z.namelist() if "/licenses/" in n]
    assert "License-Expression: Apache-2.0" in meta.splitlines() and "License-File: LICENSE" in meta.splitlines()
    assert [Path(n).name for n in licenses] == ["LICENSE"]


def test_base_lock_pins_exactly_what_the_base_environment_holds():
    lock = (REPO / "requirements" / "base.lock.txt").read_text().split()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    freeze = subprocess.run([str(VENVS / "base" / "bin" / "pip"), "freeze", "--exclude-editable"], env=env,
                            capture_output=True, text=True, check=True).stdout.split()
    assert sorted(lock, key=str.lower) == sorted(freeze, key=str.lower)
    pinned = {re.split("==", line)[0].lower().replace("_", "-") for line in lock}
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["dev"]
    names = {re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower().replace("_", "-") for d in wanted}
    assert names <= pinned, names - pinned
