"""The documentation: README.md stays a short front page that keeps CI's command, every relative link in README.md
and docs/ points at a file that exists, and the mkdocs site builds with --strict (broken links and anchors, pages
missing from the nav fail), as `make docs` builds it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
#: [text](target) outside code spans and fenced blocks; the target stops at whitespace or ')'.
MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def relative_links(markdown_file: Path) -> list[str]:
    """Link targets of one Markdown file that are paths (no scheme, not a bare #anchor), anchor removed."""
    text = CODE_SPAN.sub("", FENCE.sub("", markdown_file.read_text(encoding="utf-8")))
    targets = []
    for target in MD_LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def test_readme_is_a_front_page_of_at_most_300_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move detail to docs/"


def test_readme_shows_the_exact_command_ci_runs():
    ci_command = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci_command == "make setup-web && make test"
    assert any(line.startswith(ci_command) for line in README.read_text(encoding="utf-8").splitlines())


def test_readme_keeps_the_marked_demo_results_block():
    text = README.read_text(encoding="utf-8")
    start, end = text.find("<!-- demo-results -->"), text.find("<!-- /demo-results -->")
    assert 0 <= start < end, "README.md lost its <!-- demo-results --> ... <!-- /demo-results --> block"
    block = text[start:end]
    assert all(f"| {stage}" in block for stage in ("random policy", "after SFT", "after GRPO r1gui",
                                                    "after GRPO Gaussian", "after GRPO shuffled"))


def test_every_relative_link_in_readme_and_docs_exists():
    broken = []
    checked = 0
    for md in markdown_files():
        for target in relative_links(md):
            checked += 1
            if target and not (md.parent / target).exists():
                broken.append(f"{md.relative_to(REPO)}: {target}")
    assert checked > 40  # README and the pages link to each other
    assert not broken, "broken relative links:\n" + "\n".join(broken)


def test_link_checker_sees_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[ok](page.md) [gone](missing.md#x) `[code](no.md)` [web](https://example.org)\n",
                    encoding="utf-8")
    assert relative_links(page) == ["page.md", "missing.md"]


def test_every_docs_page_is_in_the_mkdocs_nav():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w-]+\.md)\s*$", nav, re.M))
    pages = {p.name for p in DOCS.glob("*.md")}
    assert pages == listed, f"only in docs/: {sorted(pages - listed)}; only in the nav: {sorted(listed - pages)}"


def test_mkdocs_strict_build(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=REPO,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert (site / "index.html").is_file() and (site / "evaluation" / "index.html").is_file()
