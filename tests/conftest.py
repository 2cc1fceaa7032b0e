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

# Parallel runs (`make test` = pytest -n 2; docs/testing.md): each test file is one unit of work, sent whole to one
# worker (its module fixtures are built once); the files that start Ray clusters are one unit together, so two clusters
# never run at once; the longest files start first, so no long file starts when the other worker is nearly done.
#: Files run one after another on one worker (one unit, "ray"): each starts Ray clusters.
RAY_FILES = ("test_verl_cpu_training.py", "test_inference_vllm.py")
#: The longest units (file names, "ray"), longest first, as measured (docs/testing.md); the rest follow in file order.
LONGEST_FIRST = ("ray", "test_demo.py", "test_grpo_trl.py")


def work_unit(nodeid: str) -> str:
    """The unit of work of a test under xdist: its file, or "ray" for the Ray files."""
    path = nodeid.split("::", 1)[0]
    return "ray" if path.rsplit("/", 1)[-1] in RAY_FILES else path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # only parallel runs: a plain run keeps the file order (-x fails early)
        rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(work_unit(item.nodeid).rsplit("/", 1)[-1], len(rank)))  # stable


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own; optional: pytest -p no:xdist still runs
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's loadscope scheduling with :func:`work_unit` as the scope, in collection order (longest first), and the
    next unit sent when a worker has one test left (the one it holds until it knows what follows), not three: a
    long unit never waits behind another one a worker took early. (xdist 3.8's own ``--dist loadgroup`` marks do
    not reach pytest 9's node ids.)"""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _reschedule(self, node) -> None:
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) <= 1:
                self._assign_work_unit(node)

    config.option.loadscopereorder = False
    return FileScheduling(config, log)


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
