"""Shared launcher of the Data/utils scripts: ``python <script>.py ARGS`` runs ``gui-agent data <command> ARGS``.

The scripts are run as the seed documents them (``cd Data/utils && python convert_to_format.py``), so this file
puts the repository on ``sys.path``; an interpreter without the toolkit's dependencies (a bare system
``python3``) is replaced by the project's own environment (``.venvs/rl``, else ``.venvs/base``) when one
exists. Usage errors (no arguments, unknown option) print the usage and exit 2; record errors exit 1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Environments tried, in order, when the running interpreter lacks the toolkit's dependencies.
ENVIRONMENTS = (REPO / ".venvs" / "rl" / "bin" / "python", REPO / ".venvs" / "base" / "bin" / "python")


def _reexec_in_project_env() -> None:
    """Replace this process with the same script under the project's environment, or exit 2 saying how
    (:func:`core.interpreter.require`: one line naming the command)."""
    for python in ENVIRONMENTS:  # a venv's python is a symlink to the base one: compare prefixes, not binaries
        if python.is_file() and Path(sys.prefix).resolve() != python.parents[1].resolve():
            os.execv(str(python), [str(python), *sys.argv])
    sys.path.append(str(REPO))
    from core.interpreter import require

    require()


def main(command: str, preset: list[str] | None = None) -> None:
    """Run ``gui-agent data <command> <preset> <sys.argv[1:]>`` under the script's own name and exit with its code."""
    try:
        import typer
    except ImportError:
        _reexec_in_project_env()
    sys.path.insert(0, str(REPO))
    from core.data.cli import data_app

    group = typer.main.get_command(data_app)
    cmd = group.commands[command]
    args = sys.argv[1:]
    if not args:  # the seed's bare `python convert_to_format.py`: full usage, exit 2 (a usage error)
        with cmd.make_context(Path(sys.argv[0]).name, [], resilient_parsing=True) as ctx:
            text = cmd.get_help(ctx)  # typer's rich help prints itself and returns ""
        print(text, end="\n" if text else "")
        sys.exit(2)
    cmd.main([*(preset or []), *args], prog_name=Path(sys.argv[0]).name, standalone_mode=True)
