"""Request building, benchmark files and prediction-file mechanics on real screenshots (no model needed)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.geometry import GUIR1_TRAIN_MAX_PIXELS, QWEN25VL_MAX_PIXELS, smart_resize
from core.inference.backends import Generation
from core.inference.bench import count_rows, detect_layout, iter_benchmark, write_guir1_benchmark
from core.inference.requests import (
    IMAGE_PLACEHOLDER,
    ResizePolicy,
    build_request,
    hf_messages,
    inference_template_name,
    model_image_factor,
    openai_messages,
)
from core.inference.runner import (
    PRED_FIELDS,
    PredictionFileCorrupt,
    PredictionWriter,
    SkippedRecord,
    load_done,
    prediction_row,
)
from core.prompts import get_template

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
AITZ = DATA / "aitz"
SCREENSPOT = DATA / "screenspot"


@pytest.fixture(scope="module")
def aitz_steps(shared_data):
    return list(READERS["aitw"](AITZ, summary=ConversionSummary()))


@pytest.fixture(scope="module")
def screenspot_steps(shared_data):
    return list(READERS["screenspot"](SCREENSPOT / "screenspot_v1_annotations.jsonl",
                                      images_dir=SCREENSPOT / "images", skip_missing=True,
                                      summary=ConversionSummary()))


def test_request_resizes_like_training(aitz_steps, screenspot_steps):
    for step in aitz_steps + screenspot_steps:
        req = build_request(step, template=None, policy=ResizePolicy())
        assert req.ok, req.error
        w, h = step.image_size
        rh, rw = smart_resize(h, w, factor=28, min_pixels=3136, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
        assert (req.geometry.resized_width, req.geometry.resized_height) == (rw, rh)
        assert req.image.size == (rw, rh) and req.image.mode == "RGB"  # RGBA ScreenSpot PNGs become RGB
        assert req.policy.record(req.geometry)["resized_size"] == [rw, rh]
    big = screenspot_steps[0]  # 2560x1440: above GUI-R1's training cap, below the processor default
    assert big.image_size == (2560, 1440)
    train = build_request(big, template=None, policy=ResizePolicy()).geometry
    default = build_request(big, template=None, policy=ResizePolicy(max_pixels=QWEN25VL_MAX_PIXELS)).geometry
    assert train.resized_width * train.resized_height <= GUIR1_TRAIN_MAX_PIXELS
    assert (default.resized_width, default.resized_height) == (2548, 1428)  # round(2560/28)*28, round(1440/28)*28


def test_default_template_never_reads_the_gold_action(aitz_steps, screenspot_steps):
    click = next(s for s in aitz_steps if s.action.type == "click")
    low_click = click.model_copy(update={"task_type": "low"})
    low_home = low_click.model_copy(update={"action": aitz_steps[0].action})
    assert inference_template_name(low_click) == inference_template_name(low_home) == "guir1-high"
    assert inference_template_name(screenspot_steps[0]) == "guir1-grounding"
    req = build_request(aitz_steps[1], template=None, policy=ResizePolicy())
    # the prompt is exactly the training template's rendering, history included
    assert req.messages == get_template("guir1-high").render(aitz_steps[1], req.geometry)
    assert "Step 1: press the home button" in req.messages[0]["content"]


def test_explicit_template_and_message_conversions(aitz_steps):
    req = build_request(aitz_steps[0], template="guir1-inference", policy=ResizePolicy())
    assert req.template == "guir1-inference"
    text = req.messages[0]["content"]
    before, after = text.split(IMAGE_PLACEHOLDER)
    hf = hf_messages(req.messages)
    assert hf[0]["content"] == [{"type": "text", "text": before}, {"type": "image"}, {"type": "text", "text": after}]
    oa = openai_messages(req.messages, req.images)
    url = oa[0]["content"][1]["image_url"]["url"]
    assert oa == [{"role": "user", "content": [{"type": "text", "text": before},  # one image: as before
                                               {"type": "image_url", "image_url": {"url": url}},
                                               {"type": "text", "text": after}]}]
    assert url.startswith("data:image/png;base64,")
    import base64

    decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert decoded.size == req.image.size
    bad = build_request(aitz_steps[0], template="no-such-template", policy=ResizePolicy())
    assert not bad.ok and "no-such-template" in bad.error


def test_qwen3vl_template_and_factor(aitz_steps, tmp_path):
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"patch_size": 16, "merge_size": 2}))
    assert model_image_factor(tmp_path) == 32
    assert model_image_factor(tmp_path / "absent") == 28
    req = build_request(aitz_steps[2], template="qwen3vl-mobile-use", policy=ResizePolicy(factor=32))
    assert req.ok and req.geometry.resized_width % 32 == 0 and req.geometry.resized_height % 32 == 0
    assert [m["role"] for m in req.messages] == ["system", "user"]


def test_bad_images_become_row_errors(aitz_steps):
    step = aitz_steps[0]
    corrupt = build_request(step.model_copy(update={"image": b"not an image"}), template=None, policy=ResizePolicy())
    assert not corrupt.ok and "corrupt image" in corrupt.error and step.id in corrupt.error
    missing = build_request(step.model_copy(update={"image": "/nonexistent/x.png"}), template=None,
                            policy=ResizePolicy())
    assert not missing.ok and "cannot read the image" in missing.error
    wrong = build_request(step.model_copy(update={"image_size": (300, 600)}), template=None, policy=ResizePolicy())
    assert not wrong.ok and "270x600" in wrong.error
    row, action = prediction_row(corrupt, None, backend="hf", model="m")
    assert set(row) == set(PRED_FIELDS) and row["error"] == corrupt.error and action is None
    assert row["resize"]["resized_size"] is None


def test_prediction_row_maps_the_answer_to_original_pixels(aitz_steps):
    step = next(s for s in aitz_steps if s.action.type == "click")
    req = build_request(step, template=None, policy=ResizePolicy())
    g = req.geometry  # 270x600 -> 280x588
    answer = "<think>x</think> <answer>[{'action': 'click', 'point': [140, 294], 'input_text': 'no input text'}]</answer>"
    row, action = prediction_row(req, Generation(text=answer), backend="hf", model="m")
    assert row["parse_ok"] and row["pred_action"] == "click" and action.type == "click"
    assert row["pred_coord"] == pytest.approx([140 * 270 / g.resized_width, 294 * 600 / g.resized_height])
    assert row["gt_bbox"] == list(step.action.point)  # AitZ has a point, no box
    assert row["image_size"] == [270, 600] and row["template"] == "guir1-high"
    junk, _ = prediction_row(req, Generation(text="I would click it"), backend="hf", model="m")
    assert not junk["parse_ok"] and junk["parse_error"] and junk["pred_coord"] is None and not junk["error"]
    failed, _ = prediction_row(req, Generation(error="RuntimeError: CUDA OOM"), backend="hf", model="m")
    assert failed["error"] == "RuntimeError: CUDA OOM" and failed["pred"] is None


def test_guir1_benchmark_round_trip_and_layout(aitz_steps, screenspot_steps, tmp_path):
    path = tmp_path / "androidcontrol_high_test.parquet"
    assert write_guir1_benchmark(aitz_steps + screenspot_steps, path) == 8
    assert detect_layout(path) == "guir1" and count_rows(path) == 8
    back = list(iter_benchmark(path))
    assert [s.action for s in back] == [s.action for s in aitz_steps + screenspot_steps]
    assert [s.bbox for s in back] == [s.bbox for s in aitz_steps + screenspot_steps]
    with pytest.raises(ValueError, match="neither a unified parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"x": [1]}), tmp_path / "other.parquet")
        detect_layout(tmp_path / "other.parquet")


def test_reader_rejects_become_rows_in_place(aitz_steps, tmp_path):
    import pyarrow.parquet as pq

    path = tmp_path / "b.parquet"
    write_guir1_benchmark(aitz_steps, path)
    table = pq.read_table(path).to_pylist()
    table[1]["image"] = {"bytes": None, "path": "gone.png"}
    import pyarrow as pa

    from core.inference.bench import GUIR1_BENCH_SCHEMA

    pq.write_table(pa.Table.from_pylist(table, schema=GUIR1_BENCH_SCHEMA), path)
    items = list(iter_benchmark(path))
    assert [type(i).__name__ for i in items] == ["Step", "SkippedRecord", "Step", "Step"]
    assert isinstance(items[1], SkippedRecord) and items[1].reason == "missing image"


def test_load_done_cuts_a_torn_line_and_refuses_corruption(tmp_path):
    out = tmp_path / "p.json"
    with PredictionWriter(out) as w:
        w.write_rows([{"id": "a", "error": None}, {"id": "b", "error": "boom"}])
    with open(out, "ab") as f:
        f.write(b'{"id": "c", "pred": "half a li')  # killed mid-write
    done, first = load_done(out)
    assert done == {"a", "b"} and first["id"] == "a"
    assert out.read_bytes().endswith(b"\n") and out.read_text().count("\n") == 2
    done, _ = load_done(out, retry_failed=True)
    assert done == {"a"} and [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["a"]
    out.write_text('{"id": "a"}\nnot json\n{"id": "b"}\n')
    with pytest.raises(PredictionFileCorrupt, match="p.json:2"):
        load_done(out)
