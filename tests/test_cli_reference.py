"""docs/cli.md is the `--help` of every `gui-agent` command as the typer app renders it now (issue 38, item 11):
regenerated here and compared, so a changed option or help text fails until `python scripts/gen_cli_reference.py`
writes the page again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_cli_reference_is_the_apps_help():
    r = subprocess.run([sys.executable, "scripts/gen_cli_reference.py", "--check"], cwd=REPO, capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr[-2000:]


def test_cli_reference_lists_every_command_the_app_has():
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in ("gui-agent infer", "gui-agent data convert", "gui-agent world export", "gui-agent tiny-model",
                    "gui-agent model check", "gui-agent rollout", "gui-agent eval-report"):
        assert f"## `{command}`" in page
    assert "╭" not in page  # click's plain text, not rich's boxes
