"""The ``gui-agent`` command line. Each concern registers its own sub-commands from its module."""

from __future__ import annotations

import importlib

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


@app.callback()
def _root() -> None:
    """GUI-agent toolkit."""


# gui-agent tiny-model: core.testing's command itself, so its options have one owner.
app.command("tiny-model")(tiny_model_command)


def main() -> None:
    app()
