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
