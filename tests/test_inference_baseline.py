"""`gui-agent infer --backend baseline --model random|centre`: the trivial baselines answer real simulated-phone
steps in each step's answer format, through the same prediction rows and parser as a model."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from core.cli import app
from core.inference.backends.baseline import RANDOM_ACTIONS

runner = CliRunner()


@pytest.fixture(scope="module")
def heldout(tmp_path_factory):
    out = tmp_path_factory.mktemp("baseline") / "test.parquet"
    r = runner.invoke(app, ["world", "export", "--split", "test", "--n", "6", "--output", str(out)])
    assert r.exit_code == 0, r.output
    return out


def _infer(heldout, out, model, *extra):
    r = runner.invoke(app, ["infer", "--backend", "baseline", "--model", model, "--input", str(heldout), "--output",
                            str(out), *extra])
    return r, [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []


def test_centre_taps_the_centre_of_every_screen(heldout, tmp_path):
    r, rows = _infer(heldout, tmp_path / "centre.jsonl", "centre")
    assert r.exit_code == 0, r.output
    assert len(rows) == pq.read_metadata(heldout).num_rows > 0
    for row in rows:
        assert row["parse_ok"] and row["pred_action"] == "click" and row["backend"] == "baseline", row
        w, h = row["image_size"]
        # The answer is written in the model frame and parsed back to original pixels (one resize step of error).
        assert row["pred_coord"] == pytest.approx([w / 2, h / 2], abs=h / 100)


def test_random_is_valid_varied_and_keyed_by_seed_and_step_only(heldout, tmp_path):
    _, a = _infer(heldout, tmp_path / "a.jsonl", "random", "--seed", "3")
    _, b = _infer(heldout, tmp_path / "b.jsonl", "random", "--seed", "3", "--batch-size", "1")
    _, c = _infer(heldout, tmp_path / "c.jsonl", "random", "--seed", "4")
    assert all(row["parse_ok"] for row in a)
    kinds = {row["pred_action"] for row in a}
    assert len(kinds) >= 4 and kinds <= set(RANDOM_ACTIONS) | {"press_back", "press_home", "enter"}, kinds
    assert [row["pred"] for row in a] == [row["pred"] for row in b]  # batching does not change the draw
    assert [row["pred"] for row in a] != [row["pred"] for row in c]


def test_unknown_baseline_is_one_error_line(heldout, tmp_path):
    r, rows = _infer(heldout, tmp_path / "x.jsonl", "always-left")
    assert r.exit_code == 2 and not rows
    assert "random, centre" in r.output and "Traceback" not in r.output
