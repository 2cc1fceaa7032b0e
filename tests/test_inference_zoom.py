"""`gui-agent infer --zoom SHARE` (crop-then-ground, issue 39 item 3) on real ScreenSpot screenshots.

The baseline backend answers known points: ``--model gold`` the gold point (on the crop: the gold point in the
crop's pixels), ``--model centre`` the centre of the image it is shown. The rows are the real ScreenSpot rows whose
screenshots are in ../shared/data/screenspot, and, to put the first answer at every edge and corner, rows with the
same screenshots and instructions whose gold box is moved there (also on an odd-sized cut of the screenshot). Every
final point is checked against the mapping written out here: ``x = x1 + u * w_c / w~_c`` with ``u`` read from the
raw second answer with a regular expression (not the project's parser).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from PIL import Image
from typer.testing import CliRunner

from core.actions import Action
from core.cli import app
from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.geometry import Frame, box_center, from_crop, to_crop, zoom_box, zoom_size
from core.inference.backends import Generation
from core.inference.bench import iter_benchmark, write_guir1_benchmark
from core.inference.requests import ResizePolicy, build_request, hf_messages, openai_messages
from core.inference.runner import run_inference
from core.inference.zoom import NAVIGATION_NOTE
from core.schema import Step

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()
NO_RESIZE = ["--factor", "1", "--min-pixels", "1", "--max-pixels", "4000000"]  # both stages shown 1:1
ODD = (1279, 719)  # an odd-sized cut of the 2560 x 1440 screenshot
SIDE = 10  # the moved gold boxes are SIDE x SIDE pixels


# ------------------------------------------------------------------------------------------------ data


@pytest.fixture(scope="module")
def real_steps(shared_data) -> list[Step]:
    d = shared_data / "screenspot"
    steps = list(READERS["screenspot"](d / "screenspot_v1_annotations.jsonl", images_dir=d / "images",
                                       skip_missing=True, summary=ConversionSummary()))
    assert len(steps) == 4 and {s.image_size for s in steps} == {(2560, 1440)}
    return steps


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def _placements(w: int, h: int) -> dict[str, tuple[int, int, int, int]]:
    """A SIDE x SIDE gold box at each corner, each edge's middle and the centre of a w x h image (integer centres)."""
    xs = {"left": 0, "middle": (w - SIDE) // 2, "right": w - SIDE}
    ys = {"top": 0, "middle": (h - SIDE) // 2, "bottom": h - SIDE}
    return {f"{yn}-{xn}": (x, y, x + SIDE, y + SIDE) for yn, y in ys.items() for xn, x in xs.items()}


def _moved(step: Step, image: bytes, size: tuple[int, int], box: tuple[int, int, int, int], tag: str) -> Step:
    return Step(id=f"{step.id}@{tag}", image=image, image_size=size, instruction=step.instruction,
                task_type="grounding", action=Action(type="click", point=box_center(box)), bbox=box,
                source="screenspot", group=step.group, ui_type=step.ui_type)


@pytest.fixture(scope="module")
def bench(real_steps, shared_data, tmp_path_factory) -> dict[str, Path]:
    """``real``: the 4 real rows; ``placed``: 9 moved targets on the 2560 x 1440 screenshot and 9 on the odd cut;
    ``many``: 4 copies of the real rows (the kill test); ``nav``: the AitZ episode (navigation rows)."""
    d = tmp_path_factory.mktemp("zoom")
    files = {name: d / name / "screenspot_test.parquet" for name in ("real", "placed", "many")}
    write_guir1_benchmark(real_steps, files["real"])
    full = real_steps[0].image_bytes()
    with Image.open(io.BytesIO(full)) as im:
        odd = _png(im.convert("RGB").crop((7, 11, 7 + ODD[0], 11 + ODD[1])))
    placed = [_moved(real_steps[0], full, (2560, 1440), box, tag) for tag, box in _placements(2560, 1440).items()]
    placed += [_moved(real_steps[1], odd, ODD, box, f"odd-{tag}") for tag, box in _placements(*ODD).items()]
    write_guir1_benchmark(placed, files["placed"])
    write_guir1_benchmark([s.model_copy(update={"id": f"{s.id}#{k}"}) for k in range(4) for s in real_steps],
                          files["many"])
    aitz = list(READERS["aitw"](shared_data / "aitz", summary=ConversionSummary()))
    files["nav"] = d / "nav" / "androidcontrol_high_test.parquet"
    write_guir1_benchmark(aitz, files["nav"])
    return files


def _infer(inp: Path, out: Path, model: str, *extra: str):
    r = runner.invoke(app, ["infer", "--backend", "baseline", "--model", model, "--input", str(inp), "--output",
                            str(out), *extra])
    rows = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    return r, rows


_GUIR1_POINT = re.compile(r"'point': \[(-?\d+), (-?\d+)\]")
_TOOL_POINT = re.compile(r'"coordinate": \[(-?\d+), (-?\d+)\]')


def _answer_point(text: str) -> tuple[int, int]:
    m = _GUIR1_POINT.search(text) or _TOOL_POINT.search(text)
    assert m, text
    return int(m.group(1)), int(m.group(2))


def _expected_crop(centre: tuple[float, float], size: tuple[int, int], share: float) -> list[int]:
    """The crop written out per edge: flush with an edge it would cross, else centred (integer centre)."""
    (w, h), (cw, ch) = size, (round(share * size[0]), round(share * size[1]))
    x, y = int(centre[0]), int(centre[1])
    x1 = 0 if x - cw // 2 < 0 else (w - cw if x - cw // 2 + cw > w else x - cw // 2)
    y1 = 0 if y - ch // 2 < 0 else (h - ch if y - ch // 2 + ch > h else y - ch // 2)
    return [x1, y1, x1 + cw, y1 + ch]


# ------------------------------------------------------------------------------------------------ the option


@pytest.mark.parametrize("value", ["0", "1", "1.5", "-0.25", "nan", "inf"])
def test_a_share_outside_0_1_is_one_error_line(bench, tmp_path, value):
    r, rows = _infer(bench["real"], tmp_path / "p.jsonl", "gold", "--zoom", value)
    assert r.exit_code == 2 and not rows, r.output
    assert "--zoom: must be a share of the screen between 0 and 1" in r.output and "Traceback" not in r.output
    assert len([line for line in r.output.splitlines() if line.strip()]) == 1, r.output


def test_dry_run_shows_the_zoom_settings(bench):
    r = runner.invoke(app, ["infer", "--backend", "baseline", "--model", "gold", "--input", str(bench["placed"]),
                            "--output", "unused.jsonl", "--zoom", "0.5", "--dry-run"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 18
    full = [row["zoom"] for row in rows if row["image_size"] == [2560, 1440]]
    odd = [row["zoom"] for row in rows if row["image_size"] == list(ODD)]
    # 1280 x 720 crop: smart_resize at GUI-R1's training bounds rounds it to multiples of 28
    assert {json.dumps(z, sort_keys=True) for z in full} == {json.dumps(
        {"share": 0.5, "crop_size": [1280, 720], "crop_resized_size": [1288, 728],
         "crop_centre": "the first answer's point, shifted to keep the crop inside the screenshot"}, sort_keys=True)}
    assert {tuple(z["crop_size"]) for z in odd} == {(640, 360)}  # round(639.5), round(359.5): half to even
    nav = runner.invoke(app, ["infer", "--backend", "baseline", "--model", "gold", "--input", str(bench["nav"]),
                              "--output", "unused.jsonl", "--zoom", "0.5", "--dry-run"])
    assert nav.exit_code == 0, nav.output
    assert {json.loads(line)["zoom"]["note"] for line in nav.stdout.splitlines()} == {NAVIGATION_NOTE}
    plain = runner.invoke(app, ["infer", "--backend", "baseline", "--model", "gold", "--input", str(bench["real"]),
                                "--output", "unused.jsonl", "--dry-run"])
    assert plain.exit_code == 0 and all("zoom" not in json.loads(line) for line in plain.stdout.splitlines())


# ------------------------------------------------------------------------------------------------ exact map-back


def test_without_resize_the_gold_point_comes_back_exactly_at_every_edge_and_corner(bench, tmp_path):
    r, rows = _infer(bench["placed"], tmp_path / "p.jsonl", "gold", "--zoom", "0.5", *NO_RESIZE)
    assert r.exit_code == 0, r.output
    assert "18 answered on the crop, 0 kept the first answer" in r.output
    assert len(rows) == 18
    for row in rows:
        size = tuple(row["image_size"])
        gold = box_center(row["gt_bbox"])
        z = row["zoom"]
        assert row["resize"]["resized_size"] == list(size) and z["crop_resized_size"] == [z["crop"][2] - z["crop"][0],
                                                                                          z["crop"][3] - z["crop"][1]]
        assert z["used"] == "second" and z["note"] is None and z["first_coord"] == list(gold), row["id"]
        assert z["crop"] == _expected_crop(gold, size, 0.5), row["id"]
        assert z["second_coord"] == [gold[0] - z["crop"][0], gold[1] - z["crop"][1]]
        assert row["pred_coord"] == list(gold) and row["parse_ok"] and row["pred_action"] == "click"
    by_tag = {row["id"].rsplit("@", 1)[1]: row["zoom"]["crop"] for row in rows}
    assert by_tag["top-left"] == [0, 0, 1280, 720] and by_tag["bottom-right"] == [1280, 720, 2560, 1440]
    assert by_tag["top-right"] == [1280, 0, 2560, 720] and by_tag["bottom-left"] == [0, 720, 1280, 1440]
    assert by_tag["odd-bottom-right"] == [ODD[0] - 640, ODD[1] - 360, *ODD]  # flush with the odd edges
    assert by_tag["middle-middle"] == [1280 - 640, 720 - 360, 1280 + 640, 720 + 360]


@pytest.mark.parametrize("share", [0.5, 0.3])
def test_with_smart_resize_in_the_loop_the_mapping_is_offset_plus_scale(bench, tmp_path, share):
    r, rows = _infer(bench["placed"], tmp_path / "p.jsonl", "gold", "--zoom", str(share))
    assert r.exit_code == 0, r.output
    for row in rows:
        w, h = row["image_size"]
        gold = box_center(row["gt_bbox"])
        z = row["zoom"]
        x1, y1, x2, y2 = z["crop"]
        cw, ch = x2 - x1, y2 - y1
        assert (cw, ch) == (round(share * w), round(share * h))
        assert 0 <= x1 and x2 <= w and 0 <= y1 and y2 <= h
        assert z["crop"] == list(zoom_box(z["first_coord"], w, h, share))
        # the crop is resized by the same bounds the screenshot was
        policy = ResizePolicy()
        rh, rw = policy.geometry(cw, ch).resized_height, policy.geometry(cw, ch).resized_width
        assert z["crop_resized_size"] == [rw, rh] and (rw, rh) != (cw, ch)
        u, v = _answer_point(z["second_pred"])  # the second raw answer, resized crop pixels
        assert row["pred_coord"] == pytest.approx([x1 + u * cw / rw, y1 + v * ch / rh], abs=1e-9)
        # the gold answer was rounded to a whole resized-crop pixel: within half of one, in original pixels
        assert abs(row["pred_coord"][0] - gold[0]) <= 0.5 * cw / rw + 1e-9
        assert abs(row["pred_coord"][1] - gold[1]) <= 0.5 * ch / rh + 1e-9
        # the row's pred stays the first answer, in the frame its resize describes
        fu, fv = _answer_point(row["pred"])
        rw1, rh1 = row["resize"]["resized_size"]
        assert z["first_coord"] == pytest.approx([fu * w / rw1, fv * h / rh1], abs=1e-9)


def test_a_grid1000_prompt_maps_back_through_the_crop(bench, tmp_path):
    r, rows = _infer(bench["placed"], tmp_path / "p.jsonl", "gold", "--zoom", "0.5", "--prompt",
                     "qwen3vl-mobile-use")
    assert r.exit_code == 0, r.output
    for row in rows:
        x1, y1, x2, y2 = row["zoom"]["crop"]
        u, v = _answer_point(row["zoom"]["second_pred"])  # 0-1000 of the crop
        assert row["pred_coord"] == pytest.approx([x1 + u * (x2 - x1) / 1000, y1 + v * (y2 - y1) / 1000], abs=1e-9)
        gold = box_center(row["gt_bbox"])
        assert abs(row["pred_coord"][0] - gold[0]) <= 0.5 * (x2 - x1) / 1000 + 1e-9


def test_centre_baseline_on_an_odd_screen(bench, tmp_path):
    r, rows = _infer(bench["placed"], tmp_path / "p.jsonl", "centre", "--zoom", "0.5", *NO_RESIZE)
    assert r.exit_code == 0, r.output
    for row in rows:
        w, h = row["image_size"]
        z = row["zoom"]
        assert z["first_coord"] == [round(w / 2), round(h / 2)]  # answers are whole pixels
        cw, ch = round(w / 2), round(h / 2)
        assert z["crop"] == _expected_crop(z["first_coord"], (w, h), 0.5)
        assert row["pred_coord"] == [z["crop"][0] + round(cw / 2), z["crop"][1] + round(ch / 2)]


def test_real_rows_score_like_the_oracle_they_are(bench, tmp_path):
    out = tmp_path / "screenspot_test.json"
    r, rows = _infer(bench["real"], out, "gold", "--zoom", "0.5")
    assert r.exit_code == 0, r.output
    for row in rows:
        assert row["zoom"]["used"] == "second" and row["image_size"] == [2560, 1440] and row["group"] == "web"
        x1, y1, x2, y2 = row["gt_bbox"]
        assert x1 <= row["pred_coord"][0] <= x2 and y1 <= row["pred_coord"][1] <= y2
    report = tmp_path / "eval.json"
    ev = runner.invoke(app, ["eval", "--predictions", str(out), "--benchmark", "screenspot", "--json", str(report)])
    assert ev.exit_code == 0, ev.output
    scored = json.loads(report.read_text())
    assert scored["n_rows"] == 4 and scored["metrics"]["overall"] == 1.0  # eval reads pred_coord, the zoomed point


# ------------------------------------------------------------------------------------------------ rows kept


def test_navigation_rows_keep_their_one_answer(bench, tmp_path):
    _, plain = _infer(bench["nav"], tmp_path / "a.jsonl", "gold")
    r, zoomed = _infer(bench["nav"], tmp_path / "b.jsonl", "gold", "--zoom", "0.5")
    assert r.exit_code == 0, r.output
    assert "0 answered on the crop, 4 kept the first answer" in r.output
    assert [row["pred"] for row in zoomed] == [row["pred"] for row in plain]
    assert [row["pred_coord"] for row in zoomed] == [row["pred_coord"] for row in plain]
    for row in zoomed:
        assert row["zoom"]["note"] == NAVIGATION_NOTE and row["zoom"]["crop"] is None
        assert row["zoom"]["used"] == "first"


_CLICK = "<think></think> <answer>[{{'action': 'click', 'point': [{}, {}], 'input_text': 'no input text'}}]</answer>"


class Scripted:
    """A backend answering from a script keyed by (row id, stage), stage 2 being the crop."""

    name = "scripted"
    model = "scripted"
    batch_rows = 8

    def __init__(self, script: dict[tuple[str, int], Generation]):
        self.script = script
        self.seen: list[tuple[str, int, tuple[int, int]]] = []

    def generate(self, requests):
        out = []
        for r in requests:
            stage = 1 if r.crop is None else 2
            self.seen.append((r.step.id, stage, r.images[-1].size))
            out.append(self.script[(r.step.id, stage)])
        return out

    def close(self) -> None:
        pass


def test_answers_without_a_point_keep_the_first_answer_and_never_raise(bench, tmp_path):
    ids = [s.id for s in iter_benchmark(bench["real"])]
    a, b, c, d = ids
    script = {
        (a, 1): Generation(text="I cannot see that element."),  # unparseable: no crop
        (b, 1): Generation(text=_CLICK.format(700, 400)),
        (b, 2): Generation(text="<answer>[{'action': 'click', 'point': [nan, 1e999]}]</answer>"),  # garbage
        (c, 1): Generation(text="<answer>[{'action': 'complete', 'point': [-100, -100], "
                                "'input_text': 'no input text'}]</answer>"),  # no point
        (d, 1): Generation(text=_CLICK.format(1484, 840)),  # the far corner of the resized screen
        (d, 2): Generation(error="ConnectionError: the server went away"),
    }
    backend = Scripted(script)
    summary = run_inference(iter_benchmark(bench["real"]), backend, tmp_path / "p.jsonl", progress=False, zoom=0.5)
    rows = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()}
    assert [(i, s) for i, s, _ in backend.seen] == [(a, 1), (b, 1), (c, 1), (d, 1), (b, 2), (d, 2)]
    assert {size for _, s, size in backend.seen if s == 2} == {(1288, 728)}
    ra, rb, rc, rd = (rows[i] for i in ids)
    assert ra["zoom"]["used"] == "first" and ra["zoom"]["crop"] is None and not ra["parse_ok"]
    assert "the first answer has no point" in ra["zoom"]["note"] and ra["error"] is None
    assert rb["zoom"]["used"] == "first" and rb["zoom"]["crop"] is not None
    assert "the second answer has no point" in rb["zoom"]["note"] and rb["zoom"]["second_pred"].startswith("<answer>")
    assert rb["pred_coord"] == rb["zoom"]["first_coord"] and rb["parse_ok"]
    assert rc["zoom"]["crop"] is None and "a complete action has no point" in rc["zoom"]["note"]
    assert rc["pred_action"] == "complete" and rc["pred_coord"] is None
    assert rd["zoom"]["crop"] == [1280, 720, 2560, 1440]  # first point at the corner: the crop is flush with it
    assert rd["error"] == "zoom, second request: ConnectionError: the server went away"
    assert rd["zoom"]["used"] is None and summary.failed == 1
    assert summary.zoom_used == {"first": 3, None: 1}


def test_a_crop_request_goes_through_every_backends_message_builder(real_steps):
    step = real_steps[0]
    req = build_request(step, template=None, policy=ResizePolicy(), crop=(100, 50, 1380, 770))
    assert req.ok and req.crop == (100, 50, 1380, 770) and req.images[0].size == (1288, 728)
    assert (req.geometry.width, req.geometry.height) == (1280, 720)
    with Image.open(io.BytesIO(step.image_bytes())) as im:
        assert req.images[0].tobytes() == im.convert("RGB").crop((100, 50, 1380, 770)).resize(
            (1288, 728), Image.Resampling.BICUBIC).tobytes()
    assert [p["type"] for m in hf_messages(req.messages) if isinstance(m["content"], list)
            for p in m["content"]].count("image") == 1
    parts = [p for m in openai_messages(req.messages, req.images) if isinstance(m["content"], list)
             for p in m["content"] if p["type"] == "image_url"]
    assert len(parts) == 1
    # the geometry of the crop converts like any screen's: resized crop pixels -> crop pixels
    assert req.geometry.point((1288, 728), Frame.RESIZED, Frame.ORIGINAL) == (1280.0, 720.0)


# ------------------------------------------------------------------------------------------------ resume


def test_a_cut_zoom_run_resumes_without_duplicates_and_refuses_other_zoom_settings(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    first, _ = _infer(bench["placed"], out, "gold", "--zoom", "0.5", "--limit", "5")
    assert first.exit_code == 0, first.output
    before = out.read_bytes()
    with open(out, "ab") as f:  # a torn last line, as a killed run leaves
        f.write(b'{"id": "torn", "zoom": {"sha')
    r, rows = _infer(bench["placed"], out, "gold", "--zoom", "0.5")
    assert r.exit_code == 0, r.output
    assert "13 new rows" in r.output and "5 already there" in r.output
    assert out.read_bytes().startswith(before)
    ids = [row["id"] for row in rows]
    assert len(ids) == 18 == len(set(ids)) and all(row["zoom"]["used"] == "second" for row in rows)
    for other, shown in ((["--zoom", "0.25"], "zoom 0.5 -> 0.25"), ([], "zoom 0.5 -> None")):
        again, _ = _infer(bench["placed"], out, "gold", *other)
        assert again.exit_code == 2 and shown in again.output, again.output
    plain = tmp_path / "plain.jsonl"
    _infer(bench["real"], plain, "gold")
    again, _ = _infer(bench["real"], plain, "gold", "--zoom", "0.5")
    assert again.exit_code == 2 and "zoom None -> 0.5" in again.output


def test_a_killed_zoom_run_resumes_without_duplicates(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    cmd = [sys.executable, "-m", "core", "infer", "--backend", "baseline", "--model", "gold", "--input",
           str(bench["many"]), "--output", str(out), "--zoom", "0.5", "--batch-size", "1"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:  # SIGKILL (the whole process group) once the first row is on disk
        while proc.poll() is None and not (out.exists() and b"\n" in out.read_bytes()):
            time.sleep(0.02)
        finished_first = proc.poll() is not None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not finished_first, "the run finished before it could be killed"
    n_before = len(out.read_text().splitlines())
    assert 1 <= n_before < 16
    r, rows = _infer(bench["many"], out, "gold", "--zoom", "0.5", "--batch-size", "1")
    assert r.exit_code == 0, r.output
    assert f"{16 - n_before} new rows" in r.output
    ids = [row["id"] for row in rows]
    assert len(ids) == 16 == len(set(ids)) and all(row["zoom"]["used"] == "second" for row in rows)


# ------------------------------------------------------------------------------------------------ properties

sizes = st.integers(min_value=1, max_value=6000)
shares = st.floats(min_value=0.01, max_value=0.99)
coords = st.floats(min_value=-1e5, max_value=1e5)


@settings(max_examples=300, deadline=None)
@given(w=sizes, h=sizes, share=shares, x=coords, y=coords)
def test_the_crop_lies_inside_the_image_holds_the_point_and_is_centred_unless_flush(w, h, share, x, y):
    x1, y1, x2, y2 = zoom_box((x, y), w, h, share)
    assert all(isinstance(v, int) for v in (x1, y1, x2, y2))
    assert (x2 - x1, y2 - y1) == zoom_size(w, h, share) == (min(w, max(1, round(share * w))),
                                                             min(h, max(1, round(share * h))))
    assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
    cx, cy = min(max(x, 0), w), min(max(y, 0), h)  # an off-screen point counts as the nearest edge
    assert x1 <= cx <= x2 and y1 <= cy <= y2
    if 0 < x1 and x2 < w:
        assert abs((x1 + x2) / 2 - cx) <= 0.5
    if 0 < y1 and y2 < h:
        assert abs((y1 + y2) / 2 - cy) <= 0.5


@settings(max_examples=300, deadline=None)
@given(w=st.integers(min_value=28, max_value=6000), h=st.integers(min_value=28, max_value=6000), share=shares,
       x=coords, y=coords, fu=st.floats(min_value=0, max_value=1), fv=st.floats(min_value=0, max_value=1),
       factor=st.sampled_from([1, 14, 28, 32]), max_pixels=st.sampled_from([3136 * 4, 1258291, 2109744, 12845056]))
def test_map_back_of_any_answer_on_the_crop_stays_inside_and_inverts(w, h, share, x, y, fu, fv, factor, max_pixels):
    box = zoom_box((x, y), w, h, share)
    cw, ch = box[2] - box[0], box[3] - box[1]
    assume(max(cw, ch) / min(cw, ch) <= 200)  # smart_resize's limit (such a crop is a row note, tested above)
    geo = ResizePolicy(min_pixels=3136, max_pixels=max_pixels, factor=factor).geometry(cw, ch)
    u, v = round(fu * geo.resized_width), round(fv * geo.resized_height)  # a whole-pixel answer on the crop
    crop_xy = geo.point((u, v), Frame.RESIZED, Frame.ORIGINAL)
    fx, fy = from_crop(crop_xy, box)
    # inside the crop, so inside the image (to float precision: the frame conversion divides by the scale, so an
    # answer on the crop's far edge can land 1e-13 px past it)
    tol = 1e-9
    assert box[0] - tol <= fx <= box[2] + tol and box[1] - tol <= fy <= box[3] + tol
    assert -tol <= fx <= w + tol and -tol <= fy <= h + tol
    # equals x1 + u * w_c / w~_c computed exactly, to float precision
    exact_x = box[0] + Fraction(u) * cw / geo.resized_width
    exact_y = box[1] + Fraction(v) * ch / geo.resized_height
    assert math.isclose(fx, float(exact_x), rel_tol=1e-12, abs_tol=1e-9)
    assert math.isclose(fy, float(exact_y), rel_tol=1e-12, abs_tol=1e-9)
    # and inverts: back into the crop, back to the resized crop's pixels
    bu, bv = geo.point(to_crop((fx, fy), box), Frame.ORIGINAL, Frame.RESIZED)
    assert math.isclose(bu, u, abs_tol=1e-6) and math.isclose(bv, v, abs_tol=1e-6)


@settings(max_examples=300, deadline=None)
@given(x1=st.integers(0, 10_000), y1=st.integers(0, 10_000), kx=st.integers(-10**7, 10**7),
       ky=st.integers(-10**7, 10**7))
def test_from_crop_and_to_crop_are_exact_inverses(x1, y1, kx, ky):
    box = (x1, y1, x1 + 100, y1 + 100)
    p = (kx / 1024, ky / 1024)  # any float a parser yields at 1/1024-pixel steps is exact here
    assert from_crop(to_crop(p, box), box) == p
    assert to_crop(from_crop(p, box), box) == p


# ------------------------------------------------------------------------------------------------ eval --preset


def test_eval_preset_reparses_the_second_answer_on_the_crop(bench, tmp_path):
    """``eval --preset`` on a zoom run re-parses the answer the row's fields hold (``zoom.used`` second): on the
    crop's resized size, plus the crop's offset, the point infer wrote; the first answer (``pred``) moved far
    away changes nothing. A broken zoom record is a parse error, never an exception."""
    from core.presets import get_preset, reparse_row

    out = tmp_path / "screenspot_test.json"
    r, rows = _infer(bench["real"], out, "gold", "--zoom", "0.5", "--preset", "guiowl15")
    assert r.exit_code == 0, r.output
    preset = get_preset("guiowl15")
    far = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [0, 0]}}\n</tool_call>'
    for row in rows:
        assert row["zoom"]["used"] == "second" and row["template"] == "guiowl15-grounding"
        again = reparse_row(dict(row, pred=far), preset, "screenspot")
        assert again["parse_ok"] and again["pred_coord"] == pytest.approx(row["pred_coord"], abs=1e-9)
        first_only = reparse_row(dict(row, pred=far, zoom=dict(row["zoom"], used="first")), preset, "screenspot")
        assert first_only["pred_coord"] != pytest.approx(row["pred_coord"], abs=1.0)
        for broken in ({"crop": None}, {"crop_resized_size": [0, 5]}, {"second_pred": 7}, {"crop": [5, 5, 5, 9]}):
            bad = reparse_row(dict(row, zoom={**row["zoom"], **broken}), preset, "screenspot")
            assert not bad["parse_ok"] and bad["parse_error"].startswith("zoom"), bad
    out.write_text("".join(json.dumps(dict(row, pred=far)) + "\n" for row in rows))
    report = tmp_path / "eval.json"
    ev = runner.invoke(app, ["eval", "--predictions", str(out), "--benchmark", "screenspot", "--preset", "guiowl15",
                             "--json", str(report)])
    assert ev.exit_code == 0, ev.output
    assert json.loads(report.read_text())["metrics"]["overall"] == 1.0


def test_a_refusal_keeps_the_first_answer(bench, tmp_path):
    """Round 5, item 10: OSWorld-G's refusal ``[-1, -1]`` as the first answer is no point to zoom on: the row keeps
    it (it scored as a refusal before the crop replaced it with a click)."""
    ids = [s.id for s in iter_benchmark(bench["real"])]
    script = {(ids[0], 1): Generation(text="<answer>[{'action': 'click', 'point': [-1, -1]}]</answer>"),
              **{(i, 1): Generation(text=_CLICK.format(700, 400)) for i in ids[1:]},
              **{(i, 2): Generation(text=_CLICK.format(10, 10)) for i in ids}}
    backend = Scripted(script)
    run_inference(iter_benchmark(bench["real"]), backend, tmp_path / "p.jsonl", progress=False, zoom=0.5)
    rows = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()}
    refusal = rows[ids[0]]
    assert (ids[0], 2) not in [(i, s) for i, s, _ in backend.seen]  # never asked on a crop
    assert refusal["zoom"]["used"] == "first" and refusal["zoom"]["crop"] is None
    assert "the first answer refuses" in refusal["zoom"]["note"]
    assert refusal["pred_coord"] == refusal["zoom"]["first_coord"] and all(v < 0 for v in refusal["pred_coord"])
    assert all(rows[i]["zoom"]["used"] == "second" for i in ids[1:])


def test_a_zoom_file_without_its_run_record_refuses_a_one_stage_resume(bench, tmp_path):
    """Round 5, item 10: with the run record gone, the rows' own zoom records decide: resuming without --zoom (or with
    another share) is refused, never one-stage rows appended to a two-stage file (and the other way round)."""
    from core.outputs import run_record_path

    out = tmp_path / "p.jsonl"
    first, _ = _infer(bench["placed"], out, "gold", "--zoom", "0.5", "--limit", "3")
    assert first.exit_code == 0, first.output
    run_record_path(out).unlink()
    before = out.read_bytes()
    for other, shown in (([], "zoom 0.5 -> None"), (["--zoom", "0.25"], "zoom 0.5 -> 0.25")):
        again, _ = _infer(bench["placed"], out, "gold", *other)
        assert again.exit_code == 2 and shown in again.output, again.output
        assert out.read_bytes() == before
    plain = tmp_path / "plain.jsonl"
    _infer(bench["real"], plain, "gold", "--limit", "2")
    run_record_path(plain).unlink()
    again, _ = _infer(bench["real"], plain, "gold", "--zoom", "0.5")
    assert again.exit_code == 2 and "zoom None -> 0.5" in again.output
    resumed, _ = _infer(bench["placed"], out, "gold", "--zoom", "0.5")  # the same share still resumes
    assert resumed.exit_code == 0, resumed.output
