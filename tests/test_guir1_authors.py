"""GUI-R1's ScreenSpot script as its authors' reading (issue 51; docs/presets.md "Authors' reading", ``guir1``):
icey-zhang/GUI-R1 @ 0ec02be ``guir1/inference/inference_vllm_screenspot.py`` parses the first ``<answer>`` with its
``bbox_pattern`` (else (0, 0)), hands the processor the image qwen-vl-utils' ``fetch_image`` already resized, and
multiplies the point by that size over the processor's (float32), comparing the result with the gold boxes
unmapped. The ``guir1`` preset shows the model that two-step size on ScreenSpot, -v2 and -Pro."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

import pytest
from test_presets_2025 import screenspot as screenspot  # noqa: F401 (a fixture)
from typer.testing import CliRunner

from core.authors import read_answer
from core.cli import app
from core.geometry import ImageGeometry, fetch_image_resize, smart_resize
from core.inference.requests import ResizePolicy
from core.presets import get_preset, reparse_row

runner = CliRunner()
#: The script's ``bbox_pattern`` (inference_vllm_screenspot.py:40), the reference the reading is checked against.
SCRIPT_PATTERN = re.compile(r"\{.*\[(\d+),\s*(\d+)]\s*.*\}")
#: The worked example of docs/presets.md: float32(1932 / 1904), float32(1092 / 1064).
SCALE_1080P = (1.0147058963775635, 1.0263158082962036)


def _answer(x: object, y: object) -> str:
    """An answer as GUI-R1 writes it (its prompt's example, inference_vllm_screenspot.py:80-82)."""
    return (f"<think>The menu is at the top.</think> <answer>[{{'action': 'click', 'point': [{x}, {y}], "
            "'input_text': 'no input text'}]</answer>")


def _point(text: str) -> tuple[float, float]:
    result, reading = read_answer(text, "guir1", "guir1", "authors", grounding=True)
    assert result.ok and reading is not None, result.error
    return result.action.point


# ------------------------------------------------------------------------------------------------ frames


def test_worked_example_1920x1080_frames_and_float32_scales():
    """docs/presets.md: qwen-vl-utils gives 1932 x 1092 (2,109,744 px), the processor under 2,097,152 gives
    1904 x 1064, and the script's scales are the float32 quotients, not the exact ones."""
    assert fetch_image_resize(1920, 1080) == (1932, 1092) and 1932 * 1092 == 2_109_744
    g = get_preset("guir1").geometry(1920, 1080, "screenspot")
    assert (g.width, g.height, g.resized_width, g.resized_height) == (1920, 1080, 1904, 1064)
    row = {"id": "r", "pred": _answer(1904, 1064), "image_size": [1920, 1080]}
    got = reparse_row(row, get_preset("guir1"), "screenspot")
    assert got["parse_ok"] and got["pred_coord"] == [1904 * SCALE_1080P[0], 1064 * SCALE_1080P[1]]
    assert SCALE_1080P != (1932 / 1904, 1092 / 1064)  # the exact quotients
    assert got["pred_coord"][0] > 1932 and got["pred_coord"][1] > 1092  # the float32 excess, in the 1932 frame


def test_the_scale_is_torchs_float32_reciprocal_times_the_origin():
    """The script divides a Python int by the processor's int64 grid size times the patch size (:117-123); torch
    computes that as the tensor's float32 reciprocal times the int, in float32, which is not always the rounded
    quotient: on a 1170 x 2532 phone (qwen-vl-utils 1176 x 2520, the model 980 x 2100) 1176 / 980 = 2520 / 2100
    = 1.2 exactly, float32(1.2) = 1.2000000476837158, the script's scales 1.1999999284744263."""
    from core.authors import _float32, _guir1_screenspot_scale

    phone = get_preset("guir1").geometry(1170, 2532, "screenspot")
    assert (phone.resized_width, phone.resized_height) == (980, 2100) and fetch_image_resize(1170, 2532) == (1176, 2520)
    assert _guir1_screenspot_scale(phone) == (1.1999999284744263,) * 2 and _float32(1.2) == 1.2000000476837158
    torch = pytest.importorskip("torch")
    grid = torch.tensor([[1, 1064 // 14, 1904 // 14]])
    assert ((1932 / (grid[0][2] * 14)).item(), (1092 / (grid[0][1] * 14)).item()) == SCALE_1080P
    rng = random.Random(51)
    sizes = [(2560, 1440), (1170, 2532), (3840, 2160), (1366, 768), (2880, 1800)]
    for w, h in sizes + [(rng.randint(200, 6000), rng.randint(200, 6000)) for _ in range(500)]:
        g = get_preset("guir1").geometry(w, h, "screenspot_pro")
        ow, oh = fetch_image_resize(w, h)
        grid = torch.tensor([[1, g.resized_height // 14, g.resized_width // 14]])
        assert _guir1_screenspot_scale(g) == ((ow / (grid[0][2] * 14)).item(), (oh / (grid[0][1] * 14)).item())


def test_fetch_image_resize_is_qwen_vl_utils():
    vp = pytest.importorskip("qwen_vl_utils.vision_process")
    rng = random.Random(51)
    sizes = [(1920, 1080), (2560, 1440), (3840, 2160), (1080, 2400), (5, 900), (20, 3000), (10000, 9000)]
    sizes += [(rng.randint(14, 8000), rng.randint(14, 8000)) for _ in range(2000)]
    sizes = [(w, h) for w, h in sizes if max(w, h) / min(w, h) <= 200]
    for w, h in sizes:
        h_bar, w_bar = vp.smart_resize(h, w, 28, vp.IMAGE_MIN_TOKEN_NUM * 28 ** 2, vp.IMAGE_MAX_TOKEN_NUM * 28 ** 2)
        assert fetch_image_resize(w, h) == (w_bar, h_bar), (w, h)
    with pytest.raises(ValueError, match="aspect ratio"):
        fetch_image_resize(1, 300)


def test_two_steps_on_screenspot_only():
    """On a 2560 x 1440 screen (ScreenSpot-Pro's most common) the two steps give 1932 x 1064 (qwen-vl-utils'
    2548 x 1428 resized again), one smart_resize under the same bound 1904 x 1064. Navigation benchmarks keep the
    processor's default bound, where the second step changes nothing."""
    p = get_preset("guir1")
    assert fetch_image_resize(2560, 1440) == (2548, 1428)
    assert smart_resize(1440, 2560, max_pixels=2_097_152) == (1064, 1904)  # the one-step size it replaces
    for bench in ("screenspot", "screenspot_v2", "screenspot_pro"):
        g = p.geometry(2560, 1440, bench)
        assert (g.resized_width, g.resized_height) == (1932, 1064) and p.fetches_image_first(bench)
    for bench in ("androidcontrol_low", "guiodyssey", "osworld_g", None):
        assert not p.fetches_image_first(bench)
    nav = p.geometry(2560, 1440, "androidcontrol_low")
    assert (nav.resized_width, nav.resized_height) == (2548, 1428) == fetch_image_resize(2560, 1440)
    policy = ResizePolicy.from_options(preset_bounds=p.pixel_bounds("screenspot_pro"), fetch_image_first=True)
    assert policy.geometry(2560, 1440) == p.geometry(2560, 1440, "screenspot_pro")
    assert policy.record(policy.geometry(2560, 1440))["fetch_image_first"] is True
    # an explicit --max-pixels (or a recipe) drops the preset's first step, as it drops InfiGUI-G1's
    assert not ResizePolicy.from_options(max_pixels=2_097_152, fetch_image_first=True).fetch_image_first
    assert "fetch_image_first" not in ResizePolicy().record(None)


def test_dry_run_sends_the_two_step_size(screenspot, tmp_path):  # noqa: F811
    res = runner.invoke(app, ["infer", "--backend", "hf", "--model", "m", "--input", str(screenspot), "--output",
                              str(tmp_path / "never.json"), "--preset", "guir1", "--dry-run"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    assert rows and {tuple(r["image_size"]) for r in rows} == {(2560, 1440)}
    for r in rows:
        assert r["resized_size"] == [1932, 1064] and r["resize"]["fetch_image_first"] is True, r["resize"]
        assert r["resize"]["max_pixels"] == 2_097_152 and r["template"] == "guir1-inference-screenspot"
    res = runner.invoke(app, ["infer", "--backend", "hf", "--model", "m", "--input", str(screenspot), "--output",
                              str(tmp_path / "never.json"), "--preset", "guir1", "--dry-run", "--max-pixels",
                              "2097152"])
    row = json.loads(next(x for x in res.stdout.splitlines() if x.startswith("{")))
    assert row["resized_size"] == [1904, 1064] and "fetch_image_first" not in row["resize"]


def test_a_file_written_in_one_step_is_not_resumed_in_two(tmp_path):
    from core.inference.runner import _check_compatible

    one = {"resize": {"min_pixels": 3136, "max_pixels": 2_097_152, "factor": 28}, "model": "m"}
    two = ResizePolicy(min_pixels=3136, max_pixels=2_097_152, fetch_image_first=True)
    with pytest.raises(ValueError, match="fetch_image_first False -> True"):
        _check_compatible(one, two, None, "m", tmp_path / "p.jsonl")
    _check_compatible({**one, "resize": {**one["resize"], "fetch_image_first": True}}, two, None, "m",
                      tmp_path / "p.jsonl")
    _check_compatible(one, ResizePolicy(min_pixels=3136, max_pixels=2_097_152), None, "m", tmp_path / "p.jsonl")


# ------------------------------------------------------------------------------------------------ parsing


@pytest.mark.parametrize("text,point", [
    (_answer(123, 300), (123, 300)),
    # greedy: the last integer [x, y] on the line of the first '{'
    ("<answer>[{'action': 'click', 'point': [10, 20], 'input_text': 'a'}, {'action': 'click', 'point': [30,40], "
     "'input_text': 'b'}]</answer>", (30, 40)),
    # the first line that matches decides, not the last
    ("<answer>[{'action': 'click', 'point': [1, 2]},\n{'action': 'click', 'point': [3, 4]}]</answer>", (1, 2)),
    # '.' stops at a newline: a '}' only on the next line, after ',', is no match
    ("<answer>[{'action': 'click', 'point': [5, 6],\n'input_text': 'x'}]</answer>", (0, 0)),
    # ... but whitespace after ']' may cross the line
    ("<answer>{'point': [5, 6]\n}</answer>", (5, 6)),
    # no <answer> tag: the script's other pattern does not compile, (0, 0) whatever the answer says
    ("[{'action': 'click', 'point': [123, 300], 'input_text': 'no input text'}]", (0, 0)),
    ("<think>..</think> <answer>[{'action': 'click', 'point': [123, 300]}]", (0, 0)),
    # the first <answer> decides
    ("<answer>I cannot see it.</answer> <answer>[{'point': [7, 8]}]</answer>", (0, 0)),
    # no {..[x, y]..}: decimals, a bare point, no braces
    (_answer(12.5, 300), (0, 0)),
    ("<answer>[12, 300]</answer>", (0, 0)),
    ("<answer>point: [12, 300]}</answer>", (0, 0)),
    # int() of Unicode digits (re's \d and int() read them), and a number int() refuses: its except, (0, 0)
    (_answer("\u0661\u0662", 3), (12, 3)),
    (_answer("9" * 5000, 3), (0, 0)),
])
def test_extract_coord(text, point):
    assert _point(text) == (float(point[0]), float(point[1]))
    found = re.search(r"<answer>(.*?)</answer>", text, re.DOTALL)
    script = SCRIPT_PATTERN.search(found.group(1).strip()) if found else None
    if script is not None and point != (0, 0):
        assert (int(script.group(1)), int(script.group(2))) == point


def test_the_search_is_the_scripts_regex():
    """The linear-time search gives the regex's groups on random text of its characters (newlines, Unicode
    whitespace and digits included)."""
    from core.authors import _guir1_coord

    alphabet = [*"{}[], \n0123456789a", "\u0663", "\u2028", "\t", "[1, 2]", "{'p': [3,4]}"]
    rng = random.Random(51)
    matched = 0
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        found = SCRIPT_PATTERN.search(text)
        matched += found is not None
        assert _guir1_coord(text) == (None if found is None else found.groups()), repr(text)
    assert matched > 1000


def test_a_long_answer_is_read_in_linear_time():
    """The regex backtracks cubically on '{[1,2]' repeated (seconds for 6,000 characters); the reading does not."""
    for body in ("{[1,2]" * 10_000, "{" + "[12, 3" * 10_000, "{" * 60_000):
        start = time.monotonic()
        assert _point(f"<answer>{body}</answer>") == (0.0, 0.0)
        assert time.monotonic() - start < 2


def test_navigation_answers_keep_the_guir1_parser():
    """The ScreenSpot script's reading is a grounding one; the navigation scripts parse with extract_action,
    which the tolerant ``guir1`` parser reads."""
    result, reading = read_answer(_answer(5, 6), "guir1", "guir1", "authors", grounding=False)
    assert reading is None and result.ok and result.action.point == (5.0, 6.0)
    assert read_answer("[{'action': 'click', 'point': [5, 6]}]", "guir1", "guir1", "authors")[0].action.point == (0, 0)


# ------------------------------------------------------------------------------------------------ scoring


def _eval(rows: list[dict], path: Path, reading: str) -> dict:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = path.with_suffix(f".{reading}.json")
    res = runner.invoke(app, ["eval", "--predictions", str(path), "--benchmark", "screenspot", "--preset", "guir1",
                              "--reading", reading, "--json", str(report)])
    assert res.exit_code == 0, res.output
    return json.loads(report.read_text())


@pytest.mark.parametrize("recorded", [True, False])
def test_the_authors_frame_decides_hits(recorded, tmp_path):
    """On a 1920 x 1080 screenshot (the model sees 1904 x 1064), gold box x 1000..1010 (screenshot pixels):
    990 is 1004.6 in the script's 1932 frame (a hit) but 998.4 screenshot pixels (a miss, --reading tolerant);
    1000 is 1014.7 (a miss) but 1008.4 (a hit). The y scale alike: 507 -> 520.3 / 514.6 against y 500..520.
    ``recorded``: the row holds infer's resize record; else the preset's two-step size is used."""
    extra = {"resize": {"resized_size": [1904, 1064]}} if recorded else {}
    rows = [{"id": key, "instruction": "Open the menu", "gt_action": "click", "gt_bbox": [1000, 500, 1010, 520],
             "image_size": [1920, 1080], "group": "web", "ui_type": "icon", "pred": _answer(x, y), **extra}
            for key, x, y in (("authors", 990, 505), ("tolerant", 1000, 505), ("tolerant_y", 995, 507))]
    read = {r["id"]: reparse_row(r, get_preset("guir1"), "screenspot")["pred_coord"] for r in rows}
    assert read["authors"] == [990 * SCALE_1080P[0], 505 * SCALE_1080P[1]]
    tolerant = {r["id"]: reparse_row(r, get_preset("guir1"), "screenspot", "tolerant")["pred_coord"] for r in rows}
    assert tolerant["authors"] == pytest.approx([990 * 1920 / 1904, 505 * 1080 / 1064])
    authors, tolerant = (_eval(rows, tmp_path / "screenspot_test.jsonl", reading)
                         for reading in ("authors", "tolerant"))
    assert authors["counts"]["hits"] == 1 and tolerant["counts"]["hits"] == 2, (authors["counts"], tolerant["counts"])
    assert authors["data"]["reading"] == "authors" and tolerant["data"]["reading"] == "tolerant"
    assert 1000 <= read["authors"][0] <= 1010 and read["tolerant"][0] > 1010 and read["tolerant_y"][1] > 520


def test_the_float32_scale_decides_an_exact_edge(tmp_path):
    """680 x 1932 / 1904 is exactly 690, the box's right edge (a hit); the script's float32 scale makes it
    690.0000095 (a miss), and so does this reading."""
    row = {"id": "edge", "instruction": "Open the menu", "gt_action": "click", "gt_bbox": [600, 500, 690, 600],
           "image_size": [1920, 1080], "group": "web", "ui_type": "icon", "pred": _answer(680, 520),
           "resize": {"resized_size": [1904, 1064]}}
    assert 680 * 1932 / 1904 == 690.0
    assert reparse_row(row, get_preset("guir1"), "screenspot")["pred_coord"][0] == 680 * SCALE_1080P[0] > 690
    assert _eval([row], tmp_path / "screenspot_test.jsonl", "authors")["counts"]["hits"] == 0


def test_the_scale_uses_the_size_the_model_saw():
    """A row's recorded size is the processor's ("resized"); the "origin" is qwen-vl-utils' size of the
    screenshot: on 2560 x 1440, 2548 / 1932 and 1428 / 1064 in float32."""
    from core.authors import _float32, _guir1_screenspot_pixels

    g = ImageGeometry(2560, 1440, 1932, 1064)
    result, _ = read_answer(_answer(966, 532), "guir1", "guir1", "authors")
    assert _guir1_screenspot_pixels(result.action, g) == (966 * _float32(2548 / 1932), 532 * _float32(1428 / 1064))
    assert _float32(2548 / 1932) != 2548 / 1932
