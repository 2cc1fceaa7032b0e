"""core.eval reports, plots, gallery, CLI and experiments/guir1/eval.sh on prediction files built from real data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_eval_metrics import _nav, _pred_at, osatlas_rows, screenspot_rows, two_long_press_rows, write_jsonl
from typer.testing import CliRunner

from core.eval.gallery import write_gallery
from core.eval.metrics import evaluate
from core.eval.report import compare_rows, load_run, make_run, markdown_report, paper_overall

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
IMAGES = DATA / "screenspot" / "images"


def _nav_result(benchmark: str, type_, gr, sr) -> dict:
    return {"benchmark": benchmark, "mode": "strict", "n_rows": 10, "metrics": {"type": type_, "gr": gr, "sr": sr},
            "counts": {}, "unparseable": {"count": 0}, "warnings": []}


def test_paper_overall_is_the_mean_of_type_gr_sr_cells():
    run = make_run("m", "strict", [_nav_result("androidcontrol_high", 0.8, 0.6, 0.5),
                                   _nav_result("guiodyssey", 0.7, 0.4, 0.3)])
    md = markdown_report(run)
    # (80 + 60 + 50 + 70 + 40 + 30) / 6 = 55.0
    assert "| AndroidControl-High Type | AndroidControl-High GR | AndroidControl-High SR | GUI-Odyssey Type" in md
    assert "| m | 80.0 | 60.0 | 50.0 | 70.0 | 40.0 | 30.0 | 55.0 |" in md
    assert paper_overall([0.8, None, 0.5]) == pytest.approx(0.65)
    assert paper_overall([None]) is None


def test_markdown_grounding_layout_and_compare(tmp_path):
    rows = [_pred_at(r, ("center", "edge", "out")[i % 3]) for i, r in enumerate(screenspot_rows())]
    f = write_jsonl(tmp_path / "screenspot_test.json", rows)
    strict, guir1 = evaluate(f, "screenspot", "strict"), evaluate(f, "screenspot", "guir1")
    a = make_run("guir1-mode", "guir1", [guir1.to_json()])
    b = make_run("strict-mode", "strict", [strict.to_json()])
    md = markdown_report([a, b])
    assert ("| Model | Mobile Text | Mobile Icon | Desktop Text | Desktop Icon | Web Text | Web Icon | Text | Icon "
            "| Avg |") in md
    strict_row = next(line for line in md.splitlines() if line.startswith("| strict-mode (strict) |"))
    assert strict_row.endswith(f"| {100 * strict.metrics['overall']:.1f} |")
    assert strict_row.split(" | ")[1] == f"{100 * strict.metrics['per_group']['mobile-text']:.1f}"
    rows_cmp = compare_rows(a, b)
    assert rows_cmp == [("screenspot", "overall", guir1.metrics["overall"], strict.metrics["overall"])]
    (tmp_path / "a.json").write_text(json.dumps(guir1.to_json()))
    assert load_run(tmp_path / "a.json")["results"]["screenspot"]["mode"] == "guir1"


def _web_rows_with_images() -> list[dict]:
    rows = [r for r in screenspot_rows() if (IMAGES / r["image_path"]).is_file()]
    assert len(rows) == 4  # the README: 4 annotation rows point at the 2 stored screenshots
    return rows


def test_gallery_draws_gold_box_and_predicted_point(tmp_path):
    rows = _web_rows_with_images()
    preds = [_pred_at(rows[0], "out"), _pred_at(rows[1], "center"), _pred_at(rows[2], "out"),
             {**_pred_at(rows[3], "out"), "image_path": "missing.png"}]
    f = write_jsonl(tmp_path / "screenspot_test.json", preds)
    res = evaluate(f, "screenspot", "strict", max_failures=10)
    assert len(res.failures) == 3
    info = write_gallery(res.failures, tmp_path / "gallery", image_root=IMAGES)
    assert info == {"html": str(tmp_path / "gallery" / "index.html"), "rows": 3, "with_image": 2,
                    "without_image": 1, "refused": 0}
    page = (tmp_path / "gallery" / "index.html").read_text()
    assert "screenshot not available: missing.png" in page and rows[0]["instruction"] in page
    from PIL import Image

    with Image.open(tmp_path / "gallery" / "img" / "00000.png") as im:
        assert im.format == "PNG" and im.size == (800, 450)  # 2560 x 1440 scaled to 800 px
        scale = 800 / 2560
        px, py = res.failures[0]["pred_point"]
        assert im.getpixel((round(px * scale), round(py * scale))) == (255, 0, 0)  # predicted point, red
        x1, y1, _, y2 = res.failures[0]["gt_box"]
        assert im.getpixel((round(x1 * scale), round((y1 + y2) / 2 * scale))) == (0, 200, 0)  # gold box edge


def test_gallery_without_images_says_so(tmp_path):
    rows = [_nav(r, "click", [1, 1]) for r in osatlas_rows("ac_test.jsonl")]
    res = evaluate(write_jsonl(tmp_path / "androidcontrol_high_test.json", rows), "androidcontrol_high",
                   max_failures=5)
    info = write_gallery(res.failures, tmp_path / "g")
    assert info["with_image"] == 0 and info["without_image"] == 3
    assert "no image_path in row" in (tmp_path / "g" / "index.html").read_text()


def test_plots_are_real_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    from core.eval.plots import plot_result

    res = evaluate(write_jsonl(tmp_path / "p.jsonl", two_long_press_rows()), "androidcontrol_low", "strict")
    paths = plot_result(res.to_json(), tmp_path / "plots")
    assert [p.name for p in paths] == ["androidcontrol_low_bars.png", "androidcontrol_low_confusion.png"]
    for p in paths:
        with Image.open(p) as im:
            assert im.format == "PNG" and im.size[0] > 200 and im.size[1] > 150
            assert len(im.convert("RGB").getcolors(maxcolors=1 << 20)) > 10  # drawn, not blank


def _cli():
    import typer

    from core.eval.cli import register

    app = typer.Typer()
    register(app)

    @app.callback()
    def _root() -> None:
        """test app"""

    return app


def test_cli_eval_json_interface(tmp_path):
    f = write_jsonl(tmp_path / "androidcontrol_low_test.json", two_long_press_rows())
    out = tmp_path / "r.json"
    r = CliRunner().invoke(_cli(), ["eval", "--predictions", str(f), "--benchmark", "androidcontrol_low",
                                    "--mode", "guir1", "--json", str(out)])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert {"benchmark", "mode", "n_rows", "metrics"} <= set(data)
    assert data["benchmark"] == "androidcontrol_low" and data["mode"] == "guir1" and data["n_rows"] == 4
    assert data["metrics"]["type"] == 1.0 and data["metrics"]["sr"] == 0.75 and "per_category" in data["metrics"]
    r = CliRunner().invoke(_cli(), ["eval", "--predictions", str(f), "--benchmark", "nope"])
    assert r.exit_code == 2 and "unknown benchmark 'nope'" in r.output


def test_eval_sh_over_a_guir1_named_folder(tmp_path):
    pred = tmp_path / "qwen2_5_vl_3b"
    pred.mkdir()
    write_jsonl(pred / "screenspot_test.json", [_pred_at(r, "center") for r in screenspot_rows()[:30]])
    write_jsonl(pred / "androidcontrol_low_test.json", two_long_press_rows())
    odyssey = [{**_nav(r, "click", r["gt_bbox"]), "image_source": "/data/aitz.parquet"}
               for r in osatlas_rows("gui_odyssey_test.jsonl", (720, 1280))]
    write_jsonl(pred / "guiodyssey_test.json", odyssey)
    out = tmp_path / "eval"
    env = {**os.environ, "EVAL_ARGS": "--no-plots"}
    p = subprocess.run(["bash", str(ROOT / "experiments" / "guir1" / "eval.sh"), str(pred), str(out)],
                       cwd=tmp_path, env=env, check=False, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    for mode in ("strict", "guir1"):
        run = json.loads((out / mode / "report.json").read_text())
        assert run["name"] == "qwen2_5_vl_3b" and set(run["results"]) == {"screenspot", "androidcontrol_low",
                                                                           "guiodyssey"}
    guir1 = json.loads((out / "guir1" / "report.json").read_text())["results"]
    assert guir1["androidcontrol_low"]["metrics"]["type"] == 1.0 and guir1["screenspot"]["metrics"]["overall"] == 1.0
    md = (out / "report.md").read_text()
    assert "## Evaluation (strict mode)" in md and "## Evaluation (guir1 mode)" in md and "High-level tasks" in md
    assert (out / "strict" / "gallery" / "androidcontrol_low" / "index.html").is_file()
    # every table says how many rows it scored and on which files
    assert f"- qwen2_5_vl_3b / GUI-Odyssey: n={len(odyssey)}, predictions guiodyssey_test.json on aitz.parquet" in md
    assert "- qwen2_5_vl_3b / AndroidControl-Low: n=4, predictions androidcontrol_low_test.json" in md
    assert "- qwen2_5_vl_3b / ScreenSpot: n=30, predictions screenspot_test.json" in md
    assert md.count("Rows and data:") == 2 * 3  # both modes: grounding, low-level and high-level tables
    # logs: no empty progress bar before the tables, paths never folded at 80 columns, no colour codes
    assert "0 rows" not in p.stderr + p.stdout and "\x1b[" not in p.stdout
    assert f"json: {out / 'strict' / 'report.json'}\n" in p.stdout and len(str(out / "strict" / "report.json")) > 80


def test_eval_sh_usage_errors(tmp_path):
    p = subprocess.run(["bash", str(ROOT / "experiments" / "guir1" / "eval.sh"), str(tmp_path / "nope")],
                       check=False, capture_output=True, text=True)
    assert p.returncode == 2 and "does not exist" in p.stderr


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
