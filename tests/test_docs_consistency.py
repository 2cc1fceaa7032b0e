"""The docs agree with each other and with the commands (issue 38): `make demo` has one name and one measured time
everywhere it is described (README.md, `make help`, docs/index.md, the Makefile), and README.md's demo block is a
summary whose details are on docs/demo.md."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DEMO = (REPO / "docs" / "demo.md").read_text(encoding="utf-8")
INDEX = (REPO / "docs" / "index.md").read_text(encoding="utf-8")


def demo_block() -> str:
    return README[README.index("<!-- demo-results -->"):README.index("<!-- /demo-results -->")]


def measured_seconds() -> str:
    """The whole demo's wall time as docs/demo.md's Results measure it ("995 s wall")."""
    results = DEMO[DEMO.index("## Results"):]
    return re.search(r"([\d,]+) s wall", results).group(1)


def test_make_demo_has_one_name_and_the_measured_time_everywhere():
    seconds = measured_seconds()
    help_line = next(line for line in subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True,
                                                     text=True, check=True).stdout.splitlines()
                     if line.startswith("  demo "))
    index_row = next(line for line in INDEX.splitlines() if line.startswith("| `make demo` |"))
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    comment = makefile[makefile.index("# The learning demo"):makefile.index("\ndemo: ")]
    for where, text in {"make help": help_line, "docs/index.md": index_row, "README.md": demo_block(),
                        "the Makefile's comment": comment}.items():
        assert "learning demo" in text, f"{where} does not call make demo the learning demo"
        assert f"{seconds} s" in text, f"{where} does not give the measured {seconds} s"
        assert not re.search(r"under \d+ min", text), f"{where} claims a time docs/demo.md does not measure"
    assert "realistic-phone demo" not in INDEX + README


def test_readme_demo_block_is_a_summary_with_every_number_on_the_demo_page():
    block = demo_block()
    assert len(block.splitlines()) <= 30
    assert "knife edge" not in block and not re.search(r"tried \d", block)  # the lab notes stay on docs/demo.md
    numbers = set(re.findall(r"[-+]?\d[\d,.]*%?", block.replace("docs/demo", "")))
    missing = sorted(n for n in numbers if n.rstrip("%").strip("+-") and n not in DEMO)
    assert not missing, f"README's demo block has numbers docs/demo.md does not: {missing}"


#: Pages this check leaves to their owners (the lead's verl pages, the test-speed page) and generated pages.
SPEED_SKIP = {"grpo-verl.md", "verl-agent.md", "testing.md", "changelog.md", "cli.md", "make-variables.md"}
#: A rate, or a measured time in seconds.
SPEED = re.compile(r"\d[\d,.]*\s*(?:[a-z]+ )?(?:rows|turns|steps|screens|parses|renders|episodes|completions|it|MB)/s"
                   r"\b|\d[\d,.]* turns per CPU-second|\d[\d,.]* s (?:wall|of CPU|CPU|on \d)|\d[\d,.]* (?:CPU )?seconds")
#: What names the command that measured it: a make target, a bench script, a gui-agent or python command, a test,
#: an upstream training CLI (LLaMA-Factory's, ms-swift's).
COMMAND = re.compile(r"make [a-z]|bench/|gui-agent |timeit|tests/|pytest|python |llamafactory-cli |swift [a-z]")


def test_every_speed_figure_names_the_command_that_measured_it():
    """Issue 38, item 5: a speed or time figure in README.md or docs/ stands in a paragraph that names the command
    (and so the settings) behind it; a table or an output block counts with the paragraph before it."""
    bad = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        if page.name in SPEED_SKIP:
            continue
        paragraphs = re.split(r"\n\s*\n", page.read_text(encoding="utf-8"))
        for i, paragraph in enumerate(paragraphs):
            found = SPEED.search(paragraph)
            context = paragraph + (paragraphs[i - 1] if i and paragraph.lstrip().startswith(("|", "```")) else "")
            if found and not COMMAND.search(context):
                bad.append(f"{page.name}: {found.group(0)!r} in {paragraph.strip()[:120]!r}")
    assert not bad, "speed figures without the command that measured them:\n" + "\n".join(bad)


def test_the_tiny_models_turn_rate_names_its_settings():
    text = (REPO / "docs" / "simulated-phone.md").read_text(encoding="utf-8")
    claim = text[text.index("about 16 turns per CPU-second") - 300:text.index("about 16 turns per CPU-second")]
    assert "bench/world.py" in claim and "16 new tokens" in claim
