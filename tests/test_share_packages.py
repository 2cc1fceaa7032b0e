"""scripts/share_packages.py: `make setup` hard-links the heavy torch/CUDA distributions the rl environment already
installed into the llamafactory one when the lock file pins the same versions (~5 GB less disk; CI once ran out of
disk installing the second copy), and links nothing it should not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "share_packages.py"


def fake_venv(root: Path, dists: dict[str, str]) -> Path:
    """A venv layout with one file, one console script and a dist-info (METADATA, RECORD) per distribution."""
    site = root / "lib" / "python3.11" / "site-packages"
    (root / "bin").mkdir(parents=True)
    site.mkdir(parents=True)
    (root / "bin" / "python").write_text("")
    for name, version in dists.items():
        mod = name.replace("-", "_")
        (site / mod).mkdir()
        (site / mod / "lib.so").write_bytes(name.encode() * 1000)
        (root / "bin" / f"{mod}-run").write_text(f"#!{root}/bin/python\nimport {mod}\n")
        info = site / f"{mod}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "RECORD").write_text(f"{mod}/lib.so,sha256=x,1000\n../../../bin/{mod}-run,,\n"
                                     f"{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    return site


def share(src: Path, dst: Path, lock: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, src, dst, lock], capture_output=True, text=True, check=False)


def test_same_pinned_versions_are_hard_linked_with_their_scripts(tmp_path):
    src_site = fake_venv(tmp_path / "rl", {"torch": "2.14.1", "nvidia-cublas": "13.1", "numpy": "2.0"})
    dst_site = fake_venv(tmp_path / "lf", {})
    lock = tmp_path / "lock.txt"
    lock.write_text("numpy==2.0\nnvidia-cublas==13.1\ntorch==2.14.1\n")
    done = share(tmp_path / "rl", tmp_path / "lf", lock)
    assert done.returncode == 0, done.stderr
    assert "linked 2 distributions" in done.stdout and "torch==2.14.1" in done.stdout
    for mod in ("torch", "nvidia_cublas"):
        assert (dst_site / mod / "lib.so").stat().st_ino == (src_site / mod / "lib.so").stat().st_ino
        script = (tmp_path / "lf" / "bin" / f"{mod}-run").read_text()
        assert script.splitlines()[0] == f"#!{tmp_path / 'lf'}/bin/python"  # the target's interpreter
    assert not (dst_site / "numpy").exists()  # not a heavy distribution: pip installs it
    assert "Version: 2.14.1" in (dst_site / "torch-2.14.1.dist-info" / "METADATA").read_text()


def test_other_versions_and_packages_already_there_are_left_to_pip(tmp_path):
    fake_venv(tmp_path / "rl", {"torch": "2.14.1", "triton": "3.8.0"})
    dst_site = fake_venv(tmp_path / "lf", {"triton": "3.8.0"})
    own = (dst_site / "triton" / "lib.so").stat().st_ino
    lock = tmp_path / "lock.txt"
    lock.write_text("torch==2.13.0\ntriton==3.8.0\n")
    done = share(tmp_path / "rl", tmp_path / "lf", lock)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert not (dst_site / "torch").exists()
    assert (dst_site / "triton" / "lib.so").stat().st_ino == own


def test_an_incomplete_source_or_a_missing_environment_links_nothing(tmp_path):
    src_site = fake_venv(tmp_path / "rl", {"torch": "2.14.1"})
    (src_site / "torch" / "lib.so").unlink()
    dst_site = fake_venv(tmp_path / "lf", {})
    lock = tmp_path / "lock.txt"
    lock.write_text("torch==2.14.1\n")
    assert share(tmp_path / "rl", tmp_path / "lf", lock).stdout == ""
    assert not (dst_site / "torch").exists() and not (tmp_path / "lf" / "bin" / "torch-run").exists()
    assert share(tmp_path / "absent", tmp_path / "lf", lock).returncode == 0
