"""The ``gui-agent`` command line. Each concern registers its own sub-commands from its module."""

from __future__ import annotations

import importlib
from pathlib import Path

import typer

app = typer.Typer(
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


@app.command("tiny-model")
def tiny_model(
    output: Path = typer.Option(..., "--output", help="Folder to write the tiny random model into."),
    seed: int = typer.Option(0, help="Seed of the random weights."),
    overwrite: bool = typer.Option(False, help="Replace an existing folder."),
    family: str = typer.Option("qwen2.5-vl", help="Model family: qwen2.5-vl or qwen3-vl."),
    tied_embeddings: bool | None = typer.Option(
        None, "--tied-embeddings/--untied-embeddings",
        help="Share the input embedding with the output layer (default: the family's layout)."),
) -> None:
    """Write a tiny random Qwen2.5-VL or Qwen3-VL test model (real tokenizer) as a Hugging Face folder."""
    from core.testing import tiny_model_command

    tiny_model_command(output, seed=seed, overwrite=overwrite, family=family, tied_embeddings=tied_embeddings)


def main() -> None:
    app()
