"""The simulated phone's unified-parquet export and the `gui-agent world` commands."""

from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest
from PIL import Image
from typer.testing import CliRunner

from core.cli import app
from core.data.unified import iter_steps
from core.world import get_task, list_tasks
from core.world.cli import parse_play_command

runner = CliRunner()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("world") / "test.parquet"
    r = runner.invoke(app, ["world", "export", "--split", "test", "--n", "4", "--output", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_export_writes_gold_episodes_at_both_levels_and_grounding(exported):
    steps = list(iter_steps(exported))
    tasks = {t.id: t for t in list_tasks("test")[:4]}
    assert {s.extra["episode_id"] for s in steps} == set(tasks)
    assert len({s.id for s in steps}) == len(steps)
    for s in steps:
        task = tasks[s.extra["episode_id"]]
        assert s.split == task.split == "test_seed" and s.source == "sim_phone" and s.group == "mobile"
        image = Image.open(io.BytesIO(s.image_bytes()))
        assert image.size == s.image_size
        k = s.extra["step_index"]
        if s.task_type == "high":
            assert s.instruction == task.instruction and len(s.history) == k
        elif s.task_type == "low":
            assert len(s.history) == k and s.instruction != task.instruction
        else:
            assert s.action.type == "click" and s.bbox is not None
        if s.action.type == "click":  # the gold tap lies in the gold box
            x, y = s.action.point
            assert s.bbox[0] <= x <= s.bbox[2] and s.bbox[1] <= y <= s.bbox[3]
    for task_id in tasks:  # one low and one high row per gold step, indices 0..n-1
        rows = [s for s in steps if s.extra["episode_id"] == task_id]
        n = rows[0].extra["n_steps"]
        assert sorted(s.extra["step_index"] for s in rows if s.task_type == "low") == list(range(n))
        assert sorted(s.extra["step_index"] for s in rows if s.task_type == "high") == list(range(n))
        last_high = max((s for s in rows if s.task_type == "high"), key=lambda s: s.extra["step_index"])
        assert [h.action for h in last_high.history] == [s.action for s in sorted(
            (s for s in rows if s.task_type == "low"), key=lambda s: s.extra["step_index"])][:-1]


@pytest.mark.parametrize("target", ["verl", "llamafactory"])
def test_data_convert_accepts_the_export(exported, tmp_path, target):
    r = runner.invoke(app, ["data", "convert", "--from", "unified", "--to", target, "--input", str(exported),
                            "--output", str(tmp_path)])
    assert r.exit_code == 0, r.output
    n = pq.ParquetFile(exported).metadata.num_rows
    assert f"written {n}" in r.output and "skipped 0" in r.output
    written = list(tmp_path.glob("*.parquet" if target == "verl" else "*.jsonl"))
    assert written
    if target == "verl":
        assert pq.ParquetFile(written[0]).metadata.num_rows == n
    else:
        assert len(written[0].read_text().splitlines()) == n


def test_export_levels_and_bad_levels(tmp_path):
    out = tmp_path / "g.parquet"
    r = runner.invoke(app, ["world", "export", "--split", "train", "--n", "2", "--levels", "grounding",
                            "--output", str(out)])
    assert r.exit_code == 0, r.output
    gold_only = list(iter_steps(out))
    assert {s.task_type for s in gold_only} == {"grounding"}
    r = runner.invoke(app, ["world", "export", "--split", "train", "--n", "2", "--levels", "grounding",
                            "--grounding-per-screen", "3", "--output", str(out), "--overwrite"])
    assert r.exit_code == 0, r.output
    rows = list(iter_steps(out))
    assert {s.id for s in gold_only} < {s.id for s in rows} and len(rows) > len(gold_only) + 3
    per_screen: dict[tuple, list[str]] = {}
    for s in rows:
        x, y = s.action.point
        assert s.bbox[0] <= x <= s.bbox[2] and s.bbox[1] <= y <= s.bbox[3]
        per_screen.setdefault((s.extra["episode_id"], s.extra["step_index"]), []).append(s.instruction)
    assert all(len(names) == len(set(names)) <= 4 for names in per_screen.values())  # each query names one widget
    r = runner.invoke(app, ["world", "export", "--levels", "medium", "--output", str(tmp_path / "x.parquet")])
    assert r.exit_code == 2 and "medium" in r.output and not (tmp_path / "x.parquet").exists()
    r = runner.invoke(app, ["world", "export", "--split", "validation", "--output", str(tmp_path / "x.parquet")])
    assert r.exit_code == 2 and "unknown split" in r.output


def test_world_tasks_and_show(tmp_path):
    r = runner.invoke(app, ["world", "tasks", "--split", "test_family", "--json"])
    assert r.exit_code == 0
    rows = [json.loads(line) for line in r.output.splitlines()]
    assert {row["family"] for row in rows} == {"calculator", "delete_note"}
    r = runner.invoke(app, ["world", "show", "calculator-200001", "--output", str(tmp_path)])
    assert r.exit_code == 0, r.output
    steps = json.loads((tmp_path / "steps.json").read_text())["steps"]
    assert steps[-1]["gold_action"] is None and all(s["gold_action"] for s in steps[:-1])
    assert len(list(tmp_path.glob("step_*.png"))) == len(steps)
    r = runner.invoke(app, ["world", "show", "nonsense", "--output", str(tmp_path)])
    assert r.exit_code == 2 and "task id" in r.output


def test_world_play_steps_from_the_terminal(tmp_path):
    task = get_task("settings_toggle-0")
    shot = tmp_path / "p.png"
    r = runner.invoke(app, ["world", "play", task.id, "--screenshot", str(shot)],
                      input="type hello\ntap icon_settings\nfly away\ngold\n")
    assert r.exit_code == 0, r.output
    assert "ignored: no text field has focus" in r.output and "invalid: not a command" in r.output
    assert "goal reached" in r.output and Image.open(shot).size == (720, 1600)


def test_parse_play_command():
    widgets = [{"id": "send", "box": [10, 20, 30, 40]}]
    assert parse_play_command("tap send", widgets).point == (20.0, 30.0)
    assert parse_play_command("type on my way", widgets).text == "on my way"
    assert parse_play_command('json {"action": "system_button", "button": "Back"}', widgets)["button"] == "Back"
    for bad in ("tap nothing", "", "scroll sideways", "json [1]", "type", "tap 'unclosed"):
        with pytest.raises(ValueError):
            parse_play_command(bad, widgets)
