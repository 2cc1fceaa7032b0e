"""The ``gui-agent`` command line. Each concern registers its own sub-commands from its module.

``--help`` of every command imports no heavy framework (torch, transformers, verl, datasets ...): the command
modules import them inside the commands (``tests/test_help_imports.py``). Help written to a file or a pipe is
:data:`PIPED_HELP_WIDTH` columns wide, so rich never cuts an option name (``--max-new-toke…``) at 80 columns;
``COLUMNS`` or ``TERMINAL_WIDTH`` set by the user win. ``gui-agent --version`` prints the installed version.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import MutableMapping

import typer
from typer.core import TyperGroup

from core.console import MAX_ERROR_CHARS, bounded
from core.testing import tiny_model_command


class BoundedErrors(TyperGroup):
    """The root command. A usage error's message is bounded (:func:`core.console.bounded`) whatever raised it:
    click's own (``'<value>' is not one of ...``, ``Path '<path>' does not exist``) as well as ours, so a
    100,000-character value cannot fill the error box."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except typer.TyperException as e:  # typer's own click exceptions: usage errors, BadParameter
            if isinstance(getattr(e, "message", None), str):
                e.message = bounded(e.message, MAX_ERROR_CHARS)
            raise


app = typer.Typer(
    cls=BoundedErrors,
    name="gui-agent",
    help="GUI-agent toolkit: data conversion, rewards, evaluation, inference and the CPU test model.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: Modules exposing ``register(app)``; heavy libraries are imported inside the commands, not here.
COMMAND_MODULES: tuple[str, ...] = (
    "core.data.cli",        # gui-agent data convert|clean|add-solution ...
    "core.rewards.cli",     # gui-agent score
    "core.eval.cli",        # gui-agent eval
    "core.inference.cli",   # gui-agent infer
    "core.world.cli",       # gui-agent world tasks|show|export|play
    "core.rollout.cli",     # gui-agent rollout
    "core.models",          # gui-agent model download|check
)

for _module in COMMAND_MODULES:
    importlib.import_module(_module).register(app)


#: Width of help written to a file or a pipe (rich's own default there is 80 columns).
PIPED_HELP_WIDTH = 160


def version() -> str:
    """``gui-agent <version>`` of the installed distribution (``unknown`` when the package is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return f"gui-agent {installed('gui-agent')}"
    except PackageNotFoundError:
        return "gui-agent unknown (not installed: pip install -e . or make setup)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(version())
        raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                      help="Print the version and exit."),
) -> None:
    """GUI-agent toolkit."""


# gui-agent tiny-model: core.testing's command itself, so its options have one owner.
app.command("tiny-model")(tiny_model_command)


def wide_help_when_piped(argv: list[str], environ: MutableMapping[str, str] = os.environ) -> None:
    """Help to a file or a pipe: set ``TERMINAL_WIDTH`` (typer's rich help width) to :data:`PIPED_HELP_WIDTH` when
    stdout is not a terminal and the user set no width. Only for a ``--help`` request, or when stderr is not a
    terminal either (a log): an error box on a terminal keeps the terminal's width."""
    if sys.stdout.isatty() or environ.get("COLUMNS") or environ.get("TERMINAL_WIDTH"):
        return
    if "--help" in argv or not sys.stderr.isatty():
        environ["TERMINAL_WIDTH"] = str(PIPED_HELP_WIDTH)


def main() -> None:
    wide_help_when_piped(sys.argv[1:])
    app()
