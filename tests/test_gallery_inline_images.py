"""Failures of predictions made from a benchmark parquet (images inline) still get their screenshot drawn, and each
row's screenshot is resolved in order: an image_path inside --image-root or the predictions' folder, then the
inline image (image_source)."""

import io
import json

from PIL import Image

from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.eval import evaluate
from core.eval.gallery import write_gallery
from core.inference.bench import iter_benchmark, write_guir1_benchmark


def _gold_target(step) -> list[float]:
    """GUI-R1's gt_bbox: the gold box, else the gold point, else [-100, -100] (no target)."""
    if step.bbox is not None:
        return list(step.bbox)
    return list(step.action.point) if step.action.point is not None else [-100, -100]


def _aitz_failures(tmp_path, shared_data, image_path=None) -> tuple[list[dict], list]:
    """Prediction rows for the real AitZ episode made from a GUI-R1 benchmark parquet (screenshots inline), all
    wrong (long_press), and their scored failures."""
    steps = list(READERS["aitw"](shared_data / "aitz", summary=ConversionSummary()))
    bench = tmp_path / "androidcontrol_high_test.parquet"
    write_guir1_benchmark(steps, bench)
    rows = []
    for step in iter_benchmark(bench):
        w, h = step.image_size
        rows.append({
            "id": step.id, "instruction": step.instruction, "history": "", "gt_action": step.action.type,
            "gt_bbox": _gold_target(step), "gt_input_text": step.action.guir1_input_text(), "group": "aitz",
            "ui_type": "", "image_size": [w, h], "pred": "<answer>[{'action': 'long_press'}]</answer>",
            "pred_action": "long_press", "pred_coord": [w // 4, h // 4], "pred_input_text": "no input text",
            "image_path": image_path, "image_source": step.extra["image_source"],
        })
    preds = tmp_path / "androidcontrol_high_test.json"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows, evaluate([preds], "androidcontrol_high", mode="strict", max_failures=10).failures


def _thumb_sizes(gallery) -> list[tuple[int, int]]:
    out = []
    for f in sorted((gallery / "img").glob("*.png")):
        with Image.open(f) as im:
            out.append(im.size)
    return out


def test_gallery_resolves_confined_path_then_inline(tmp_path, shared_data):
    # AitZ rows carry a relative image_path that does not resolve from here: the inline image is used
    rows, failures = _aitz_failures(tmp_path, shared_data, image_path="GOOGLE_APPS-1/step_0.png")
    info = write_gallery(failures, tmp_path / "g1", image_root=tmp_path / "nowhere")
    assert info["with_image"] == len(rows) == 4
    assert set(_thumb_sizes(tmp_path / "g1")) == {(270, 600)}  # the AitZ screenshots, drawn from the parquet
    # an image_path inside --image-root wins over the inline image (a 2560x1440 ScreenSpot screenshot -> 800x450)
    shot = next((shared_data / "screenspot" / "images").glob("*.png"))
    readable = [{**f, "image_path": str(shot)} for f in failures]
    assert write_gallery(readable, tmp_path / "g2", image_root=shot.parent)["with_image"] == 4
    assert set(_thumb_sizes(tmp_path / "g2")) == {(800, 450)}
    # the same absolute path without --image-root lies outside the predictions' folder: refused, inline used
    info = write_gallery(readable, tmp_path / "g2b")
    assert info["with_image"] == 4 and info["refused"] == 0 and set(_thumb_sizes(tmp_path / "g2b")) == {(270, 600)}
    # neither under a root nor inline (the benchmark file is gone): refused without --image-root, found with it
    no_source = [{**f, "image_path": str(shot), "image_source": str(tmp_path / "gone.parquet")} for f in failures]
    info = write_gallery(no_source, tmp_path / "g3")
    assert info["with_image"] == 0 and info["refused"] == 4
    assert "screenshot refused" in (tmp_path / "g3" / "index.html").read_text()
    assert write_gallery(no_source, tmp_path / "g4", image_root=shot.parent)["with_image"] == 4


def test_gallery_reads_inline_screenshots_back_from_the_benchmark_file(tmp_path, shared_data):
    rows, failures = _aitz_failures(tmp_path, shared_data)
    assert len(failures) == len(rows)  # every gold action differs from long_press
    info = write_gallery(failures, tmp_path / "gallery")
    assert info["with_image"] == len(rows)
    first = sorted((tmp_path / "gallery" / "img").glob("*.png"))[0]
    with Image.open(io.BytesIO(first.read_bytes())) as im:
        img = im.convert("RGB")
    w, h = img.size
    x, y = round(w / 4), round(h / 4)  # the predicted point, drawn in red at the thumbnail scale
    assert img.getpixel((x, y)) == (255, 0, 0)
