"""Every grounding preset x every grounding benchmark (issue 39 item 5): ``infer --dry-run`` sends the preset's
prompt for that benchmark at the preset's resize, and ``eval --preset`` scores answers written by hand in the
model's own format (tests/test_presets_2025.py's writers, tests/test_presets.py's for the older presets): the gold
point hits, the far corner misses; on OSWorld-G's refusal rows the preset's refusal hits and a click misses.

Rows: the ScreenSpot rows of ../shared/data/screenspot, and the OSWorld-G / UI-Vision / MMBench-GUI fixtures
(tests/fixtures) converted with ``gui-agent data convert``, their benchmark read from the rows. No model is loaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_grounding_benchmarks import CONVERT_INPUTS, convert, prepared
from test_presets import answer_in_frame
from test_presets_2025 import ANSWERS, REFUSALS, _far
from test_presets_2025 import screenspot as screenspot  # noqa: F401 (a fixture)
from typer.testing import CliRunner

from core.cli import app
from core.geometry import Frame, ImageGeometry
from core.inference.bench import iter_benchmark
from core.inference.rows import gold_columns
from core.presets import PRESETS, get_preset
from core.prompts import get_template

runner = CliRunner()
GROUNDING_PRESETS = [name for name, p in PRESETS.items() if "grounding" in p.templates]
BENCHMARKS = ("screenspot", *CONVERT_INPUTS)


@pytest.fixture(scope="module")
def files(screenspot, tmp_path_factory) -> dict[str, Path]:  # noqa: F811
    """Each benchmark's rows as a unified file whose name does not say the benchmark (ScreenSpot's does)."""
    d = tmp_path_factory.mktemp("matrix")
    return {"screenspot": screenspot,
            **{source: convert(source, prepared(source, d), d / "unified") for source in CONVERT_INPUTS}}


def _written(preset: str, xy: tuple[float, float], geometry: ImageGeometry) -> str:
    """A click at ORIGINAL point ``xy``, in the preset's frame, as the preset's model writes it."""
    x, y = geometry.point(xy, Frame.ORIGINAL, get_preset(preset).frame)
    return ANSWERS[preset](round(x), round(y)) if preset in ANSWERS else answer_in_frame(preset, x, y)


def _eval(rows: list[dict], bench: str, preset: str, path: Path) -> dict:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = path.with_suffix(".report.json")
    res = runner.invoke(app, ["eval", "--predictions", str(path), "--benchmark", bench, "--preset", preset,
                              "--json", str(report)])
    assert res.exit_code == 0, res.output
    return json.loads(report.read_text())


@pytest.mark.parametrize("bench", BENCHMARKS)
@pytest.mark.parametrize("preset", GROUNDING_PRESETS)
def test_every_grounding_preset_on_every_grounding_benchmark(preset, bench, files, tmp_path):
    p = get_preset(preset)
    template = get_template(p.template_for(bench))
    # the model's refusal where this benchmark's prompt asks for one (GUI-Owl-1.5's on OSWorld-G only)
    refusal = REFUSALS.get(preset) if "impossible" in template.actions else None
    assert refusal is not None or "impossible" not in template.actions, f"{preset}: no refusal written"
    res = runner.invoke(app, ["infer", "--backend", "hf", "--model", "m", "--input", str(files[bench]), "--output",
                              str(tmp_path / "never.json"), "--preset", preset, "--dry-run"])
    assert res.exit_code == 0, res.output
    assert f"prompt {template.name}," in res.output and f"benchmark {bench}," in res.output, res.output
    shown = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    steps = {s.id: s for s in iter_benchmark(files[bench])}
    assert [r["id"] for r in shown] == list(steps) and not (tmp_path / "never.json").exists()
    hits, misses = [], []
    for r in shown:
        step = steps[r["id"]]
        geometry = p.geometry(*step.image_size, bench)
        assert r["template"] == template.name and r["error"] is None, r
        assert r["resized_size"] == [geometry.resized_width, geometry.resized_height]
        assert r["messages"] == template.render(step, geometry)
        assert r["generation"]["max_new_tokens"] == p.generation.max_new_tokens
        row = {"id": step.id, "instruction": step.instruction, **gold_columns(step), "group": step.group,
               "ui_type": step.ui_type, "resize": {"resized_size": r["resized_size"]}}
        w, h = step.image_size
        if step.action.type == "impossible":  # OSWorld-G: the target is not on the screen
            if refusal is not None:
                hits.append({**row, "pred": refusal})
            misses.append({**row, "pred": _written(preset, (w / 2, h / 2), geometry)})
        else:
            hits.append({**row, "pred": _written(preset, step.action.point, geometry)})
            misses.append({**row, "pred": _written(preset, _far(list(step.bbox), w, h), geometry)})
    refusal_rows = [r for r in misses if r["gt_action"] == "impossible"]
    assert hits and misses and bool(refusal_rows) == (bench == "osworld_g")
    for rows, expected in ((hits, 1.0), (misses, 0.0)):
        data = _eval(rows, bench, preset, tmp_path / f"{bench}_{expected}.jsonl")
        assert data["n_rows"] == len(rows) and data["unparseable"]["count"] == 0, data["unparseable"]
        assert data["metrics"]["overall"] == expected, (expected, data["metrics"])


@pytest.mark.parametrize("preset", ["uitars", "uivenus15", "guiowl15", "mai_ui"])
def test_grid1000_answer_maps_as_k_over_1000_times_the_width(preset, tmp_path):
    """Issue 51 class 3: the models' code maps a 0-1000 answer k to k / 1000 * W. On a 1920-px screen 29 is
    29 / 1000 * 1920 = 55.68 px, the left edge of the gold box, so ``eval --preset`` scores a hit (29 / (1000 /
    1920) is 55.67999999999999, a miss); 28 stays a miss."""
    geometry = get_preset(preset).geometry(1920, 1080, "screenspot")
    rows = [{"id": f"e{x}", "instruction": "Open the menu", "gt_action": "click", "gt_bbox": [55.68, 500, 80, 600],
             "image_size": [1920, 1080], "group": "web", "ui_type": "icon", "pred": answer_in_frame(preset, x, 500),
             "resize": {"resized_size": [geometry.resized_width, geometry.resized_height]}} for x in (29, 28)]
    data = _eval(rows, "screenspot", preset, tmp_path / "screenspot_test.jsonl")
    assert data["unparseable"]["count"] == 0 and data["counts"]["n"] == 2, data
    assert data["metrics"]["overall"] == 0.5, data["metrics"]
