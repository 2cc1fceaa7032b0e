"""Which Python runs the repository's commands: every entry point (``python -m core`` and the scripts under
``verl/``, ``VLM-R1/``, ``experiments/``, ``bench/``) calls :func:`require` first, so a Python that lacks the
project's packages (a bare system ``python3``) stops with one line naming the command to use, exit 2, instead of a
``ModuleNotFoundError`` traceback.

Standard library only: it runs before anything else is importable. Scripts outside ``core`` reach it with
:data:`REPO` appended to ``sys.path`` (appended, so an installed ``core`` still wins).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The packages ``core`` itself imports (pyproject.toml's dependencies, by import name).
CORE_MODULES = ("typer", "rich", "pyarrow", "PIL", "numpy", "pydantic", "tqdm", "gymnasium")


def missing_modules(modules: tuple[str, ...]) -> list[str]:
    """The top-level module names of ``modules`` this interpreter cannot import (found without importing them)."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies under it (what a user types), else absolute."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive (Windows)
        return absolute
    return absolute if relative.startswith("..") else relative


def _rerun_command(command: str | None) -> str:
    """How to run ``command`` (default: this script with its arguments) in ``.venvs/rl``, as one shell line."""
    if command is None:
        command = shlex.join(["python", _shown(Path(sys.argv[0])), *sys.argv[1:]])
    venv = REPO / ".venvs" / "rl"
    setup = "" if (venv / "bin" / "python").exists() else f"make setup (in {_shown(REPO)}), then "
    return f"{setup}source {_shown(venv / 'bin' / 'activate')} && {command}"


def require(*modules: str, command: str | None = None) -> None:
    """Exit 2 with one line on stderr when this Python lacks any of :data:`CORE_MODULES` + ``modules``, naming how
    to run ``command`` (default: the running script with its arguments) in the rl environment (``.venvs/rl``,
    which holds every package a repository command needs; LLaMA-Factory's through its shim)."""
    missing = missing_modules(CORE_MODULES + modules)
    if not missing:
        return
    name = command.split()[0] if command else Path(sys.argv[0]).name
    lacks = ", ".join(missing[:3]) + (" ..." if len(missing) > 3 else "")
    sys.stderr.write(f"{name}: this Python ({sys.executable}) lacks {lacks}; "
                     f"run: {_rerun_command(command)}\n")
    raise SystemExit(2)


def load_script(name: str, path: str | Path):
    """The Python file ``path`` imported as module ``name`` (registered in ``sys.modules``, so its dataclasses and
    pickles resolve): how the scripts under ``experiments/`` and the tests reach a script that is not a package."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path} as {name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
