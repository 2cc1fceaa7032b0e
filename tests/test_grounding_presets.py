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
from test_presets_2025 import ANSWERS, OSWORLD_G_REFUSES, REFUSALS, _far
from test_presets_2025 import screenspot as screenspot  # noqa: F401 (a fixture)
from typer.testing import CliRunner

from core.cli import app
from core.geometry import Frame, ImageGeometry
from core.inference.bench import iter_benchmark
from core.inference.rows import gold_columns
from core.presets import PRESETS, get_preset, reparse_row
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
    path.parent.mkdir(parents=True, exist_ok=True)
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
        if preset == "infigui_g1" and step.image_size == (3840, 2160):  # the fixture's 4K row (issue 51 class 4)
            assert r["resized_size"] == [2800, 1568] and "2800x1568" in json.dumps(r["messages"])
        assert r["messages"] == template.render(step, geometry)
        assert r["generation"]["max_new_tokens"] == p.generation.max_new_tokens
        row = {"id": step.id, "instruction": step.instruction, **gold_columns(step), "group": step.group,
               "ui_type": step.ui_type, "resize": {"resized_size": r["resized_size"]}}
        w, h = step.image_size
        if step.action.type == "impossible":  # OSWorld-G: the target is not on the screen
            if refusal is not None:  # only a negative point refuses for OSWorld-G's evaluator (issue 51)
                (hits if preset in OSWORLD_G_REFUSES else misses).append({**row, "pred": refusal})
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


@pytest.mark.parametrize(("preset", "hit", "miss"), [
    ("uivenus15", 29, 28), ("guiowl15", 29, 28), ("mai_ui", 29, 28), ("uitars15", None, None),
    ("step_gui", 30, 29), ("uground", 30, 29),  # int(k / 1000 x W): 29 -> int(55.68) = 55, left of the edge
    ("qwen3vl", 29.9, 28.9),  # int(x) / 1000 x W: 29.9 -> 29 -> 55.68, on the edge
])
def test_exact_edge_of_the_osworld_g_fixture_as_each_model_maps(preset, hit, miss, files, tmp_path):
    """Issue 51 classes 3 and 7 on the OSWorld-G fixture's edge row (FIXTUREEG1-0, x from 29 / 1000 x 1920 =
    55.68 px), through ``data convert`` and ``eval --preset``: each model's own arithmetic decides the edge
    (k / 1000 x W; GELab-Zero's and UGround's int() truncation; the Qwen3-VL cookbook's int(x) first). UI-TARS-1.5
    answers in resized pixels: its point at the edge is round(x / resized W x W, 3), found from the preset's
    resize."""
    step = next(s for s in iter_benchmark(files["osworld_g"]) if s.id == "OSWorld-G:FIXTUREEG1-0")
    assert step.bbox[0] == 29 / 1000 * 1920 == 55.68
    geometry = get_preset(preset).geometry(*step.image_size, "osworld_g")
    if preset == "uitars15":  # the resized pixel whose mapping lands on or just left of 55.68
        scale = 1920 / geometry.resized_width
        hit = next(k for k in range(200) if round(k * scale, 3) >= 55.68)
        miss = hit - 1

    def answer(k: float) -> str:
        if preset == "qwen3vl":
            return f'[{{"point_2d": [{k}, 550], "label": "menu"}}]'
        return answer_in_frame(preset, k, 550 if preset != "uitars15" else round(550 / 1080 * geometry.resized_height))

    rows = [{"id": f"{step.id}#{k}", "instruction": step.instruction, **gold_columns(step), "group": step.group,
             "ui_type": step.ui_type, "pred": answer(k),
             "resize": {"resized_size": [geometry.resized_width, geometry.resized_height]}} for k in (hit, miss)]
    data = _eval(rows, "osworld_g", preset, tmp_path / "osworld_g_test.jsonl")
    assert data["unparseable"]["count"] == 0 and data["counts"]["n"] == 2, data
    assert data["metrics"]["overall"] == 0.5, (data["metrics"], data["data"])
    read = {r["id"]: reparse_row(r, get_preset(preset), "osworld_g") for r in rows}
    assert read[rows[0]["id"]]["pred_coord"][0] >= 55.68 > read[rows[1]["id"]]["pred_coord"][0]


@pytest.mark.parametrize(("preset", "answer"), [
    ("guiowl15", "The menu button is in the top-left corner."),   # class 5: no coordinate -> [0, 0]
    ("uivenus", "The box is [10, 10, 30, 20]."),                   # class 6: text around the box -> (0, 0)
    ("guig2", "[12, 12]"),                                        # class 6: two numbers are no box -> (0, 0)
    ("gta1", "(12.5, 12)"),                                       # class 6: a decimal fails int() -> (0, 0)
    ("aguvis", "click the menu"),                                 # VLMEvalKit: no x=, y= -> (0.0, 0.0)
])
def test_fallback_to_the_origin_on_the_osworld_g_fixture(preset, answer, files, tmp_path):
    """Issue 51 classes 5 and 6 on the OSWorld-G fixture, through ``data convert`` and ``eval --preset``: an
    answer the authors' code cannot read becomes the point (0, 0), which hits the fixture's row whose box holds the
    origin (FIXTUREUC1-0) and misses a box elsewhere (0FOB4CLBT2-0); read tolerantly, neither row is hit."""
    steps = {s.id: s for s in iter_benchmark(files["osworld_g"])}
    rows = []
    for key in ("OSWorld-G:FIXTUREUC1-0", "OSWorld-G:0FOB4CLBT2-0"):
        step = steps[key]
        geometry = get_preset(preset).geometry(*step.image_size, "osworld_g")
        rows.append({"id": step.id, "instruction": step.instruction, **gold_columns(step), "group": step.group,
                     "ui_type": step.ui_type, "pred": answer,
                     "resize": {"resized_size": [geometry.resized_width, geometry.resized_height]}})
    assert steps["OSWorld-G:FIXTUREUC1-0"].bbox[:2] == (0, 0)
    read = [reparse_row(r, get_preset(preset), "osworld_g") for r in rows]
    assert [r["pred_coord"] for r in read] == [[0.0, 0.0], [0.0, 0.0]] and all(r["parse_ok"] for r in read), read
    data = _eval(rows, "osworld_g", preset, tmp_path / "osworld_g_test.jsonl")
    assert data["metrics"]["overall"] == 0.5 and data["counts"]["n"] == 2, data["metrics"]
    tolerant = [reparse_row(r, get_preset(preset), "osworld_g", "tolerant") for r in rows]
    assert all(t["pred_coord"] != [0.0, 0.0] for t in tolerant), tolerant


def _gold_rows(answers: dict[str, str], box: list[float], size: tuple[int, int] = (1920, 1080),
               resized: tuple[int, int] | None = None) -> list[dict]:
    """ScreenSpot rows with the gold ``box`` on a ``size`` screen, one per answer (id -> the model's text)."""
    return [{"id": key, "instruction": "Open the menu", "gt_action": "click", "gt_bbox": box, "image_size": list(size),
             "group": "web", "ui_type": "icon", "pred": pred,
             **({"resize": {"resized_size": list(resized)}} if resized else {})} for key, pred in answers.items()]


def _verdicts(rows: list[dict], preset: str, reading: str = "authors") -> dict[str, list[float] | None]:
    """Each row's point (ORIGINAL px) as ``eval --preset`` reads it (``reading``), None where unparseable."""
    out = {}
    for row in rows:
        got = reparse_row(row, get_preset(preset), "screenspot", reading)
        out[row["id"]] = got["pred_coord"] if got["parse_ok"] else None
    return out


@pytest.mark.parametrize("preset,write", [
    ("step_gui", lambda x: f"<THINK> tap it </THINK>\nexplain:tap it\taction:CLICK\tpoint:{x},500\tsummary:tapped"),
    ("uground", lambda x: f"({x}, 500)"),
])
def test_authors_truncate_the_mapped_point(preset, write, tmp_path):
    """Issue 51 class 3: GELab-Zero's device mapping (mobile_action_helper.py:361-362) and UGround's script
    (uground_qwen2vl.py:73-74) truncate k / 1000 * W with int(): on a 1920-px screen 29 is pixel 55, left of a box
    that starts at 55.5 (a miss), where the exact 55.68 would hit; 30 is pixel 57, a hit."""
    rows = _gold_rows({"e29": write(29), "e30": write(30)}, [55.5, 500, 80, 600])
    data = _eval(rows, "screenspot", preset, tmp_path / "screenspot_test.jsonl")
    assert data["unparseable"]["count"] == 0 and data["metrics"]["overall"] == 0.5, data
    assert _verdicts(rows, preset) == {"e29": [55.0, 540.0], "e30": [57.0, 540.0]}
    tolerant = _verdicts(rows, preset, "tolerant")
    assert tolerant["e29"] == [55.68, 540.0] and tolerant["e30"] == pytest.approx([57.6, 540.0])


def test_gelab_and_uground_formats_as_their_code_reads_them():
    """GELab-Zero's parser and front end need ``action`` (exactly CLICK) and ``explain``, integer points;
    UGround's script evaluates the whole answer as two numbers (a bare ``x, y`` too), text around it fails."""
    gelab = _gold_rows({"no_explain": "<THINK> t </THINK>\naction:CLICK\tpoint:29,500",
                        "bare_point": "explain:x\tpoint:29,500", "lower": "explain:x\taction:click\tpoint:29,500",
                        "decimal": "explain:x\taction:CLICK\tpoint:29.5,500",
                        "no_think": "explain:x\taction:CLICK\tpoint:30 500"}, [0, 0, 10, 10])
    assert _verdicts(gelab, "step_gui") == {"no_explain": None, "bare_point": None, "lower": None, "decimal": None,
                                             "no_think": [57.0, 540.0]}
    assert all(v is not None for k, v in _verdicts(gelab, "step_gui", "tolerant").items() if k != "decimal")
    uground = _gold_rows({"tuple": "(30, 500)", "bare": "30, 500", "list": "[30.5, 500]", "text": "Click (30, 500)",
                          "three": "(30, 500, 1)"}, [0, 0, 10, 10])
    assert _verdicts(uground, "uground") == {"tuple": [57.0, 540.0], "bare": [57.0, 540.0], "list": [58.0, 540.0],
                                            "text": None, "three": None}


def test_infigui_g1_resizes_in_two_steps_as_its_eval_script(tmp_path):
    """Issue 51 class 4: InfiGUI-G1's eval.py scales the screenshot to its 4,390,400-pixel budget (sides rounded:
    3840 x 2160 -> 2794 x 1571), then smart_resizes that: 2800 x 1568 (one smart_resize with that maximum gives
    2772 x 1568). infer sends that size (its resize policy from the preset) and eval maps the answer with it: 700
    resized px is 960 original px, the left edge of the gold box (a hit; 2772 wide it would be 969.7, a miss)."""
    from core.geometry import smart_resize
    from core.inference.requests import ResizePolicy

    p = get_preset("infigui_g1")
    g = p.geometry(3840, 2160, "screenspot_pro")
    assert (g.resized_width, g.resized_height) == (2800, 1568)
    assert smart_resize(2160, 3840, 28, 3136, 5600 * 28 * 28) == (1568, 2772)  # the one-step size it replaces
    policy = ResizePolicy.from_options(preset_bounds=p.pixel_bounds("screenspot_pro"),
                                       prescale_max_pixels=p.prescale_max_pixels, factor=p.factor)
    assert policy.geometry(3840, 2160) == g and policy.record(g)["prescale_max_pixels"] == 5600 * 28 * 28
    small = p.geometry(1920, 1080, "screenspot_pro")  # within the budget: smart_resize alone
    assert (small.resized_width, small.resized_height) == (1932, 1092)
    answer = '<think>The gear icon.</think>\n[{"point_2d": [%d, 500]}]'
    rows = _gold_rows({"edge": answer % 700, "left": answer % 699}, [960, 600, 990, 700], size=(3840, 2160))
    data = _eval(rows, "screenspot_pro", "infigui_g1", tmp_path / "screenspot_pro_test.jsonl")
    assert data["unparseable"]["count"] == 0 and data["metrics"]["overall"] == 0.5, data


def test_guiowl15_reads_bare_points_anywhere_last_wins_else_origin(tmp_path):
    """Issue 51 class 5: GUI-Owl-1.5's script reads every ``(x, y)`` of the answer, else every ``[x, y]`` (one
    space), the last one wins, and no coordinate is [0, 0]; the project's parser wanted a tool call. On a 1000 x
    1000 screen (0-1000 = pixels) with the gold box at the origin, an answer with no coordinate hits; so does its
    refusal (terminate, failure: no coordinate either)."""
    call = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [%d, %d]}}'
            '\n</tool_call>')
    answers = {"call": call % (5, 5), "bare": "The button is at [5, 5].", "paren_then_call": "Click (5, 6).\n"
               + call % (900, 900), "two_paren": "(900, 900) no, (5,5)", "no_space": "[5,5]", "nothing": "Not sure.",
               "refusal": REFUSALS["guiowl15"]}
    rows = _gold_rows(answers, [0, 0, 10, 10], size=(1000, 1000))
    assert _verdicts(rows, "guiowl15") == {"call": [5.0, 5.0], "bare": [5.0, 5.0], "paren_then_call": [5.0, 6.0],
                                          "two_paren": [5.0, 5.0], "no_space": [0.0, 0.0], "nothing": [0.0, 0.0],
                                          "refusal": [0.0, 0.0]}
    tolerant = _verdicts(rows, "guiowl15", "tolerant")
    assert tolerant["call"] == [5.0, 5.0] and tolerant["bare"] is None and tolerant["nothing"] is None
    assert tolerant["paren_then_call"] == [900.0, 900.0] and tolerant["refusal"] is None
    data = _eval(rows, "screenspot", "guiowl15", tmp_path / "screenspot_test.jsonl")
    assert data["unparseable"]["count"] == 0 and data["metrics"]["overall"] == 1.0, data
    rows = _gold_rows({"no_space": "[5,5]", "call": call % (50, 50)}, [4, 4, 10, 10], size=(1000, 1000))
    data = _eval(rows, "screenspot", "guiowl15", tmp_path / "again" / "screenspot_test.jsonl")
    assert data["metrics"]["overall"] == 0.0, data


def test_guiowl15_refusal_is_a_click_at_the_origin_under_osworld_g(tmp_path):
    """Issue 51: the benchmark's evaluator decides what a refusal is. GUI-Owl-1.5's script turns its terminate
    (status failure) into [0, 0] (eval_grounding_benchmarks.py:402-410) and OSWorld-G's evaluator counts only a
    point with negative coordinates as a refusal, so the literal reading scores that answer as a click at the
    origin: a miss on the refusal row, and a hit only where the gold region holds (0, 0). ``--reading tolerant``
    keeps it a refusal."""
    base = {"group": "refusal", "ui_type": "text", "image_size": [1000, 500], "instruction": "open it",
            "resize": {"resized_size": [1024, 512]}, "pred": REFUSALS["guiowl15"]}
    rows = [{**base, "id": "absent", "gt_action": "impossible", "gt_bbox": [-1.0, -1.0]},
            {**base, "id": "origin", "gt_action": "click", "gt_bbox": [0.0, 0.0, 20.0, 20.0], "group": "text_matching"}]
    read = {r["id"]: reparse_row(r, get_preset("guiowl15"), "osworld_g") for r in rows}
    assert [(r["pred_action"], r["pred_coord"]) for r in read.values()] == [("click", [0.0, 0.0])] * 2
    assert reparse_row(rows[0], get_preset("guiowl15"), "osworld_g", "tolerant")["pred_action"] == "impossible"
    data = _eval(rows, "osworld_g", "guiowl15", tmp_path / "osworld_g_test.jsonl")
    assert data["unparseable"]["count"] == 0 and data["metrics"]["refusal"] == 0.0, data
    assert data["counts"]["hits"] == 1 and data["metrics"]["overall"] == 0.5, data


@pytest.mark.parametrize(("preset", "refusal"), [
    ("uitars", "Action: call_user()"), ("uitars15", "Action: call_user()"), ("os_atlas", "actions:\nIMPOSSIBLE"),
    ("infigui_g1", REFUSALS["infigui_g1"]), ("step_gui", REFUSALS["step_gui"]), ("uivenus15", REFUSALS["uivenus15"])])
def test_osworld_g_refusal_is_the_official_evaluators(preset, refusal, tmp_path):
    """Issue 51 class 1: OSWorld-G's evaluator reads coordinates only. An answer without one is [0, 0, 0, 0] there
    (parse_aguvis_coordinates), and a refusal row is right only when the point has both coordinates negative
    (GroundingEval._eval). So under the authors' reading a refusal without a coordinate (call_user, IMPOSSIBLE,
    InfiGUI-G1's [], ABORT) is a click at the origin: a miss on the refusal row, a hit on a row whose gold box
    holds (0, 0); UI-Venus-1.5's [-1,-1] (a negative point) stays the refusal. ``--reading tolerant`` keeps the
    project's rule (a refusing action refuses)."""
    g = get_preset(preset).geometry(1000, 500, "osworld_g")
    base = {"ui_type": "text", "image_size": [1000, 500], "instruction": "open it", "pred": refusal,
            "resize": {"resized_size": [g.resized_width, g.resized_height]}}
    rows = [{**base, "id": "absent", "gt_action": "impossible", "gt_bbox": [-1.0, -1.0], "group": "refusal"},
            {**base, "id": "origin", "gt_action": "click", "gt_bbox": [0.0, 0.0, 20.0, 20.0], "group": "text_matching"}]
    negative = preset in OSWORLD_G_REFUSES
    read = reparse_row(rows[0], get_preset(preset), "osworld_g")
    assert read["parse_ok"] and (read["pred_action"], read["pred_coord"]) == (
        ("impossible", None) if negative else ("click", [0.0, 0.0])), read
    assert reparse_row(rows[0], get_preset(preset), "osworld_g", "tolerant")["pred_action"] == "impossible"
    data = _eval(rows, "osworld_g", preset, tmp_path / "osworld_g_test.jsonl")
    assert data["unparseable"]["count"] == 0 and data["counts"]["hits"] == 1, data
    assert data["metrics"]["refusal"] == (1.0 if negative else 0.0), data
    assert data["metrics"]["overall_no_refusal"] == (0.0 if negative else 1.0), data


def test_uivenus15_reads_integers_only_and_the_first_two(tmp_path):
    """Issue 51 class 6: UI-Venus-1.5's _parse_point reads integers only: ``[-1.0, -1.0]`` is wrong format (no
    refusal), ``[-1,-1]`` the refusal; of three numbers the first two are the point; text before the bracket is
    read. On a 1000 x 1000 screen (0-1000 = pixels)."""
    answers = {"three": "[500, 300, 7]", "text": "The target is at [500, 300].", "refusal": "[-1,-1]",
               "decimal_refusal": "[-1.0, -1.0]", "decimal": "[500.5, 300]", "box": "[490,290,510,310]"}
    rows = _gold_rows(answers, [495, 295, 505, 305], size=(1000, 1000))
    assert _verdicts(rows, "uivenus15") == {"three": [500.0, 300.0], "text": [500.0, 300.0], "refusal": None,
                                           "decimal_refusal": None, "decimal": None, "box": [500.0, 300.0]}
    read = {r["id"]: reparse_row(r, get_preset("uivenus15"), "osworld_g") for r in rows}
    assert read["refusal"]["pred_action"] == "impossible" and not read["decimal_refusal"]["parse_ok"]
    assert _verdicts(rows, "uivenus15", "tolerant")["decimal_refusal"] is None  # refusal there: no point
    assert reparse_row(rows[3], get_preset("uivenus15"), "osworld_g", "tolerant")["pred_action"] == "impossible"
    data = _eval(rows, "screenspot", "uivenus15", tmp_path / "screenspot_test.jsonl")
    # the two decimals, and the refusal (ScreenSpot's scoring lists a prediction without a point there too)
    assert data["counts"]["hits"] == 3 and data["unparseable"]["count"] == 3, data


@pytest.mark.parametrize("preset", ["guig2", "uivenus"])
def test_box_models_fall_back_to_the_origin(preset, tmp_path):
    """Issue 51 class 6: GUI-G2's README infer() and UI-Venus-Ground-7B evaluate the answer as a 4-number box and
    take [0, 0, 0, 0] when it is not one (text around it, two numbers, nothing): a click at (0, 0), which hits a
    gold box at the origin; the tolerant reading takes the box out of the text instead."""
    answers = {"text": "The element is [400,400,420,420]", "two": "[400,400]", "nothing": "", "tuple": "4,4,6,6"}
    rows = _gold_rows(answers, [0, 0, 10, 10], size=(1008, 1008), resized=(1008, 1008))
    assert _verdicts(rows, preset) == {"text": [0.0, 0.0], "two": [0.0, 0.0], "nothing": [0.0, 0.0],
                                       "tuple": [5.0, 5.0]}
    assert _verdicts(rows, preset, "tolerant")["text"] == [410.0, 410.0]
    data = _eval(rows, "screenspot", preset, tmp_path / "screenspot_test.jsonl")
    assert data["metrics"]["overall"] == 1.0 and data["unparseable"]["count"] == 0, data


def test_gta1_falls_back_to_the_origin_and_maps_by_its_scale(tmp_path):
    """Issue 51 class 6: GTA1's README converts every (x, y) with int(): a decimal anywhere, or no pair, is (0, 0);
    the first pair is the answer, mapped as x * (W / resized W)."""
    answers = {"int": "(5, 5) or (900, 900)", "decimal": "(5.5, 5)", "decimal_later": "(5, 5) (1.5, 2)", "none": "?"}
    rows = _gold_rows(answers, [0, 0, 10, 10], size=(2000, 1000), resized=(1000, 500))
    assert _verdicts(rows, "gta1") == {"int": [10.0, 10.0], "decimal": [0.0, 0.0], "decimal_later": [0.0, 0.0],
                                       "none": [0.0, 0.0]}
    assert _verdicts(rows, "gta1", "tolerant")["decimal"] == [11.0, 10.0]
    data = _eval(rows, "screenspot", "gta1", tmp_path / "screenspot_test.jsonl")
    assert data["metrics"]["overall"] == 1.0, data


def test_mai_ui_takes_the_first_unspaced_integer_pair_anywhere(tmp_path):
    """Issue 51 class 6: MAI-UI's parse_coordinates takes the first ``[x,y]`` (integers, no spaces) anywhere, with
    or without its <answer> tag; ``[x, y]`` with a space, or decimals, is wrong format."""
    answers = {"tagged": '<grounding_think>t</grounding_think><answer>\n{"coordinate": [500,300]}\n</answer>',
               "bare": "[500,300]", "first": "[500,300] then [900,900]", "spaced": '<answer>{"coordinate": [500, 300]}'
               "</answer>", "decimal": '<answer>{"coordinate": [500.0,300.0]}</answer>'}
    rows = _gold_rows(answers, [495, 295, 505, 305], size=(1000, 1000))
    assert _verdicts(rows, "mai_ui") == {"tagged": [500.0, 300.0], "bare": [500.0, 300.0], "first": [500.0, 300.0],
                                        "spaced": None, "decimal": None}
    tolerant = _verdicts(rows, "mai_ui", "tolerant")
    assert tolerant["spaced"] == [500.0, 300.0] and tolerant["bare"] is None
    data = _eval(rows, "screenspot", "mai_ui", tmp_path / "screenspot_test.jsonl")
    assert data["counts"]["hits"] == 3 and data["unparseable"]["count"] == 2, data


def test_infigui_g1_reads_the_json_after_its_think(tmp_path):
    """InfiGUI-G1's eval script: the JSON list after the last </think> (json.loads: double quotes only); ``[]`` is
    its refusal; the first point_2d is the answer."""
    answers = {"first": '<think>t</think>[{"point_2d": [500, 300]}, {"point_2d": [9, 9]}]', "refusal": "<think>t</think>[]",
               "single_quotes": "<think>t</think>[{'point_2d': [500, 300]}]"}
    rows = _gold_rows(answers, [495, 295, 505, 305], size=(1008, 1008))
    assert _verdicts(rows, "infigui_g1") == {"first": [500.0, 300.0], "refusal": None, "single_quotes": None}
    assert _verdicts(rows, "infigui_g1", "tolerant")["single_quotes"] == [500.0, 300.0]


def test_qwen3vl_point_2d_as_the_cookbook_reads_it(tmp_path):
    """Issue 51 class 7: the Qwen3-VL cookbook's decode_json_points reads the ```json part (or the whole answer)
    with json.loads, each item's point_2d as exactly [x, y], and maps int(x) / 1000 * W: 29.9 on a 1920-px screen
    is 55.68 px (the tolerant reading: 57.408), left of a box from 56 px; text around the JSON is unparseable."""
    answers = {"decimal": '[{"point_2d": [29.9, 500], "label": "menu"}]',
               "fenced": '```json\n[{"point_2d": [30, 500], "label": "menu"}]\n```',
               "text": 'The menu: [{"point_2d": [30, 500]}]', "three": '[{"point_2d": [30, 500, 1]}]'}
    rows = _gold_rows(answers, [56, 500, 80, 600])
    assert _verdicts(rows, "qwen3vl") == {"decimal": [55.68, 540.0], "fenced": [30 / 1000 * 1920, 540.0],
                                         "text": None, "three": None}
    tolerant = _verdicts(rows, "qwen3vl", "tolerant")
    assert tolerant["decimal"] == pytest.approx([57.408, 540.0]) and tolerant["text"] == pytest.approx([57.6, 540.0])
    data = _eval(rows[:2], "screenspot", "qwen3vl", tmp_path / "screenspot_test.jsonl")
    assert data["metrics"]["overall"] == 0.5 and data["data"]["reading"] == "authors", data


def _agent_rows(coords: dict[str, tuple[float, float]], size: tuple[int, int],
                template: str | None = None) -> list[dict]:
    """AndroidControl rows whose answer is the Qwen3-VL cookbook agent's: Thought, Action, one mobile_use click."""
    call = '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [%s, %s]}}'
    return [{"id": key, "instruction": "Open the menu", "gt_action": "click", "gt_bbox": [0, 0, 10, 10],
             "image_size": list(size), "pred": f"Thought: The menu.\nAction: Tap it.\n<tool_call>\n{call % xy}\n"
             "</tool_call>", **({"template": template} if template else {})} for key, xy in coords.items()]


def _navigation(rows: list[dict], reading: str = "authors") -> dict[str, list[float] | None]:
    out = {}
    for row in rows:
        got = reparse_row(row, get_preset("qwen3vl"), "androidcontrol_low", reading)
        out[row["id"]] = got["pred_coord"] if got["parse_ok"] else None
    return out


def test_qwen3vl_agent_tool_calls_map_as_the_cookbook_rescales():
    """Issue 51 class 3: the Qwen3-VL cookbook's mobile agent (QwenLM/Qwen3-VL @ 9658872 cookbooks/mobile_agent.ipynb
    cell 4 rescale_coordinates) maps a tool call's point as round(p / 999 * W) on its 999 x 999 screen: [999, 999]
    is the screen's right and bottom edge (W, H); 500 on a 1000-px screen is round(500.5005) = 501, where 0-1000
    gives 500 (a box whose right edge is 500 holds the one, not the other); Python's round is half to even (4.5 on
    111 px is 0.5 -> 0, 499.5 on 3 px is 1.5 -> 2). ``--reading tolerant`` reads the prompt's 999 grid unrounded
    (p / 999 * W, as ``infer`` maps it), and a row asked with the 0-1000 prompt (qwen3vl-mobile-use, the preset's
    navigation prompt before) k / 1000 * W under both readings."""
    rows = _agent_rows({"corner": (999, 999), "origin": (0, 0), "edge": (500, 500)}, (1080, 2400))
    rows[2]["image_size"] = [1000, 1000]
    assert _navigation(rows) == {"corner": [1080.0, 2400.0], "origin": [0.0, 0.0], "edge": [501.0, 501.0]}
    assert _navigation(rows, "tolerant") == {"corner": [1080.0, 2400.0], "origin": [0.0, 0.0],
                                             "edge": [500 / 999 * 1000, 500 / 999 * 1000]}
    halves = _agent_rows({"down": (4.5, 4.5), "up": (499.5, 499.5)}, (111, 111))
    halves[1]["image_size"] = [3, 3]
    assert _navigation(halves) == {"down": [0.0, 0.0], "up": [2.0, 2.0]}
    # the cookbook's own read: json.loads between the first "<tool_call>\n" and "\n</tool_call>"
    bad = dict(rows[0], pred='<tool_call>{"name": "mobile_use", "arguments": {"action": "click", '
               '"coordinate": [9, 9]}}</tool_call>')
    assert _navigation([bad]) == {"corner": None} and _navigation([bad], "tolerant")["corner"] is not None
    # a row asked with the 0-1000 prompt (qwen3vl-mobile-use, the preset's before) keeps its grid
    old = _agent_rows({"corner": (999, 999)}, (1080, 2400), "qwen3vl-mobile-use")
    assert _navigation(old) == _navigation(old, "tolerant") == {"corner": [999 / 1000 * 1080, 999 / 1000 * 2400]}
    assert _navigation(_agent_rows({"corner": (999, 999)}, (1080, 2400), "qwen3vl-mobile-agent")) == {
        "corner": [1080.0, 2400.0]}
    # grounding answers keep the grounding cookbook's 0-1000 reading
    assert _verdicts(_gold_rows({"g": rows[0]["pred"]}, [0, 0, 1, 1]), "qwen3vl") == {
        "g": [999 / 1000 * 1920, 999 / 1000 * 1080]}


def test_uitars15_maps_as_its_action_parser_rounding_to_three_decimals(tmp_path):
    """UI-TARS' action_parser.py (model_type qwen25vl): the point divided by the smart-resized size, then
    round(x * W, 3): on a 1920 x 1080 screen (resized 1932 x 1092) 100 is round(100 / 1932 * 1920, 3) = 99.379
    px, inside a box from 99.3789 (the exact 99.37888 is left of it: the tolerant reading misses); 99 misses."""
    rows = _gold_rows({"edge": "Thought: The menu.\nAction: click(point='<point>100 540</point>')",
                       "box": "Action: click(start_box='(100,540)')", "left": "Action: click(start_box='(99,540)')"},
                      [99.3789, 500, 120, 600], resized=(1932, 1092))
    got = _verdicts(rows, "uitars15")
    assert got["edge"] == got["box"] == [99.379, 534.066] and got["left"] == [98.385, 534.066], got
    assert _verdicts(rows, "uitars15", "tolerant")["edge"] == pytest.approx([99.37888, 534.06593])
    data = _eval(rows, "screenspot", "uitars15", tmp_path / "screenspot_test.jsonl")
    assert data["counts"]["hits"] == 2 and data["unparseable"]["count"] == 0, data


@pytest.mark.parametrize("preset", ["uitars", "uitars15"])
def test_uitars_formats_as_its_action_parser_reads_them(preset):
    """action_parser.py's parse_action_to_structure_output: ``Action:`` is required (a bare point fails its
    assert), the text after ``Action: `` is Python-parsed, ``<point>x y</point>`` of integers only, a box of 2 or 4
    float() numbers, arguments that are strings, a function name exactly as its action space writes it, several
    actions split at ``)`` and a blank line; 1.0 answers on 0-1000 (numbers / 1000), 1.5 in resized pixels."""
    answers = {"ok": "Thought: t\nAction: click(start_box='<|box_start|>(500,500)<|box_end|>')",
               "bare": "(500,500)", "no_space": "Action:click(start_box='(500,500)')",
               "bbox": "Action: click(start_box='<bbox>490 490 510 510</bbox>')",
               "three": "Action: click(start_box='(5,5,5)')",
               "decimal_point": "Action: click(point='<point>500.5 500</point>')",
               "float_box": "Action: click(start_box='(500.5,500)')",
               "capital": "Action: Click(start_box='(500,500)')", "not_string": "Action: click(start_box=(500, 500))",
               "two": "Action: click(start_box='(500,500)')\n\nfinished(content='done')",
               "exponent": "Action: click(start_box='(5e2, 500)')"}
    rows = _gold_rows(answers, [0, 0, 10, 10], size=(1000, 1000), resized=(1000, 1000))
    bare = [500.0, 500.0] if preset == "uitars" else None  # 1.0's grounding answer (README_v1.md:320, :452-457)
    assert _verdicts(rows, preset) == {"ok": [500.0, 500.0], "bare": bare, "no_space": None, "bbox": None,
                                       "three": None, "decimal_point": None, "float_box": [500.5, 500.0],
                                       "capital": None, "not_string": None, "two": [500.0, 500.0],
                                       "exponent": [500.0, 500.0]}
    tolerant = _verdicts(rows, preset, "tolerant")
    assert tolerant["no_space"] == tolerant["bbox"] == tolerant["capital"] == [500.0, 500.0], tolerant


def test_uitars10_bare_grounding_point_maps_as_its_readme(tmp_path):
    """UI-TARS 1.0's grounding prompt (README_v1.md:320) asks for the point alone, no ``Action:``; the README maps
    it round(W * x / 1000) (:452-457: (235, 512) on 1920 x 1080 is (451, 553)). A gold box from 451.1 px is missed
    by that integer (the unrounded 451.2 would hit) and hit from 451; anything but exactly ``(x, y)`` of integers
    is read as action_parser.py reads it (no ``Action:``: unparseable). The tolerant reading wants ``Action:``."""
    answers = {"readme": "(235, 512)", "tokens": "<|box_start|>(235,512)<|box_end|>", "decimal": "(235.0, 512)",
               "text": "The point is (235, 512)", "action": "Action: click(start_box='(235,512)')"}
    got = _verdicts(_gold_rows(answers, [451.1, 500, 480, 600]), "uitars")
    assert got == {"readme": [451.0, 553.0], "tokens": [451.0, 553.0], "decimal": None, "text": None,
                   "action": [451.2, 552.96]}, got
    assert _verdicts(_gold_rows({"readme": "(235, 512)"}, [0, 0, 1, 1]), "uitars", "tolerant") == {"readme": None}
    for left, hits in ((451.1, 1), (451.0, 3)):
        rows = _gold_rows({k: answers[k] for k in ("readme", "tokens", "action")}, [left, 500, 480, 600])
        data = _eval(rows, "screenspot", "uitars", tmp_path / str(left) / "screenspot_test.jsonl")
        assert data["counts"]["hits"] == hits and data["unparseable"]["count"] == 0, data


def test_seeclick_reads_as_its_screenspot_script(tmp_path):
    """SeeClick's screenspot_test.py: ``box`` anywhere sends the answer to extract_bbox (``<box>(x1,y1),(x2,y2)
    </box>`` of integers, no spaces: the centre / 1000), else pred_2_point reads every number of the text: 2 the
    point, 4 the centre, other counts wrong format. ``.5`` is read as 5 (its pattern needs a digit first)."""
    answers = {"point": "(0.49,0.40)", "box": "<box>(480,390),(500,410)</box>",
               "spaced": "<box>(480, 390),(500,410)</box>", "checkbox": "The checkbox at (0.49,0.40)",
               "four": "(0.48,0.39) to (0.50,0.41)", "three": "(0.49,0.40,1)", "leading_dot": "(.49,.40)",
               "words": "Click at x 0.49, y 0.40 of screen 1"}
    rows = _gold_rows(answers, [930, 420, 950, 440])
    got = _verdicts(rows, "seeclick")
    assert got == {"point": [0.49 * 1920, 0.40 * 1080], "box": [0.49 * 1920, 0.40 * 1080], "spaced": None,
                   "checkbox": None, "four": pytest.approx([0.49 * 1920, 0.40 * 1080]), "three": None,
                   "leading_dot": [49 * 1920, 40 * 1080], "words": None}, got
    tolerant = _verdicts(rows, "seeclick", "tolerant")
    assert tolerant["spaced"] == pytest.approx([0.49 * 1920, 0.40 * 1080]) == tolerant["checkbox"]
    data = _eval(rows, "screenspot", "seeclick", tmp_path / "screenspot_test.jsonl")
    assert data["counts"]["hits"] == 3 and data["unparseable"]["count"] == 4, data


def test_qwen25vl_bbox_2d_as_its_cookbook_reads_and_truncates_it(tmp_path):
    """The Qwen2.5-VL spatial-understanding cookbook: the ```json fence (a line of its own) stripped, the rest a
    Python literal (else cut after its last '"}' and closed with ']'), every item's bbox_2d, each corner
    int(x / resized W * W). On 1920 x 1080 (resized 1932 x 1092) [100, 200, 120, 220] is the box 99..119 x
    197..217 px, centre (109, 207): left of a gold box from 109.2 (the tolerant reading's 109.317 hits)."""
    answers = {"fenced": '```json\n[{"bbox_2d": [100, 200, 120, 220], "label": "menu"}]\n```',
               "cut": '[{"bbox_2d": [100, 200, 120, 220], "label": "menu"}, {"bbox_2d": [1, 2, 3, 4], "label": "x"',
               "text": 'The menu: [{"bbox_2d": [100, 200, 120, 220]}]', "point": '[{"point_2d": [110, 210]}]',
               "object": '{"bbox_2d": [100, 200, 120, 220]}'}
    rows = _gold_rows(answers, [109.2, 150, 140, 250], resized=(1932, 1092))
    assert _verdicts(rows, "qwen25vl") == {"fenced": [109.0, 207.0], "cut": [109.0, 207.0], "text": None,
                                           "point": None, "object": None}
    tolerant = _verdicts(rows, "qwen25vl", "tolerant")
    assert tolerant["fenced"] == pytest.approx([110 * 1920 / 1932, 210 * 1080 / 1092]) and tolerant["text"]
    data = _eval(rows[:1], "screenspot", "qwen25vl", tmp_path / "screenspot_test.jsonl")
    assert data["metrics"]["overall"] == 0.0 and data["unparseable"]["count"] == 0, data


def test_aguvis_grounding_as_vlmevalkit_reads_it(tmp_path):
    """Aguvis publishes no evaluation code; VLMEvalKit's parse_bbox_aguvis decides its grounding answers: the first
    ``x=.., y=..`` (one space), float() of each, none the point (0.0, 0.0); a coordinate above 1 means pixels.
    Navigation rows keep the tolerant reading (the rule is a grounding harness's)."""
    answers = {"fraction": "pyautogui.click(x=0.49, y=0.40)", "pixels": "pyautogui.click(x=941, y=432)",
               "no_space": "pyautogui.click(x=0.49,y=0.40)", "nothing": "I cannot find it.",
               "dots": "pyautogui.click(x=0.4.9, y=0.40)"}
    rows = _gold_rows(answers, [0, 0, 10, 10])
    assert _verdicts(rows, "aguvis") == {"fraction": [0.49 * 1920, 0.40 * 1080], "pixels": [941.0, 432.0],
                                         "no_space": [0.0, 0.0], "nothing": [0.0, 0.0], "dots": None}
    tolerant = _verdicts(rows, "aguvis", "tolerant")
    assert tolerant["no_space"] == pytest.approx([0.49 * 1920, 0.40 * 1080]) and tolerant["nothing"] is None
    data = _eval(rows, "screenspot", "aguvis", tmp_path / "screenspot_test.jsonl")
    assert data["counts"]["hits"] == 2 and data["unparseable"]["count"] == 1, data
    back = {"pred": "mobile.back()", "image_size": [1080, 2400]}
    assert reparse_row(back, get_preset("aguvis"), "androidcontrol_low")["pred_action"] == "press_back"
    assert reparse_row(back, get_preset("aguvis"), "screenspot")["pred_coord"] == [0.0, 0.0]


def test_reports_name_the_reading_and_only_the_authors_reading_reproduces(tmp_path):
    """The two readings (issue 51 "What to build"): ``--reading authors`` is the default, ``tolerant`` the named
    second mode; the result's ``data.reading`` and the table title say which produced the numbers, and
    ``eval-compare --official`` calls a tolerant run not comparable (never reproduced)."""
    rows = _gold_rows({"hit": '<answer>{"coordinate": [500,300]}</answer>'}, [495, 295, 505, 305], size=(1000, 1000))
    path = tmp_path / "screenspot_v2_test.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n")
    for reading in ("authors", "tolerant"):
        report = tmp_path / f"{reading}.json"
        extra = [] if reading == "authors" else ["--reading", reading]
        res = runner.invoke(app, ["eval", "--predictions", str(path), "--benchmark", "screenspot_v2", "--preset",
                                  "mai_ui", "--json", str(report), *extra])
        assert res.exit_code == 0 and f"preset mai_ui, {reading} reading" in res.output, res.output
        data = json.loads(report.read_text())
        assert data["data"]["reading"] == reading and data["metrics"]["overall"] == 1.0
        res = runner.invoke(app, ["eval-compare", str(report), "--official"])
        assert res.exit_code == 0, res.output
        assert ("not comparable" in res.output) == (reading == "tolerant"), res.output
        assert (" yes " in res.output) == (reading == "authors"), res.output
    res = runner.invoke(app, ["eval", "--predictions", str(path), "--benchmark", "screenspot_v2", "--preset", "mai_ui",
                              "--reading", "loose"])
    assert res.exit_code == 2 and "--reading 'loose': unknown" in res.output, res.output


def test_authors_readings_never_raise_or_hang():
    """Model text is untrusted: every authors' reading returns a result (a reason when it fails) on hostile input,
    quickly (no eval(), bounded regexes; the longest here is 60,000 characters)."""
    import time

    from core.authors import AUTHORS

    hostile = ["(" + "1" * 60000, "(" * 60000, "[" + "1," * 30000, "<THINK>" * 9000, "\t:point:" * 8000,
               "(" + "1" * 5000 + ", 2)", "[" + "9" * 5000 + ",1]", "point_2d " + "[" * 30000, "(" + "1." * 30000 + ", 2)",
               "[{\"point_2d\": [1e999, 2]}]", "[NaN, 1, 2, 3]", "__import__('os').system('true')", "\x00\ud800", ""]
    started = time.perf_counter()
    for name, reading in AUTHORS.items():
        for text in hostile:
            result = reading.parse(text)
            assert result.ok or result.error, (name, text[:40])
    assert time.perf_counter() - started < 20
    row = {"pred": '[{"point_2d": [1e999, 2]}]', "image_size": [100, 100]}
    assert "not finite" in reparse_row(row, get_preset("qwen3vl"), "screenspot")["parse_error"]
