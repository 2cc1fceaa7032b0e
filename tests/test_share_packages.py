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


def test_record_lines_leaving_an_environment_and_symlinks_link_nothing(tmp_path):
    """Issue 50 item 5: a RECORD line whose ``../`` climbs out of the target environment (an absolute one too), or
    a source file that is a symbolic link (to a file anywhere on the machine), links nothing of that distribution;
    the other distributions are linked as ever."""
    src_site = fake_venv(tmp_path / "src" / "rl", {"torch": "2.14.1", "triton": "3.8.0", "nvidia-nccl": "2.2"})
    dst_site = fake_venv(tmp_path / "lf", {})
    (tmp_path / "src" / "planted.txt").write_text("outside the source venv")
    (tmp_path / "secret.txt").write_text("a file of the machine")
    with open(src_site / "torch-2.14.1.dist-info" / "RECORD", "a") as f:
        f.write("../../../../planted.txt,,\n")  # from the target's site-packages: tmp_path/planted.txt
    (src_site / "triton" / "link.so").symlink_to(tmp_path / "secret.txt")
    with open(src_site / "triton-3.8.0.dist-info" / "RECORD", "a") as f:
        f.write("triton/link.so,,\n")
    with open(src_site / "nvidia_nccl-2.2.dist-info" / "RECORD", "a") as f:
        f.write(f"{tmp_path / 'secret.txt'},,\n")
    lock = tmp_path / "lock.txt"
    lock.write_text("torch==2.14.1\ntriton==3.8.0\nnvidia-nccl==2.2\n")
    done = share(tmp_path / "src" / "rl", tmp_path / "lf", lock)
    assert done.returncode == 0 and done.stdout == "", (done.stdout, done.stderr)
    assert not (tmp_path / "planted.txt").exists() and (tmp_path / "secret.txt").stat().st_nlink == 1
    assert not any((dst_site / mod).exists() for mod in ("torch", "triton", "nvidia_nccl"))


def test_console_scripts_get_the_shebang_pip_writes_and_run(tmp_path):
    """Issue 50 item 5: a target path with a space gets pip's /bin/sh shebang (distlib's ``_build_shebang``), so the
    linked console script runs with the target's interpreter; a source script in that form gets the plain one."""
    for src_name, dst_name in (("rl", "my envs/lf"), ("old envs/rl", "lf")):
        src, dst = tmp_path / src_name, tmp_path / dst_name
        src_site = fake_venv(src, {"torch": "2.14.1"})
        fake_venv(dst, {})
        (dst / "bin" / "python").unlink()
        (dst / "bin" / "python").symlink_to(sys.executable)
        python = f'"{src}/bin/python"' if " " in str(src) else str(src / "bin" / "python")
        head = (f"#!/bin/sh\n'''exec' {python} \"$0\" \"$@\"\n' '''\n" if " " in str(src) else f"#!{python}\n")
        (src / "bin" / "torch-run").write_text(head + "import sys\nprint('ran', sys.argv[1:])\n")
        (src_site / "torch" / "__init__.py").write_text("")
        lock = tmp_path / "lock.txt"
        lock.write_text("torch==2.14.1\n")
        assert share(src, dst, lock).returncode == 0
        script = (dst / "bin" / "torch-run").read_text()
        if " " in str(dst):
            assert script.startswith(f"#!/bin/sh\n'''exec' \"{dst}/bin/python\" \"$0\" \"$@\"\n' '''\nimport sys\n")
        else:
            assert script.startswith(f"#!{dst}/bin/python\nimport sys\n")
        ran = subprocess.run([dst / "bin" / "torch-run", "a b"], capture_output=True, text=True, check=False)
        assert ran.returncode == 0 and ran.stdout == "ran ['a b']\n", (script, ran.stderr)
