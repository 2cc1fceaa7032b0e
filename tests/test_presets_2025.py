"""The 2025-26 grounding presets (issue 39): GUI-G2, UI-Venus (1.0 Ground, 1.5), GTA1, InfiGUI-G1, GUI-Owl-1.5,
MAI-UI and Step-GUI (GELab-Zero). ``infer --dry-run`` sends each model's published prompt (system message, image /
text order), its generation settings and its resize; ``eval --preset`` scores answers written by hand in each
model's own format and frame (hit at the gold centre, miss far away, the refusal a parsed miss) on real ScreenSpot
rows; ``eval-compare --official`` puts a run beside the published numbers; docs/presets.md holds the table
:func:`core.presets.official_markdown` writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.cli import app
from core.geometry import Frame, ImageGeometry, budget_resize, smart_resize
from core.parsers import REFUSAL_ACTION, parse_action
from core.presets import (
    OFFICIAL_RESULTS,
    OFFICIAL_SOURCES,
    REPRODUCED_WITHIN,
    compare_official,
    get_preset,
    official_markdown,
    published_metric,
    reparse_row,
)

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]
NEW = ("guig2", "uivenus", "uivenus15", "gta1", "infigui_g1", "guiowl15", "mai_ui", "step_gui")

# Each model's answer for a click at (x, y) of its own frame, written as the model writes it (the examples and
# parsers of the authors' scripts named in core.presets).
ANSWERS = {
    "guig2": lambda x, y: f"[{x - 3},{y - 2},{x + 3},{y + 2}]",
    "uivenus": lambda x, y: f"[{x - 6},{y - 4},{x + 6},{y + 4}]",
    "uivenus15": lambda x, y: f"[{x},{y}]",
    "gta1": lambda x, y: f"({x},{y})",
    "infigui_g1": lambda x, y: f'<think>The search box is at the top.</think>\n[{{"point_2d": [{x}, {y}]}}]',
    "guiowl15": lambda x, y: ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", '
                              f'"coordinate": [{x}, {y}]}}}}\n</tool_call>'),
    "mai_ui": lambda x, y: ("<grounding_think>The icon in the toolbar.</grounding_think>\n<answer>\n"
                            f'{{"coordinate": [{x},{y}]}}\n</answer>'),
    "step_gui": lambda x, y: f"<THINK> tap it </THINK>\nexplain:tap it\taction:CLICK\tpoint:{x},{y}\tsummary:tapped",
}
# How each model says the target is not there (None: its prompt has no refusal form).
REFUSALS = {
    "guig2": None, "uivenus": None, "gta1": None, "mai_ui": None,
    "uivenus15": "[-1,-1]",
    "infigui_g1": "<think>No such element on this screen.</think>\n[]",
    "guiowl15": '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}\n'
                "</tool_call>",
    "step_gui": "<THINK> not on the screen </THINK>\nexplain:absent\taction:ABORT\tvalue:no such element",
}
#: Presets whose authors' code turns the model's refusal into a click at (0, 0) (GUI-Owl-1.5's script: a terminate
#: has no coordinate, so [0, 0]; issue 51): a refusal only under ``--reading tolerant``.
REFUSAL_READ_AS_ORIGIN = ("guiowl15",)
#: Presets whose refusal OSWorld-G's evaluator counts under the authors' reading: only a point with both coordinates
#: negative is a refusal there (GroundingEval._eval), and an answer without a coordinate is a click at the origin
#: (parse_aguvis_coordinates' [0, 0, 0, 0]); UI-Venus-1.5's [-1,-1] is the only refusal that is such a point.
OSWORLD_G_REFUSES = ("uivenus15",)
#: InfiGUI-G1's first resize step (eval/eval.py:41-44): the screenshot scaled to 5600 image tokens, then smart_resize.
PRESCALE = {"infigui_g1": 5600 * 28 * 28}
# The published settings (docs/presets.md): template, max new tokens, min / max pixels, patch factor.
SETTINGS = {
    "guig2": ("guig2-grounding", 128, 3136, 12_845_056, 28),
    "uivenus": ("uivenus-grounding", 128, 2_000_000, 4_800_000, 28),
    "uivenus15": ("uivenus15-grounding", 256, 3136, 12_845_056, 32),
    "gta1": ("gta1-grounding", 32, 3136, 4096 * 2160, 28),
    "infigui_g1": ("infigui-g1-grounding", 1024, 3136, 12_845_056, 28),  # after its 5600-token budget (PRESCALE)
    "guiowl15": ("guiowl15-grounding", 2048, 196 * 32 * 32, 9800 * 32 * 32, 32),
    "mai_ui": ("mai-ui-grounding", 256, 1024, 6_553_600, 32),
    "step_gui": ("gelab-zero-mobile", 512, 65_536, 16_777_216, 32),
}


@pytest.fixture(scope="module")
def screenspot(shared_data, tmp_path_factory) -> Path:
    """The ScreenSpot rows of ../shared/data whose screenshots are there (web, 2560x1440), as a unified file."""
    from core.data.cli import run_convert

    out = tmp_path_factory.mktemp("ss")
    written, _ = run_convert("screenspot", "unified", shared_data / "screenspot" / "screenspot_v1_annotations.jsonl",
                             out / "conv", images_dir=shared_data / "screenspot" / "images", skip_missing=True)
    return Path(written).rename(out / "screenspot_test.parquet")


def _dry_run(screenspot: Path, preset: str, tmp_path: Path) -> list[dict]:
    res = runner.invoke(app, ["infer", "--backend", "hf", "--model", "m", "--input", str(screenspot), "--output",
                              str(tmp_path / "never.json"), "--preset", preset, "--dry-run"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    assert rows and not (tmp_path / "never.json").exists()
    return rows


@pytest.mark.parametrize("preset", NEW)
def test_dry_run_sends_the_published_settings(preset, screenspot, tmp_path):
    template, tokens, low, high, factor = SETTINGS[preset]
    for r in _dry_run(screenspot, preset, tmp_path):
        assert r["template"] == template and r["error"] is None, r
        w, h = r["image_size"]
        if preset in PRESCALE:
            w, h = budget_resize(w, h, PRESCALE[preset])
        rh, rw = smart_resize(h, w, factor=factor, min_pixels=low, max_pixels=high)
        assert r["resized_size"] == [rw, rh] and r["resize"].get("prescale_max_pixels") == PRESCALE.get(preset)
        assert (r["resize"]["min_pixels"], r["resize"]["max_pixels"], r["resize"]["factor"]) == (low, high, factor)
        assert r["generation"]["max_new_tokens"] == tokens and r["generation"]["temperature"] == 0.0
        assert "".join(m["content"] for m in r["messages"]).count("<image>") == 1


def _messages(screenspot: Path, preset: str, tmp_path: Path) -> tuple[dict, list[dict]]:
    """The first dry-run row, its messages, and (as ``row["instruction"]``) the instruction of that step."""
    from core.inference.bench import iter_benchmark

    r = _dry_run(screenspot, preset, tmp_path)[0]
    (step,) = [s for s in iter_benchmark(screenspot) if s.id == r["id"]]
    return {**r, "instruction": step.instruction}, r["messages"]


def test_dry_run_guig2_and_uivenus_ground(screenspot, tmp_path):
    """GUI-G2 and UI-Venus-Ground-7B: no system message, the screenshot, then prompt_origin."""
    for preset in ("guig2", "uivenus"):
        r, messages = _messages(screenspot, preset, tmp_path)
        (user,) = messages
        assert user["role"] == "user"
        assert user["content"] == ("<image>Outline the position corresponding to the instruction: "
                                   f"{r['instruction']}. The output should be only [x1,y1,x2,y2].")


def test_dry_run_uivenus15_drops_the_final_period(screenspot, tmp_path):
    """UI-Venus-1.5's refusal prompt, screenshot first; its script drops one final '.' of the instruction."""
    from core.inference.bench import iter_benchmark
    from core.prompts import get_template

    r, (user,) = _messages(screenspot, "uivenus15", tmp_path)
    text = ("Output the center point of the position corresponding to the following instruction: \n{}. \n\nThe "
            "output should just be the coordinates of a point, in the format [x,y]. Additionally, if the task is "
            "infeasible (e.g., the task is not related to the image), the output should be [-1,-1].")
    assert user["content"] == "<image>" + text.format(r["instruction"].removesuffix("."))
    step = next(iter(iter_benchmark(screenspot)))
    step = step.model_copy(update={"instruction": "open the menu."})
    (rendered,) = get_template("uivenus15-grounding").render(step, ImageGeometry.unresized(*step.image_size))
    assert "\nopen the menu. \n\n" in rendered["content"]


def test_dry_run_gta1_states_the_resized_size(screenspot, tmp_path):
    r, (system, user) = _messages(screenspot, "gta1", tmp_path)
    rw, rh = r["resized_size"]
    assert system == {"role": "system", "content": (
        "You are an expert UI element locator. Given a GUI image and a user's element description, provide the "
        "coordinates of the specified element as a single (x,y) point. The image resolution is height "
        f"{rh} and width {rw}. For elements with area, return the center point.\n\nOutput the coordinate pair "
        "exactly:\n(x,y)")}
    assert user == {"role": "user", "content": "<image>" + r["instruction"]}


def test_dry_run_infigui_g1(screenspot, tmp_path):
    r, (system, user) = _messages(screenspot, "infigui_g1", tmp_path)
    rw, rh = r["resized_size"]
    assert system["content"] == ("You FIRST think about the reasoning process as an internal monologue and then "
                                 "provide the final answer.\nThe reasoning process MUST BE enclosed within <think> "
                                 "</think> tags.")
    assert user["content"] == (f"<image>The screen's resolution is {rw}x{rh}.\nLocate the UI element(s) for "
                               f"\"{r['instruction']}\", output the coordinates using JSON format: "
                               '[{"point_2d": [x, y]}, ...]')


def test_dry_run_guiowl15_and_its_osworld_g_refusal_prompt(screenspot, tmp_path):
    """GUI-Owl-1.5: the computer_use tool system message, the screenshot, the instruction; on OSWorld-G the
    system message also says how to refuse (the benchmark name is taken as given, registered or not)."""
    r, (system, user) = _messages(screenspot, "guiowl15", tmp_path)
    assert system["content"].startswith("# Tools\n\nYou may call one or more functions to assist with the user query.")
    assert "* The screen's resolution is 1000x1000.\n" in system["content"]
    assert system["content"].endswith("<tool_call>\n{\"name\": <function-name>, \"arguments\": "
                                      "<args-json-object>}\n</tool_call>\n")
    assert user["content"] == "<image>" + r["instruction"]
    preset = get_preset("guiowl15")
    assert preset.template_for("osworld_g") == "guiowl15-grounding-refusal"
    from core.prompts import get_template

    refusing = get_template("guiowl15-grounding-refusal").system
    assert refusing == system["content"] + "\nAdditionally, if you think the task is infeasible (e.g., the task is " \
        "not related to the image), return <tool_call>\n{\"name\": \"computer_use\", \"arguments\": {\"action\": " \
        "\"terminate\", \"status\": \"failure\"}}\n</tool_call>"


def test_dry_run_mai_ui_text_before_image(screenspot, tmp_path):
    r, (system, user) = _messages(screenspot, "mai_ui", tmp_path)
    assert system["content"].startswith("You are a GUI grounding agent. \n## Task\n")
    assert system["content"].endswith("</answer>\n## Input instruction\n")
    assert user["content"] == r["instruction"] + "\n<image>"


def test_dry_run_step_gui_is_gelab_zeros_agent_prompt(screenspot, tmp_path):
    r, (user,) = _messages(screenspot, "step_gui", tmp_path)
    text = user["content"]
    assert text.startswith("你是一个手机 GUI-Agent 操作专家") and "取值范围均为 0-1000" in text
    assert f"\n已知用户任务为：{r['instruction']}\n已知已经执行过的历史动作如下：暂无历史操作\n当前手机屏幕截图如下：\n<image>\n" in text
    assert text.endswith("explain:解释的内容\taction:动作空间和对应的参数\tsummary:执行完当前步骤后的新历史总结\n")


# ------------------------------------------------------------------------------------------------ eval --preset

def _far(box: list[float], w: int, h: int) -> tuple[float, float]:
    """A point in the screen's corner farthest from the gold box (ORIGINAL pixels), outside the box."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    x, y = (0.03 * w if cx > w / 2 else 0.97 * w), (0.03 * h if cy > h / 2 else 0.97 * h)
    assert not (box[0] <= x <= box[2] and box[1] <= y <= box[3])
    return x, y


def _written(preset: str, row: dict, xy: tuple[float, float]) -> str:
    """``ANSWERS[preset]`` at ORIGINAL point ``xy`` in the preset's frame, with the row's recorded resize."""
    p = get_preset(preset)
    (w, h), (rw, rh) = row["image_size"], row["resize"]["resized_size"]
    x, y = ImageGeometry(w, h, rw, rh).point(xy, Frame.ORIGINAL, p.frame)
    return ANSWERS[preset](round(x), round(y))


def _scored(screenspot: Path, tmp_path: Path, preset: str, hit_every: int, extra: list[str] = ()) -> tuple[list, dict]:
    """``eval --preset`` on the ScreenSpot rows as infer writes them (centre baseline, the preset's resize
    recorded), their raw answers replaced by hand-written ones: the gold centre (hit) on every ``hit_every``-th
    row, the far corner (miss) on the others, then one row per ``extra`` answer (a copy of the first row). Returns
    the rows and the ``--json`` report (its path under ``"path"``)."""
    out = tmp_path / "screenspot_test.json"
    res = runner.invoke(app, ["infer", "--backend", "baseline", "--model", "centre", "--input", str(screenspot),
                              "--output", str(out), "--preset", preset])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    for i, row in enumerate(rows):
        box, (w, h) = row["gt_bbox"], row["image_size"]
        xy = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2) if i % hit_every == 0 else _far(box, w, h)
        row["pred"] = _written(preset, row, xy)
    rows += [{**rows[0], "id": f"extra{i}", "pred": text} for i, text in enumerate(extra)]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = tmp_path / "run.json"
    res = runner.invoke(app, ["eval", "--predictions", str(out), "--benchmark", "screenspot", "--preset", preset,
                              "--json", str(report)])
    assert res.exit_code == 0, res.output
    return rows, {**json.loads(report.read_text()), "path": str(report)}


@pytest.mark.parametrize("preset", NEW)
def test_eval_preset_on_answers_in_the_models_format(preset, screenspot, tmp_path):
    """Hits on even rows, misses on odd rows, and the model's refusal on a copy of the first row: a miss that is
    parsed (the action ``impossible``, no point), never a parse error."""
    refusal = REFUSALS[preset]
    rows, data = _scored(screenspot, tmp_path, preset, 2, [refusal] if refusal is not None else [])
    original = len(rows) - (refusal is not None)
    assert data["counts"]["hits"] == (original + 1) // 2 and data["counts"]["n"] == len(rows), data["counts"]
    # ScreenSpot's scorer lists a prediction without a point (the refusal) with the unparseable rows: never as a
    # parse error; GUI-Owl-1.5's refusal is its script's click at (0, 0) (a miss with a point)
    refuses = refusal is not None and preset not in REFUSAL_READ_AS_ORIGIN
    assert data["unparseable"]["count"] == refuses
    assert not any("parse error" in e["reason"] for e in data["unparseable"]["examples"]), data["unparseable"]
    if refusal is not None:
        scored = reparse_row(rows[-1], get_preset(preset), "screenspot")
        expected = (REFUSAL_ACTION, None) if refuses else ("click", [0.0, 0.0])
        assert scored["parse_ok"] and (scored["pred_action"], scored["pred_coord"]) == expected, scored


@pytest.mark.parametrize("preset", [p for p in NEW if REFUSALS[p] is not None])
def test_refusal_is_parsed_as_a_refusal(preset):
    r = parse_action(REFUSALS[preset], fmt=get_preset(preset).parser)
    assert r.ok, r.error
    action = r.action.to_action(ImageGeometry.unresized(1000, 500), get_preset(preset).frame)
    assert action.type == REFUSAL_ACTION and action.point is None


@pytest.mark.parametrize("reading", ["authors", "tolerant"])
@pytest.mark.parametrize("preset", [p for p in NEW if REFUSALS[p] is not None])
def test_refusal_scores_on_osworld_gs_refusal_rows(preset, reading, tmp_path):
    """On OSWorld-G a refusal row is hit by the model's refusal and missed by a click; a row with a target, the
    other way round. Under the authors' reading only a refusal with negative coordinates (UI-Venus-1.5's [-1,-1])
    is one for OSWorld-G's evaluator; a refusal without a coordinate (InfiGUI-G1's [], GUI-Owl-1.5's terminate,
    Step-GUI's ABORT) reaches it as a click at the origin, so it misses the refusal row too (issue 51)."""
    base = {"gt_input_text": "no input text", "group": "text_matching", "ui_type": "text", "image_size": [1000, 500],
            "instruction": "open it", "resize": {"resized_size": [1000, 500]}}
    absent = {**base, "gt_action": "impossible", "gt_bbox": [-100.0, -100.0]}
    present = {**base, "gt_action": "click", "gt_bbox": [100.0, 100.0, 300.0, 200.0]}
    xy = ImageGeometry(1000, 500, 1000, 500).point((200, 150), Frame.ORIGINAL, get_preset(preset).frame)
    click = ANSWERS[preset](round(xy[0]), round(xy[1]))
    rows = [{**absent, "id": "refused", "pred": REFUSALS[preset]}, {**absent, "id": "clicked", "pred": click},
            {**present, "id": "hit", "pred": click}, {**present, "id": "refused-here", "pred": REFUSALS[preset]}]
    pred = tmp_path / "osworld_g_test.json"
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = runner.invoke(app, ["eval", "--predictions", str(pred), "--benchmark", "osworld_g", "--preset", preset,
                              "--reading", reading, "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "r.json").read_text())
    refuses = reading == "tolerant" or preset in OSWORLD_G_REFUSES
    assert data["counts"]["hits"] == 1 + refuses and data["counts"]["n"] == 4, data
    assert data["unparseable"]["count"] == 0 and data["metrics"]["refusal"] == (0.5 if refuses else 0.0), data


@pytest.mark.parametrize("preset", NEW)
def test_a_point_is_not_a_refusal(preset):
    """The refusal sentinel is that exact answer: a click near the top-left corner stays a click."""
    r = parse_action(ANSWERS[preset](1, 2), fmt=get_preset(preset).parser)
    assert r.ok and r.action.to_action(ImageGeometry.unresized(1000, 500), get_preset(preset).frame).type == "click"


@pytest.mark.parametrize("preset, text, reason", [
    ("guig2", "I think it is the blue button", "no [..] coordinates"),
    ("uivenus15", "[1,2,3]", "2 or 4 numbers"),
    ("infigui_g1", '<think>t</think>[{"bbox": [1, 2]}]', "no 'point_2d'"),
    ("mai_ui", "<grounding_think>t</grounding_think>", "no <answer> tag"),
    ("mai_ui", '<answer>{"point": [1,2]}</answer>', "no 'coordinate'"),
    ("step_gui", "<THINK> t </THINK>\naction:INFO\tvalue:which one?", "no GELab action"),
    ("step_gui", "action:CLICK\tpoint:0x1A,5", "is not a decimal number"),
])
def test_unparseable_answers_name_the_reason(preset, text, reason):
    r = parse_action(text, fmt=get_preset(preset).parser)
    assert not r.ok and reason in r.error, r.error


# ------------------------------------------------------------------------------------------------ official numbers

def test_official_numbers_are_sourced_and_docs_table_is_generated():
    """Every published number names its source and a known preset; docs/presets.md holds the generated table."""
    assert {r.preset for r in OFFICIAL_RESULTS} == set(NEW)
    for r in OFFICIAL_RESULTS:
        assert r.source in OFFICIAL_SOURCES and 0 < r.value <= 100, r
    keys = [(r.model, r.benchmark) for r in OFFICIAL_RESULTS]
    assert len(keys) == len(set(keys))
    page = (REPO / "docs" / "presets.md").read_text(encoding="utf-8")
    table = page.split("<!-- official-results -->\n", 1)[1].split("<!-- /official-results -->", 1)[0]
    assert table == official_markdown()


@pytest.mark.parametrize("hit_every", [1, 2])
def test_eval_compare_official(hit_every, screenspot, tmp_path):
    """A GUI-G2 run on ScreenSpot beside GUI-G2-7B's published 92.0: the run's accuracy, the difference and
    whether it counts as reproduced (at most 2 points below)."""
    _, data = _scored(screenspot, tmp_path, "guig2", hit_every)
    report, accuracy = data["path"], 100 * data["metrics"]["overall"]
    md = tmp_path / "official.md"
    res = runner.invoke(app, ["eval-compare", str(report), "--official", "--markdown", str(md)])
    assert res.exit_code == 0, res.output
    (published,) = [r for r in OFFICIAL_RESULTS if r.preset == "guig2" and r.benchmark == "screenspot"]
    (line,) = [ln for ln in res.output.splitlines() if "GUI-G2-7B" in ln]
    cells = [c.strip() for c in line.strip("|").split("|")]
    reproduced = accuracy >= published.value - REPRODUCED_WITHIN
    assert cells[:6] == ["ScreenSpot", "GUI-G2-7B", f"{published.value:.1f}", f"{accuracy:.2f}",
                         f"{accuracy - published.value:+.2f}", "yes" if reproduced else "no"]
    assert cells[6] == OFFICIAL_SOURCES[published.source] and cells[7] == "`overall`"
    assert md.read_text() == res.output.rstrip("\n")


def test_eval_compare_official_needs_a_preset_run(screenspot, tmp_path):
    _, data = _scored(screenspot, tmp_path, "gta1", 1)
    report = data.pop("path")
    data["data"].pop("preset")
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(data))
    res = runner.invoke(app, ["eval-compare", str(bare), "--official"])
    assert res.exit_code == 2 and "was not scored with --preset" in res.output
    res = runner.invoke(app, ["eval-compare", str(report)])
    assert res.exit_code == 2 and "a second run or --official" in res.output
    res = runner.invoke(app, ["eval-compare", str(report), "--official"])  # GTA1 publishes no ScreenSpot (v1) number
    assert res.exit_code == 0 and "no published number" in res.output


_RUN = {"name": "mine", "mode": "strict", "results": {"osworld_g": {
    "benchmark": "osworld_g", "metrics": {"overall": 0.40, "overall_no_refusal": 0.55}, "data": {"preset": "mai_ui", "reading": "authors"}}}}
_RESULT = _RUN["results"]["osworld_g"]


@pytest.mark.parametrize(("report", "field"), [
    ([_RUN], None),                                                                  # not an object
    ({**_RUN, "results": [_RESULT]}, "'results'"),
    ({**_RUN, "results": {"osworld_g": [1]}}, "'results.osworld_g'"),
    ({**_RUN, "results": {"osworld_g": {**_RESULT, "metrics": [0.4]}}}, "'results.osworld_g.metrics'"),
    ({**_RUN, "results": {"osworld_g": {"data": {"preset": "mai_ui"}}}}, "'results.osworld_g.metrics'"),
    ({**_RUN, "results": {"osworld_g": {**_RESULT, "data": "mai_ui"}}}, "'results.osworld_g.data'"),
    ({**_RUN, "results": {"osworld_g": {**_RESULT, "data": {"preset": ["mai_ui"]}}}},
     "'results.osworld_g.data.preset'"),
    ({**_RUN, "results": {"osworld_g": {**_RESULT, "metrics": {"overall_no_refusal": "55"}}}},
     "'results.osworld_g.metrics.overall_no_refusal'"),
    ({**_RUN, "results": {"osworld_g": {**_RESULT, "counts": {"overall": {"n": "4", "left_out": 2}}}}},
     "'results.osworld_g.counts.overall.n'"),
    ({k: v for k, v in _RUN.items() if k != "name"}, "'name'"),
    ({**_RUN, "name": ["mine"]}, "'name'"),
    ({**_RESULT, "benchmark": ["osworld_g"]}, "'benchmark'"),                        # one eval --json result
    ({**_RESULT, "metrics": {"overall_no_refusal": True}}, "'metrics.overall_no_refusal'"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),                            # nesting
])
@pytest.mark.parametrize("form", ["--official", "two runs"])
def test_eval_compare_malformed_report_is_one_error_line(report, field, form, tmp_path):
    """A report of the wrong shape (issue 50 item 8): one error line naming the file and the field, exit 2, in both
    forms of eval-compare; nothing written to --markdown."""
    bad = tmp_path / "bad.json"
    bad.write_text(report if isinstance(report, str) else json.dumps(report))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_RUN))
    md = tmp_path / "out.md"
    second = ["--official"] if form == "--official" else [str(good)]
    res = runner.invoke(app, ["eval-compare", str(bad), *second, "--markdown", str(md)])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    (line,) = [ln for ln in res.output.splitlines() if ln.strip()]
    assert line.startswith("error: ") and "bad.json" in line and (field or "not a report") in line, line
    assert not md.exists()


def test_eval_compare_official_run_name_stays_in_its_cell(tmp_path):
    """A run name with ``|``, a line break or Markdown (issue 50 item 8) is one escaped header cell of the
    --official table, as in the two-run form: every line of the table has the header's cells."""
    report = tmp_path / "r.json"
    report.write_text(json.dumps({**_RUN, "name": "a|b\nc <b>d</b> `e"}))
    md = tmp_path / "official.md"
    res = runner.invoke(app, ["eval-compare", str(report), "--official", "--markdown", str(md)])
    assert res.exit_code == 0, res.output
    lines = md.read_text().splitlines()
    assert len(lines) == 2 + 2 and all(ln.startswith("| ") or ln.startswith("|-") for ln in lines), lines
    assert {len(ln.replace("\\|", "").split("|")) for ln in lines} == {9 + 2}, lines
    assert r"a\|b\nc \<b\>d\</b\> \`e %" in lines[0] and "<b>" not in md.read_text()
    report.write_text(json.dumps({**_RUN, "name": "x|y", "results": {"osworld_g": {**_RESULT,
                                                                                  "data": {"preset": "zzz"}}}}))
    res = runner.invoke(app, ["eval-compare", str(report), "--official"])
    assert res.exit_code == 0 and r"x\|y: no published number" in res.output, res.output


@pytest.mark.parametrize("value", [5, 1e308, -0.5, "NaN"])
def test_eval_compare_metric_outside_its_range_is_never_shown_nor_reproduced(value, tmp_path):
    """A share of 5, 1e308, below 0 or NaN in a report (issue 50 item 7): ``--official`` shows no number for it,
    says why and never "reproduced"; the two-run table shows a dash saying it is no share, and no difference."""
    settings = {"basic": 0.5, "functional": 0.5, "spatial": 0.5}
    run = {"name": "mine", "results": {"ui_vision": {"benchmark": "ui_vision", "data": {"preset": "uivenus15", "reading": "authors"},
                                                     "metrics": {"final_avg": 0.5, **settings}}}}
    report = tmp_path / "r.json"
    text = json.dumps(run).replace('"final_avg": 0.5', f'"final_avg": {value}')  # NaN as Python's json writes it
    report.write_text(text)
    res = runner.invoke(app, ["eval-compare", str(report), "--official"])
    assert res.exit_code == 0, res.output
    rows = [ln for ln in res.output.splitlines() if "`final_avg`" in ln]
    assert len(rows) == 2, res.output
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[3:6] == ["-", "-", "no"] and "final_avg: must be" in cells[8], line
    good = tmp_path / "good.json"
    good.write_text(json.dumps(run))
    res = runner.invoke(app, ["eval-compare", str(good), str(report), "--markdown", str(tmp_path / "c.md")])
    assert res.exit_code == 0, res.output
    (line,) = [ln for ln in (tmp_path / "c.md").read_text().splitlines() if "| final_avg |" in ln]
    assert line.endswith("| 50.0 | – (not a share in \\[0, 1\\]) | – |"), line


def test_compare_official_takes_any_benchmark_name():
    """Benchmarks named as the published tables name them (OSWorld-G here): every model of the preset, and the
    2-point criterion on each."""
    run = {"name": "mine", "results": {"osworld_g": {"metrics": {"overall": 0.40, "overall_no_refusal": 0.55},
                                                     "data": {"preset": "mai_ui", "reading": "authors"}}}}
    rows = compare_official(run)
    published = [r for r in OFFICIAL_RESULTS if r.preset == "mai_ui" and r.benchmark == "osworld_g"]
    assert [c.official for c in rows] == published and len(published) == 2
    for c in rows:
        assert c.run == pytest.approx(55.0) and c.reproduced == (55.0 >= c.official.value - REPRODUCED_WITHIN)
    assert {c.reproduced for c in rows} == {True, False}


@pytest.mark.parametrize(("preset", "benchmark", "metric"), [
    ("uivenus15", "ui_vision", "final_avg"), ("infigui_g1", "mmbench_gui", "average"),
    ("guiowl15", "osworld_g", "overall"), ("uivenus15", "osworld_g", "overall"),
    ("gta1", "osworld_g", "overall_no_refusal"), ("step_gui", "osworld_g", "overall_no_refusal"),
    ("gta1", "screenspot_pro", "overall")])
def test_compare_official_reads_the_published_metric(preset, benchmark, metric):
    """The run's number is the metric the published tables report (the registry's published_metric; on OSWorld-G
    the refusal rows count only for the models whose refusal ClawGUI-Eval's judge reads), not its overall."""
    assert published_metric(preset, benchmark) == metric
    others = {"overall": 0.1, "overall_no_refusal": 0.2, "final_avg": 0.3, "average": 0.4}
    run = {"name": "mine", "results": {benchmark: {"metrics": {**others, metric: 0.9}, "data": {"preset": preset, "reading": "authors"}}}}
    rows = compare_official(run)
    assert rows and all(c.run == pytest.approx(90.0) and c.metric == metric for c in rows)


@pytest.mark.parametrize("command", ["infer", "eval"])
def test_preset_help_lists_every_preset(command):
    """``--preset`` help of infer and eval is built from PRESETS, so a new preset is listed in both."""
    from core.presets import PRESETS

    res = runner.invoke(app, [command, "--help"], terminal_width=200)
    assert res.exit_code == 0, res.output
    words = set(res.output.replace(",", " ").replace("(", " ").replace(")", " ").replace(":", " ").split())
    assert set(PRESETS) <= words, set(PRESETS) - words
