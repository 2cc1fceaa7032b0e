"""Shared fixtures: the real data folder beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the same examples every time (a red CI must mean a real regression); local runs explore.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# `make test` runs pytest inside make: its MAKELEVEL/MAKEFLAGS would make every `make` a test starts print
# "Entering directory" lines and inherit -j/-s flags. Tests see the same environment under make and plain pytest.
for _make_var in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"):
    os.environ.pop(_make_var, None)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _restore_environ():
    """Undo whatever a test's in-process code wrote into os.environ (recipe ``env:`` blocks set
    GUI_REWARD_OPTIONS, for one), so no setting leaks into later tests or their subprocesses."""
    saved = dict(os.environ)
    yield
    for key in set(os.environ) - set(saved):
        del os.environ[key]
    os.environ.update(saved)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (CI always has it)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def png_bomb() -> bytes:
    """A valid 20000 x 20000 PNG of under 100 bytes (one empty IDAT): its header claims 400 MP, nothing ever
    decodes; the decompression bomb of issue 12."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 20000, 20000, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b""))


@pytest.fixture(scope="session")
def browser() -> None:
    """MiniWoB++ in Chromium (make setup-web): skips with the reason when missing, except in CI (``CI=true``),
    where a missing browser is a failure."""
    from core.envs.miniwob import missing_setup

    why = missing_setup()
    if why and os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI must run the MiniWoB++ tests: {why}")
    if why:
        pytest.skip(why)
