"""docs/cli.md: the `--help` of every `gui-agent` command, rendered from the typer app itself.

    python scripts/gen_cli_reference.py          write docs/cli.md
    python scripts/gen_cli_reference.py --check  exit 1 when docs/cli.md differs (tests/test_cli_reference.py)

The help is click's plain text (no rich boxes) at a fixed width of 100 columns, so the page is the same on every
machine and terminal.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

try:  # typer >= 0.20 carries its own click
    from typer import _click as click
except ImportError:  # pragma: no cover
    import click

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "cli.md"
WIDTH = 100
HEADER = """# Command-line reference: `gui-agent`

Every `gui-agent` command (also `python -m core`) with its `--help`, generated from the typer app by
`python scripts/gen_cli_reference.py` (`tests/test_cli_reference.py` fails when this page and the app differ).
The `make` targets and their variables are on [Make variables](make-variables.md).

`gui-agent --version` prints the installed version. Help written to a file or pipe is 160 columns wide; `COLUMNS`
or `TERMINAL_WIDTH` overrides it (this page is rendered at a fixed 100 columns).

"""


def walk(command, path: list[str], parent=None):
    """(path, help text) of the command and every sub-command, depth first, in the order `--help` lists them."""
    if hasattr(command, "rich_markup_mode"):  # click's plain text, for this command object only
        command.rich_markup_mode = None
    ctx = click.Context(command, info_name=path[-1], parent=parent, terminal_width=WIDTH, max_content_width=WIDTH)
    yield path, command.get_help(ctx).rstrip()
    if hasattr(command, "list_commands"):  # a group
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from walk(sub, [*path, name], ctx)


def render() -> str:
    from core.cli import app

    root = typer.main.get_command(app)
    out = [HEADER]
    for path, text in walk(root, ["gui-agent"]):
        out += [f"## `{' '.join(path)}`", "", "```text", text, "```", ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} differs from the gui-agent app: run python scripts/gen_cli_reference.py", file=sys.stderr)
            return 1
        return 0
    if argv:
        print("usage: python scripts/gen_cli_reference.py [--check]", file=sys.stderr)
        return 2
    PAGE.write_text(text, encoding="utf-8")
    print(f"{PAGE}: written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
