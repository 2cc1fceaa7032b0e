"""Every error quotes user text bounded (core.console.quoted / bounded): a 100,000-character name given to any
option is shown by its start and end and its length, never in full (it gave a 112 KB error box)."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from core.cli import app
from core.console import MAX_ERROR_CHARS, bounded, quoted

runner = CliRunner()
NAME = "S" + "x" * 99_998 + "E"


@pytest.fixture
def pred(tmp_path):
    path = tmp_path / "screenspot_test.json"
    path.write_text(json.dumps({"id": "a", "pred": "(1, 2)", "image_size": [10, 10], "gt_action": "click",
                                "gt_bbox": [0, 0, 5, 5]}) + "\n")
    return path


@pytest.mark.parametrize("args", [
    ["world", "tasks", "--split", NAME],
    ["world", "show", NAME, "--output", "{tmp}/show"],
    ["world", "export", "--families", NAME, "--output", "{tmp}/w"],
    ["data", "convert", "--from", NAME, "--to", "unified", "--input", "{tmp}", "--output", "{tmp}/o"],
    ["data", "convert", "--from", "screenspot", "--to", NAME, "--input", "{tmp}", "--output", "{tmp}/o"],
    ["score", "--reward", NAME, "--input", "{pred}", "--output", "{tmp}/s.jsonl"],
    ["score", "--reward", "r1gui", "--mode", NAME, "--input", "{pred}", "--output", "{tmp}/s.jsonl"],
    ["score", "--input", NAME, "--output", "{tmp}/s.jsonl"],  # click's own "does not exist"
    ["eval", "--predictions", "{pred}", "--benchmark", NAME],
    ["eval", "--predictions", NAME, "--benchmark", "screenspot"],  # OSError "File name too long": one line
    ["eval", "--predictions", "{pred}", "--benchmark", "screenspot", "--preset", NAME],
    ["eval", "--predictions", "{pred}", "--benchmark", "screenspot", "--mode", NAME],
    ["infer", "--backend", NAME, "--model", "m", "--input", "{pred}", "--output", "{tmp}/i.json"],  # click's choice
    ["infer", "--backend", "baseline", "--model", "centre", "--preset", NAME, "--input", "{pred}", "--output",
     "{tmp}/i.json"],
    ["infer", "--backend", "baseline", "--model", "centre", "--prompt", NAME, "--input", "{pred}", "--output",
     "{tmp}/i.json"],
    ["tiny-model", "--family", NAME, "--output", "{tmp}/tm"],
    ["rollout", "--env", NAME, "--output", "{tmp}/r"],
])
def test_a_huge_name_is_quoted_bounded(args, tmp_path, pred):
    args = [a.format(tmp=tmp_path, pred=pred) for a in args]
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output[:2000]
    assert len(res.output) < 4_000, (args[:3], len(res.output))
    assert "Traceback" not in res.output
    flat = re.sub(r"[\s│╭╮╰╯─]", "", res.output)
    assert "Sxxxx" in flat and "xxxE" in flat, res.output  # its start and its end are both shown


def test_bounded_keeps_start_end_and_length():
    assert bounded("short") == "short" and quoted("short") == "'short'"
    text = quoted(NAME)
    assert text.startswith("'Sxxx") and "xxE' (100002 characters)" in text and len(text) < 200
    assert quoted(10**400) == "an integer of 1329 bits"
    assert quoted([1, "a"]) == "[1, 'a']" and quoted({"a": [10**400]}) == "{'a': [<an integer of 1329 bits>]}"
    bomb = ["lol"] * 9
    for _ in range(30):  # a YAML alias bomb: 9**31 items if expanded
        bomb = [bomb] * 9
    assert quoted(bomb).endswith("(9 items)") and len(quoted(bomb)) < 200
    assert len(quoted([NAME] * 3)) < 200 and quoted(list(range(10**5))).endswith(" (100000 items)")
    assert len(bounded("y" * 10**6, MAX_ERROR_CHARS)) < MAX_ERROR_CHARS + 40


def test_a_50000_times_repeated_family_is_one_bounded_line(tmp_path):
    """`world export --families` with one name 50,000 times: the repeat check is linear (it counted each name
    over the whole list) and the error quotes the value bounded."""
    res = runner.invoke(app, ["world", "export", "--families", ",".join(["calculator"] * 50_000),
                              "--output", str(tmp_path / "w")])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output[:2000]
    assert len(res.output) < 1_000, len(res.output)
    assert "names 'calculator' more than once" in res.output and "(550001 characters)" in res.output
    assert not (tmp_path / "w").exists()


def test_a_4000_character_prediction_path_is_one_bounded_line(tmp_path):
    """`eval --predictions` with a path of ~4,000 characters that does not exist (short parts: no "File name too
    long", so the prediction reader's own "no such file" answers): the path is shown by its start and end."""
    path = f"{tmp_path}/" + "d/" * 1_900 + "end_screenspot_test.json"
    res = runner.invoke(app, ["eval", "--predictions", path, "--benchmark", "screenspot"])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output[:2000]
    assert len(res.output) < 400 and res.output.count("\n") == 1, len(res.output)
    assert "no such file" in res.output and f"({len(path)} characters)" in res.output
    assert str(tmp_path)[:20] in res.output and "d/end_screenspot_test.json" in res.output


def test_a_prediction_file_error_keeps_the_line_number():
    from core.eval.io import PredictionFileError

    where = "/data/" + "x" * 5_000 + "/screenspot_test.json:3"
    text = str(PredictionFileError(where, "gt_bbox", "missing"))
    assert len(text) < 250 and "screenspot_test.json:3 (" in text and text.endswith(": field 'gt_bbox': missing")
    assert str(PredictionFileError("p.json:2", "id", "missing")) == "p.json:2: field 'id': missing"
