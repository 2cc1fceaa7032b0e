"""Everything shown to a person is honest and safe, through the commands as users run them: untrusted text (model
answers, paths, dataset values) is never console markup nor raw terminal control; Markdown tables cannot be
reshaped by a run name; the eval gallery opens no file outside its roots and says so without probing; guir1
numbers that leave rows out say how many; a missing environment is an error, not a 0% result; points print
with at most one decimal; progress bars stay off logs."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from test_eval_metrics import _pred_at, screenspot_rows, two_long_press_rows, write_jsonl
from typer.testing import CliRunner

from core.markdown import md_code, md_table, md_text

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
IMAGES = DATA / "screenspot" / "images"
#: Rich markup a model, a path or a dataset could carry; none may be read as markup.
MARKUP = ["[/]", "[bold]x", "[link=https://example.com]y[/link]"]


def cli(*args: str, env: dict | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``python -m core ARGS`` with this checkout's code, stdout/stderr captured (not a terminal)."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "core", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=full_env, check=False)


def _nav_rows_with(text: str) -> list[dict]:
    """The real AndroidControl rows of test_eval_metrics with ``text`` as the group, the predicted action and the
    raw model answer of one row (re-parsed in strict mode)."""
    rows = [{**r, "group": text, "pred_action": text} for r in two_long_press_rows()]
    rows[0] = {k: v for k, v in rows[0].items() if k != "pred_action"} | {"pred": f"<answer>{text}</answer>"}
    return rows


# ------------------------------------------------------------------------------------------- terminal text

@pytest.mark.parametrize("text", MARKUP)
@pytest.mark.parametrize("mode", ["strict", "guir1"])
def test_eval_prints_markup_in_model_answers_groups_and_paths_as_written(tmp_path, text, mode):
    folder = tmp_path / text  # "[/]" makes a folder "[" holding "]": the printed path holds the markup
    folder.mkdir(parents=True)
    f = write_jsonl(folder / "androidcontrol_low_test.json", _nav_rows_with(text))
    r = cli("eval", "--predictions", f, "--benchmark", "androidcontrol_low", "--mode", mode)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert f"{text}-long_press" in r.stdout  # the group, as written, in the per-category table
    if mode == "strict":
        assert str(f) in r.stdout  # the file named in the unparseable predictions' examples


@pytest.mark.parametrize("text", MARKUP)
def test_eval_report_pred_dir_and_name_with_markup(tmp_path, text):
    pred_dir = tmp_path / f"run {text}"
    pred_dir.mkdir(parents=True)
    write_jsonl(pred_dir / "androidcontrol_low_test.json", _nav_rows_with(text))
    r = cli("eval-report", "--pred-dir", pred_dir, "--out", tmp_path / "out", "--no-plots", "--no-gallery")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert str(tmp_path / "out" / "report.md") in r.stdout
    assert json.loads((tmp_path / "out" / "report.json").read_text())["name"] == pred_dir.name


@pytest.mark.parametrize("text", MARKUP)
def test_the_error_line_prints_markup_in_a_path_as_written(tmp_path, text):
    missing = tmp_path / text / "androidcontrol_low_test.json"
    r = cli("eval", "--predictions", missing, "--benchmark", "androidcontrol_low")
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(missing) in errors[0]
    r = cli("eval-report", "--pred-dir", tmp_path / text / "nowhere", "--out", tmp_path / "o")
    assert r.returncode == 2 and f"--pred-dir {tmp_path / text / 'nowhere'} is not a folder" in r.stderr, r.stderr


@pytest.mark.parametrize("text", MARKUP)
def test_data_inspect_prints_a_group_with_markup_as_written(tmp_path, text):
    lines = []
    for line in (DATA / "screenspot" / "screenspot_v1_annotations.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if (IMAGES / rec["image"]).is_file():
            lines.append(json.dumps({**rec, "platform": text}))
    (tmp_path / "ann.jsonl").write_text("\n".join(lines) + "\n")
    r = cli("data", "inspect", "--from", "screenspot", "--input", tmp_path / "ann.jsonl", "--images", IMAGES)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert f"│ {text} " in r.stdout  # the group table's cell, as written


def test_terminal_control_characters_in_model_text_are_shown_as_escapes(tmp_path):
    f = write_jsonl(tmp_path / "androidcontrol_low_test.json", _nav_rows_with("grp\x1b[2J\x07"))
    r = cli("eval", "--predictions", f, "--benchmark", "androidcontrol_low", "--mode", "guir1")
    assert r.returncode == 0, r.stderr
    assert "grp\\x1b[2J\\x07-long_press" in r.stdout and "\x1b" not in r.stdout and "\x07" not in r.stdout


# ---------------------------------------------------------------------------------------------- markdown

def _tables(md: str) -> list[list[list[str]]]:
    """Every table of ``md`` as a CommonMark + GFM-tables parser reads it: rows of cell texts."""
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    tables, row = [], None
    for tok in tokens:
        if tok.type == "table_open":
            tables.append([])
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "inline" and row is not None:  # the cell as a reader sees it (escapes resolved)
            row.append("".join(c.content for c in tok.children or [] if c.type in ("text", "code_inline")))
        elif tok.type == "tr_close":
            tables[-1].append(row)
            row = None
    return tables


def _no_raw_html(md: str) -> None:
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert not kinds & {"html_inline", "html_block"}, kinds


HOSTILE_NAME = "a|b\nc <img src=x onerror=alert(1)> `code` *em*"


def test_a_run_name_cannot_add_cells_rows_or_html_to_report_md(tmp_path):
    f = write_jsonl(tmp_path / "androidcontrol_low_test.json", two_long_press_rows())
    out = tmp_path / "r.md"
    r = cli("eval", "--predictions", f, "--benchmark", "androidcontrol_low", "--markdown", out, "--name", HOSTILE_NAME)
    assert r.returncode == 0, r.stderr
    md = out.read_text()
    (table,) = _tables(md)
    assert len(table) == 2 and {len(row) for row in table} == {5}  # header + one run, 5 columns
    assert table[1][0] == HOSTILE_NAME.replace("\n", "\\n")  # read back as written, the line break shown as \n
    _no_raw_html(md)
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img" not in html and "<em>" not in html


def test_the_default_run_name_is_the_folder_name_escaped_too(tmp_path):
    pred_dir = tmp_path / "m|x <img src=x onerror=alert(1)>"
    pred_dir.mkdir()
    write_jsonl(pred_dir / "androidcontrol_low_test.json", two_long_press_rows())
    r = cli("eval-report", "--pred-dir", pred_dir, "--out", tmp_path / "out", "--no-plots", "--no-gallery")
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "out" / "report.md").read_text()
    (table,) = _tables(md)
    assert {len(row) for row in table} == {5} and table[1][0] == pred_dir.name
    _no_raw_html(md)


def test_eval_compare_markdown_and_terminal_label_columns_with_escaped_run_names(tmp_path):
    f = write_jsonl(tmp_path / "androidcontrol_low_test.json", two_long_press_rows())
    for mode in ("strict", "guir1"):
        assert cli("eval", "--predictions", f, "--benchmark", "androidcontrol_low", "--mode", mode,
                   "--json", tmp_path / f"{mode}|[bold]x.json").returncode == 0
    r = cli("eval-compare", tmp_path / "strict|[bold]x.json", tmp_path / "guir1|[bold]x.json",
            "--markdown", tmp_path / "c.md")
    assert r.returncode == 0, r.stderr
    assert "strict|[bold]x vs guir1|[bold]x" in r.stdout
    md = (tmp_path / "c.md").read_text()
    table = _tables(md)[0]
    assert table[0][2:4] == ["strict|[bold]x", "guir1|[bold]x"] and {len(row) for row in table} == {5}


def test_md_code_spans_cannot_be_ended_by_backticks_and_md_text_renders_as_written():
    hostile = "x` <img src=x onerror=alert(1)> ``y|z"
    html = MarkdownIt("commonmark").enable("table").render(md_table(["t"], [[md_code(hostile)]]))
    assert html.count("<code>") == 1 and "<img" not in html and "onerror" in html
    for text in ["1. item", "- item", "# head", "a\r\nb", "[l](javascript:x)", "![i](x.png)", "&amp;", "~~s~~",
                 "qwen2_5_vl _em_", "<http://x>", "\\*"]:
        rendered = MarkdownIt("commonmark").render(md_text(text))
        assert rendered.startswith("<p>") and "<a " not in rendered and "<img" not in rendered, (text, rendered)
        assert "<em>" not in rendered and "<h1>" not in rendered and "<li>" not in rendered, (text, rendered)


# ------------------------------------------------------------------------------------- guir1 left-out rows

def test_guir1_numbers_say_how_many_rows_they_count_in_terminal_markdown_json_and_compare(tmp_path):
    f = write_jsonl(tmp_path / "androidcontrol_low_test.json", two_long_press_rows())
    r = cli("eval", "--predictions", f, "--benchmark", "androidcontrol_low", "--mode", "guir1",
            "--json", tmp_path / "g.json", "--markdown", tmp_path / "g.md")
    assert r.returncode == 0, r.stderr
    # Type: the long_press category has no type hit, so GUI-R1 counts 2 of the 4 rows (100%)
    assert "100.0 (n=2 of 4)" in r.stdout
    assert "| g | 100.0 (n=2 of 4) | 66.7 | 75.0 |" in (tmp_path / "g.md").read_text()  # run name: the --json stem
    counts = json.loads((tmp_path / "g.json").read_text())["counts"]
    assert counts["type"] == {"hits": 2, "n": 2, "left_out": 2} and counts["sr"]["left_out"] == 0
    strict = cli("eval", "--predictions", f, "--benchmark", "androidcontrol_low", "--json", tmp_path / "s.json")
    assert strict.returncode == 0 and "(n=" not in strict.stdout.split("\n", 1)[1]  # strict leaves nothing out
    r = cli("eval-compare", tmp_path / "s.json", tmp_path / "g.json", "--markdown", tmp_path / "c.md")
    assert r.returncode == 0 and "100.0 (n=2 of 4)" in r.stdout
    assert "| AndroidControl-Low | type | 50.0 | 100.0 (n=2 of 4) | +50.0 |" in (tmp_path / "c.md").read_text()


# ------------------------------------------------------------------------------------------ eval gallery

def test_the_gallery_opens_no_image_outside_its_roots_and_probes_none(tmp_path):
    rows = [r for r in screenspot_rows() if (IMAGES / r["image_path"]).is_file()]
    outside_real = IMAGES / rows[0]["image_path"]  # a real, readable screenshot outside the predictions' folder
    (tmp_path / "secret.png").write_bytes(outside_real.read_bytes())  # "../secret.png" from the predictions
    pred_dir = tmp_path / "preds"
    pred_dir.mkdir()
    paths = [str(outside_real), "../secret.png", "/nonexistent/secret.png", "../missing.png"]
    preds = [{**_pred_at(rows[0], "out"), "id": str(i), "image_path": p} for i, p in enumerate(paths)]
    f = write_jsonl(pred_dir / "screenspot_test.json", preds)
    r = cli("eval", "--predictions", f, "--benchmark", "screenspot", "--gallery", tmp_path / "g")
    assert r.returncode == 0, r.stderr
    assert "0 with screenshots" in r.stdout and "4 image paths outside" in r.stdout and "refused" in r.stdout
    page = (tmp_path / "g" / "index.html").read_text()
    assert not (tmp_path / "g" / "img").exists()
    notes = [page.split(f"screenshot refused: {p}", 1)[1].split("</p>", 1)[0] for p in paths]
    assert len(set(notes)) == 1  # an existing and a missing file outside read the same: no existence oracle
    # inside --image-root the same absolute path is drawn
    r = cli("eval", "--predictions", f, "--benchmark", "screenspot", "--gallery", tmp_path / "g2",
            "--image-root", IMAGES)
    assert r.returncode == 0 and "1 with screenshots" in r.stdout, r.stdout


def test_gallery_points_have_one_decimal_and_no_sentinel(tmp_path):
    rows = [{**r, "pred_coord": [12.345, 67.891]} for r in two_long_press_rows()]
    rows[0] = {**rows[0], "pred_action": "type", "pred_coord": [-100, -100]}  # open_app: gold and predicted no point
    f = write_jsonl(tmp_path / "androidcontrol_low_test.json", rows)
    r = cli("eval", "--predictions", f, "--benchmark", "androidcontrol_low", "--gallery", tmp_path / "g")
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "g" / "index.html").read_text()
    assert "point=[12.3, 67.9]" in page and "box=[116.6, 652.8]" in page
    assert "box=no point" in page and "point=no point" in page
    assert "=[-100" not in page and "12.345" not in page  # (the raw model text keeps its own numbers)


# ---------------------------------------------------------------------------------- environments that fail

_BLOCKED = ("import sys, types\n{setup}\nfrom core.cli import main\n"
            "sys.argv = ['gui-agent', 'rollout', '--env', 'miniwob', '--policy', 'scripted', '--output', {out!r}]\n"
            "main()\n")


def _rollout_with(setup: str, out: Path, **env: str) -> subprocess.CompletedProcess:
    code = _BLOCKED.format(setup=setup, out=str(out))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, check=False)


def test_rollout_on_miniwob_without_its_package_is_one_error_naming_make_setup_web(tmp_path):
    r = _rollout_with("sys.modules['miniwob'] = None  # as if make setup-web never ran", tmp_path / "o")
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "miniwob" in errors[0] and "make setup-web" in errors[0]
    assert not (tmp_path / "o").exists() and "success rate" not in r.stdout


def test_rollout_on_miniwob_without_the_browser_is_one_error_naming_make_setup_web(tmp_path):
    fake_packages = "sys.modules['miniwob'] = types.ModuleType('miniwob'); " \
                    "sys.modules['selenium'] = types.ModuleType('selenium')"
    r = _rollout_with(fake_packages, tmp_path / "o", MINIWOB_CHROME_BINARY=str(tmp_path / "no-chromium"))
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1, r.stderr
    assert str(tmp_path / "no-chromium") in errors[0] and "make setup-web" in errors[0]
    assert not (tmp_path / "o").exists()


class _NoDisplayEnv:
    """An env whose every reset fails for one environment reason."""

    def reset(self, **_):
        raise RuntimeError("cannot open display :0")

    def close(self) -> None:
        pass


def test_a_rollout_whose_every_episode_failed_for_one_reason_is_an_error(tmp_path, monkeypatch):
    from core.cli import app
    from core.rollout import envs

    monkeypatch.setitem(envs.ENVS, "sim-phone", dataclasses.replace(envs.ENVS["sim-phone"], make=_NoDisplayEnv))
    r = CliRunner().invoke(app, ["rollout", "--policy", "scripted", "--episodes", "2", "--output", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert "error: every episode failed for one reason, so this is no result: " in r.output
    assert "cannot open display :0" in r.output
    rows = (tmp_path / "o" / "episodes.jsonl").read_text().splitlines()
    assert len(rows) == 2  # the episodes are kept, with their error, for the record


# ------------------------------------------------------------------------------------------ progress bars

def test_no_progress_bar_lines_in_logs(tmp_path):
    r = subprocess.run([sys.executable, "-m", "core", "rollout", "--policy", "scripted", "--episodes", "2",
                        "--output", str(tmp_path / "o"), "--gallery", "0"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr and "it/s" not in r.stderr and "episode/s" not in r.stderr, r.stderr
    f = write_jsonl(tmp_path / "androidcontrol_low_test.json", two_long_press_rows())
    r = cli("eval", "--predictions", f, "--benchmark", "androidcontrol_low")
    assert r.returncode == 0 and "\r" not in r.stderr and "rows/s" not in r.stderr, r.stderr
