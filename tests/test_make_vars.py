"""Make variables have one source (issue 38, item 3): the Makefile and mk/*.mk, where each user variable is a ``?=``
assignment with ``#:`` lines saying what it means and each environment knob a ``#:env`` line
(scripts/make_vars.py). docs/make-variables.md is generated from them; every variable the docs, README.md or the
makefiles' own examples give make is one of them; every variable the makefiles read is documented; and a
command-line variable no makefile reads is one warning line naming the closest known one."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import make_vars  # noqa: E402

SKIP_ENVS = ["-o", ".venvs/rl/.ready", "-o", ".venvs/llamafactory/.ready", "-o", ".venvs/base/.ready"]
#: Environment variables the docs show for programs other than make (``NAME=value`` alone in a code span, or in
#: front of a command that is not make). Each must be read somewhere in the project (checked below); none of them
#: is a make variable, so a page that gives one of these to ``make`` is still caught.
PROGRAM_ENV = {
    "PYTHONHASHSEED": "experiments/demo",  # set by the demo for its child processes
    "CI": "tests",  # tests/conftest.py: a missing browser fails instead of skipping
    "HF_ENDPOINT": "Data/hfd.sh",  # the Hub mirror
    "MINIWOB_TIME_LIMIT_S": "core",
    "GUI_REWARD_OPTIONS": "core",
    "TQDM_DISABLE": "core",  # core.console.progress_bar: no progress bar or lines
    "THINK_FORMAT": "experiments/r1v",
    "WANDB_MODE": None,  # read by wandb itself
    "NPROC": "experiments/r1v/train.sh",
    "DS_CONFIG": "experiments/r1v/train.sh",
    "ATTN": "experiments/r1v/train.sh",
    "DEEPSPEED": "ms-swift/examples",
    "RECIPE": "verl/gui_agent/run_gui_agent.sh",  # make grpo-verl-agent takes AGENT_RECIPE
    "VERL_CPU_RESPONSE_LOGPROBS": "verl/plugins/verl_response_logprobs.py",  # verl's own engine on the CPU
}
#: Variables make defines itself.
MAKE_BUILTINS = {"CURDIR", "MAKE", "MAKEFLAGS", "MAKELEVEL", "MAKEFILE_LIST", "SHELL", "MAKECMDGOALS", ".VARIABLES"}
ASSIGNMENT = re.compile(r"^([A-Z][A-Z0-9_]*)=")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")


def make(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", *SKIP_ENVS, *args], cwd=REPO, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})


def known() -> set[str]:
    return {v.name for v in make_vars.parse()}


def words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:  # an unbalanced quote in prose
        return command.split()


def make_claims(command: str) -> list[str]:
    """The variables one shell line gives make: ``NAME=v make target NAME=v`` (both sides), in each of its
    ``&&`` / ``;`` / ``|`` parts."""
    claims = []
    for part in re.split(r"&&|\|\||;|\|", command):
        ws = words(part.strip().removeprefix("$ "))
        env = []
        while ws and ASSIGNMENT.match(ws[0]):
            env.append(ASSIGNMENT.match(ws.pop(0)).group(1))
        if ws and ws[0] == "make":
            claims += env + [ASSIGNMENT.match(w).group(1) for w in ws[1:] if ASSIGNMENT.match(w)]
    return claims


def bare_claims(span: str) -> list[str]:
    """A code span of assignments alone (`INFER_PRESET= INFER_PROMPT=train`) names variables, as make's; one in
    front of another program (`PYTHONHASHSEED=0 python ...`) is that program's environment."""
    ws = words(span)
    if ws and all(ASSIGNMENT.match(w) for w in ws):
        return [ASSIGNMENT.match(w).group(1) for w in ws]
    return []


def claims_in(path: Path) -> list[tuple[str, str, bool]]:
    """(name, where, bare) for every variable a Markdown page gives make, or names in a bare code span."""
    text = path.read_text(encoding="utf-8")
    found = []
    for block in FENCE.findall(text):
        lines = block.replace("\\\n", " ").splitlines()
        for line, after in zip(lines, [*lines[1:], ""], strict=True):
            if "is not a variable of this project's makefiles" not in after:  # the warning shown, on purpose
                found += [(n, line.strip(), False) for n in make_claims(line)]
    prose = FENCE.sub("", text)
    for span in SPAN.findall(prose):
        found += [(n, span, False) for n in make_claims(span)]
        found += [(n, span, True) for n in bare_claims(span)]
    return found


def test_the_page_is_what_the_makefiles_generate():
    page = make_vars.PAGE.read_text(encoding="utf-8")
    assert page == make_vars.page_with(page, make_vars.markdown()), \
        "docs/make-variables.md is out of date: python scripts/make_vars.py write"


def test_every_user_variable_has_a_meaning_and_the_page_lists_it():
    variables = make_vars.parse()
    assert len(variables) > 60
    undocumented = [f"{v.file}: {v.name}" for v in variables if not v.meaning]
    assert not undocumented, "a ?= variable without #: lines above it:\n" + "\n".join(undocumented)
    page = make_vars.PAGE.read_text(encoding="utf-8")
    assert all(f"| `{v.name}`" in page for v in variables)
    assert "| `INFER_PRESET` | `guir1` |" in page and "| `RECIPE_MODEL` | `qwen2_5_vl_3b` |" in page


def test_every_variable_a_makefile_reads_is_a_documented_one():
    """A $(NAME) the makefiles read is a ?= variable (documented, above), a #:env knob, or one they assign
    themselves with = or := (internal: helper values, the fixed environment folders)."""
    internal, read = set(), set()
    for path in make_vars.makefiles():
        text = path.read_text(encoding="utf-8")
        internal |= set(re.findall(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*:?=", text, re.M))
        internal |= set(re.findall(r"^define\s+([A-Za-z_][A-Za-z0-9_]*)", text, re.M))
        read |= set(re.findall(r"\$[({]([A-Z][A-Z0-9_]*)[)}]", text))
    missing = read - known() - internal - MAKE_BUILTINS
    assert not missing, f"read by the makefiles but neither a ?= variable nor assigned: {sorted(missing)}"


def test_every_variable_the_docs_give_make_is_read_by_the_makefiles():
    names = known()
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    bad = []
    for page in pages:
        for name, where, bare in claims_in(page):
            if name not in names and not (bare and name in PROGRAM_ENV):
                bad.append(f"{page.relative_to(REPO)}: {name} in `{where[:100]}`")
    for path in make_vars.makefiles():  # the examples in the makefiles' own comments
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("#"):
                bad += [f"{path.name}: {n} in `{line[:100]}`" for n in make_claims(line.lstrip("# ")) if n not in names]
    assert not bad, "make variables no makefile reads:\n" + "\n".join(bad)


def test_the_claims_checker_sees_a_wrong_variable(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("Run `make infer PRESET=x`, or `INFER_PROMPT= NOPE=1`; `PYTHONHASHSEED=0 python x.py` is not "
                    "make's.\n\n```bash\nFOO=1 make grpo-verl \\\n  MODEL=m ARGS=\"a.b=1 c=2\"  # BAR=2\n"
                    "cd x && make data DATA_FROM=aitw\n```\n", encoding="utf-8")
    got = {(n, bare) for n, _, bare in claims_in(page)}
    assert got == {("PRESET", False), ("INFER_PROMPT", True), ("NOPE", True), ("FOO", False), ("MODEL", False),
                   ("ARGS", False), ("DATA_FROM", False)}


@pytest.mark.parametrize("name", sorted(PROGRAM_ENV))
def test_program_environment_variables_are_read_where_the_list_says(name):
    where = PROGRAM_ENV[name]
    if where is None:
        return
    root = REPO / where
    files = [root] if root.is_file() else [p for p in root.rglob("*") if p.suffix in {".py", ".sh"}]
    assert any(name in p.read_text(encoding="utf-8", errors="replace") for p in files), f"{name} not in {where}"
    assert name not in known(), f"{name} is a make variable now: take it out of PROGRAM_ENV"


def test_a_misspelt_variable_is_one_warning_line_naming_the_one_meant():
    r = make("-n", "infer", "MODEL_PATH=ckpt", "PRESET=x", "PROMPT=train")
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "is not a variable" in line]
    assert sorted(lines) == [  # make lists its variables in hash order
        "make: PRESET is not a variable of this project's makefiles (make vars lists them); did you mean INFER_PRESET?",
        "make: PROMPT is not a variable of this project's makefiles (make vars lists them); did you mean INFER_PROMPT?",
    ]
    assert "MODLE" in make("-n", "infer", "MODLE=x", "MODEL_PATH=ckpt").stderr.split("did you mean MODEL?")[0]
    # A make started by a program make started (this suite under make test) warns too; a sub-make of the
    # makefiles themselves (started with _vars_checked=1) does not repeat it.
    assert "did you mean INFER_PRESET?" in make("-n", "help", "PRESET=x", env={"MAKELEVEL": "2"}).stderr
    assert make("-n", "help", "PRESET=x", "_vars_checked=1").stderr == ""


def test_known_variables_and_environment_knobs_give_no_warning():
    r = make("-n", "infer", "MODEL_PATH=ckpt", "INFER_PRESET=", "INFER_PROMPT=train", "BATCH_SIZE=2",
             "TRAIN_BATCH_SIZE=4", "HAS_CUDA=", "DRY_RUN=")
    assert r.returncode == 0 and "is not a variable" not in r.stderr, r.stderr
    assert make("-n", "help").stderr == ""


def test_an_odd_name_is_reported_as_it_is_and_never_reaches_the_helper(tmp_path):
    # Only names of letters, digits and _ go to scripts/make_vars.py suggest (a command line); these are shown
    # by make itself, with no suggestion.
    r = make("-n", "help", "a;b=1", "c`d`=1", "e'f=1")
    assert r.returncode == 0
    lines = sorted(line for line in r.stderr.splitlines() if "is not a variable" in line)
    assert [line.split()[1] for line in lines] == ["a;b", "c`d`", "e'f"]
    assert "did you mean" not in r.stderr


def test_make_vars_prints_every_variable():
    r = make("vars")
    assert r.returncode == 0, r.stderr
    assert all(f"  {name} " in r.stdout for name in known())
    assert "  INFER_PRESET = guir1\n" in r.stdout and "  ROLLOUT_ENGINE (environment)\n" in r.stdout
