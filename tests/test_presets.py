"""Model presets (core.presets): the registry is consistent and sourced, each public model's answers are read as
the model writes them (examples from the authors' repositories), ``gui-agent eval --preset`` re-parses raw answers
in the preset's frame whatever the ``pred_*`` fields say, and ``gui-agent infer --preset`` / ``--dry-run`` send the
authors' prompt, generation settings and pixel bounds (baseline backend on real ScreenSpot / AitZ screenshots)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.cli import app
from core.geometry import Frame, ImageGeometry, fetch_image_resize, smart_resize
from core.parsers import parse_action
from core.presets import GUIR1_SCREENSPOT_MAX_PIXELS, PRESETS, get_preset, reparse_row
from core.prompts import get_template

runner = CliRunner()


# ------------------------------------------------------------------------------------------------ registry

def test_every_preset_is_consistent_and_sourced():
    assert set(PRESETS) >= {"guir1", "uitars", "uitars15", "os_atlas", "qwen25vl", "qwen3vl", "uground", "seeclick",
                            "aguvis"}
    for p in PRESETS.values():
        assert {"prompt", "generation", "pixels", "answer"} <= set(p.sources), p.name
        assert "grounding" in p.templates, p.name
        for name in p.templates.values():
            t = get_template(name)
            # qwen3vl's navigation prompt states the Qwen3-VL cookbook's 999 x 999 screen (issue 51 class 3)
            assert t.frame is p.frame or (p.name == "guir1" and t.frame is Frame.RESIZED) or (
                p.name, name, t.frame) == ("qwen3vl", "qwen3vl-mobile-agent", Frame.GRID999), (p.name, name)
            assert p.answer_frame(None, name) is t.frame
            # the template's answers go through the preset's parser (Qwen3-VL agent answers are tool calls)
            assert t.answer_format in (p.parser, "tool_call"), (p.name, name, t.answer_format)
        assert 0 < p.min_pixels <= p.max_pixels and p.factor in (28, 32)


def test_guir1_preset_is_guir1_inference_scripts():
    p = get_preset("guir1")
    g = p.generation
    assert (g.max_new_tokens, g.temperature, g.repetition_penalty, g.top_p) == (1024, 0.0, 1.05, 0.001)
    assert p.pixel_bounds("screenspot") == (3136, 2_097_152) == (3136, GUIR1_SCREENSPOT_MAX_PIXELS)
    assert p.pixel_bounds("androidcontrol_low") == (3136, 12_845_056)
    assert p.template_for("screenspot_pro") == "guir1-inference-screenspot"
    assert p.template_for("guiodyssey") == "guir1-inference-guiodyssey"
    assert p.template_for(None) == "guir1-inference-androidcontrol"


def test_grounding_only_preset_refuses_navigation():
    with pytest.raises(ValueError, match="no navigation prompt"):
        get_preset("uground").template_for("androidcontrol_high")
    with pytest.raises(ValueError, match="unknown preset 'gpt'"):
        get_preset("gpt")


# ------------------------------------------------------------------------------------------------ parsers

# Answers as each model writes them, taken from the authors' repositories / model cards.
WRITTEN = [
    # UI-TARS 1.0, 0-1000 (bytedance/UI-TARS README action space)
    ("uitars", "Thought: Click the search box.\nAction: click(start_box='<|box_start|>(235,512)<|box_end|>')",
     "click", (235, 512)),
    # UI-TARS 1.0 with the special tokens stripped by skip_special_tokens
    ("uitars", "Action: click(start_box='(235,512)')", "click", (235, 512)),
    # UI-TARS-1.5 (codes/ui_tars/prompt.py action space)
    ("uitars", "Thought: Open the menu.\nAction: click(point='<point>120 33</point>')", "click", (120, 33)),
    ("uitars", "Thought: Go back.\nAction: press_back()", "press_back", None),
    ("uitars", "Action: long_press(start_box='<|box_start|>(10,20)<|box_end|>', time='')", "long_press", (10, 20)),
    ("uitars", "Action: scroll(start_box='(500,500)', direction='down')", "scroll", (500, 500)),
    ("uitars", "Action: type(content='weather today\\n')", "type", None),
    ("uitars", "Action: hotkey(key='ctrl c')", "hotkey", None),
    ("uitars", "Action: finished(content='done')", "complete", None),
    # a box where a point is expected: its centre
    ("uitars", "Action: click(start_box='(100,200,300,400)')", "click", (200, 300)),
    # OS-Atlas-Base-7B README output (box -> centre) and OS-Atlas eval/data answers
    ("os_atlas", "<|object_ref_start|>language switch<|object_ref_end|><|box_start|>(576,12),(592,42)<|box_end|>"
                 "<|im_end|>", "click", (584, 27)),
    ("os_atlas", "thoughts:\nClick on the more options icon.\nactions:\nCLICK <point>[[950,87]]</point>", "click",
     (950, 87)),
    ("os_atlas", "thoughts:\nopen the PocketBook app.\nactions:\nOPEN_APP [PocketBook]", "open_app", None),
    ("os_atlas", "thoughts:\nscroll\nactions:\nSCROLL [UP]", "scroll", None),
    # Qwen2.5-VL / Qwen3-VL grounding JSON (cookbook format)
    ("qwen_grounding", '```json\n[\n\t{"bbox_2d": [10, 20, 30, 40], "label": "search box"}\n]\n```', "click", (20, 30)),
    ("qwen_grounding", '{"point_2d": [321, 123], "label": "icon"}', "click", (321, 123)),
    # UGround-V1 (grounding/uground_qwen2vl.py evals the text as a tuple) and SeeClick
    ("point", "(523, 847)", "click", (523, 847)),
    ("seeclick", "(0.49,0.40)", "click", (0.49, 0.40)),
    ("seeclick", "<box>(100,200),(300,400)</box>", "click", (0.2, 0.3)),
    # Aguvis pyautogui (README examples)
    ("pyautogui", "pyautogui.click(x=0.8102, y=0.9463)", "click", (0.8102, 0.9463)),
    # Aguvis mobile agent: the plugin functions of its agent system message (xlang-ai/aguvis constants.py), as
    # serve/cli.py's self-plan decode leaves the two assistant turns (<|im_start|>, <|recipient|> skipped)
    ("pyautogui", "all\nAction: tap the Clock icon\nassistantos\npyautogui.click(x=0.6070, y=0.4984)", "click",
     (0.6070, 0.4984)),
    ("pyautogui", "mobile.swipe(from_coord=[0.5074, 0.5411], to_coord=[0.5789, 0.0011])", "swipe", (0.5074, 0.5411)),
    ("pyautogui", "mobile.home()", "press_home", None),
    ("pyautogui", "mobile.back()", "press_back", None),
    ("pyautogui", "mobile.wait(seconds=3)", "wait", None),
    ("pyautogui", "mobile.long_press(x=0.25, y=0.75)", "long_press", (0.25, 0.75)),
    ("pyautogui", "mobile.open_app(app_name='Clock')", "open_app", None),
    ("pyautogui", "pyautogui.write(message='alarm 7am')", "type", None),
    ("pyautogui", "mobile.terminate(status='success')", "complete", None),
    ("pyautogui", "terminate(status='failure')", "impossible", None),
]


@pytest.mark.parametrize("fmt, text, action, point", WRITTEN)
def test_answers_as_models_write_them(fmt, text, action, point):
    r = parse_action(text, fmt=fmt)
    assert r.ok, r.error
    assert r.action.action == action
    assert r.action.point == (None if point is None else pytest.approx(point))


def test_os_atlas_answers_of_its_eval_data(shared_data):
    """Every gold answer of OS-Atlas' own eval files parses (real data, nobody here wrote it)."""
    n = 0
    for path in sorted((shared_data / "osatlas_eval").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            answer = json.loads(line)["conversations"][-1]["value"]
            r = parse_action(answer, fmt="os_atlas")
            assert r.ok, (path.name, answer, r.error)
            n += 1
    assert n >= 18


@pytest.mark.parametrize("fmt, text, reason", [
    ("uitars", "Thought: nothing to do", "no 'Action:' line"),
    ("uitars", "Action: __import__('os').system('ls')", "not a single call"),
    ("uitars", "Action: rm(start_box='(1,2)')", "unknown action"),
    ("uitars", "Action: click(start_box='(1,2,3)')", "2 or 4 numbers"),
    ("uitars", "Action: scroll(direction='sideways')", "scroll direction"),
    ("os_atlas", "CLICK somewhere", "no <point> or box"),
    ("os_atlas", "actions:\nTYPE", "needs [text]"),
    ("qwen_grounding", '{"label": "x"}', "no bbox_2d or point_2d"),
    ("qwen_grounding", '[{"bbox_2d": [1, 2, 3]}]', "bbox_2d must be"),
    ("point", "I cannot find it", "2 or 4 numbers"),
    ("seeclick", "<box>(1,2),(3)</box>", "2 or 4 numbers"),
])
def test_model_format_failures_have_reasons(fmt, text, reason):
    r = parse_action(text, fmt=fmt)
    assert not r.ok and reason in r.error and r.format == fmt


# ------------------------------------------------------------------------------------------------ eval --preset

W, H = 1000, 500
BOX = [100.0, 100.0, 300.0, 200.0]  # original pixels; centre (200, 150)


def _in_frame(preset: str, xy: tuple[float, float]) -> tuple[float, float]:
    p = get_preset(preset)
    return p.geometry(W, H, "screenspot").point(xy, Frame.ORIGINAL, p.frame)


def _answer(preset: str, xy: tuple[float, float]) -> str:
    """A hit/miss answer at ORIGINAL point ``xy`` written as the preset's model writes it."""
    return answer_in_frame(preset, *_in_frame(preset, xy))


def answer_in_frame(preset: str, x: float, y: float) -> str:
    """A click at (x, y) of the preset's frame, written as the preset's model writes it."""
    xi, yi = round(x), round(y)
    return {
        "guir1": f"<think>t</think> <answer>[{{'action': 'click', 'point': [{xi}, {yi}], "
                 f"'input_text': 'no input text'}}]</answer>",
        "uitars": f"Action: click(start_box='<|box_start|>({xi},{yi})<|box_end|>')",
        "uitars15": f"Thought: t\nAction: click(start_box='({xi},{yi})')",
        "os_atlas": f"<|box_start|>({xi - 5},{yi - 5}),({xi + 5},{yi + 5})<|box_end|>",
        "qwen25vl": f'```json\n[{{"bbox_2d": [{xi - 4}, {yi - 4}, {xi + 4}, {yi + 4}], "label": "t"}}]\n```',
        "qwen3vl": f'[{{"bbox_2d": [{xi - 4}, {yi - 4}, {xi + 4}, {yi + 4}], "label": "t"}}]',
        "uground": f"({xi}, {yi})",
        "seeclick": f"({x:.3f},{y:.3f})",
        "aguvis": f"pyautogui.click(x={x:.4f}, y={y:.4f})",
        # the 2025-26 grounding models (tests/test_presets_2025.py checks each in detail)
        "guig2": f"[{xi - 2},{yi - 1},{xi + 2},{yi + 1}]",
        "uivenus": f"[{xi},{yi},{xi},{yi}]",
        "uivenus15": f"[{xi}, {yi}]",
        "gta1": f"({xi}, {yi})",
        "infigui_g1": f'[{{"point_2d": [{xi}, {yi}]}}]',
        "guiowl15": f'<tool_call>{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": '
                    f'[{xi}, {yi}]}}}}</tool_call>',
        "mai_ui": f'<answer>{{"coordinate": [{xi},{yi}]}}</answer>',
        "step_gui": f"explain:tap\taction:CLICK\tpoint:{xi},{yi}",
    }[preset]


#: Presets whose authors' code reads an answer without coordinates as the point (0, 0) (core.authors; Aguvis:
#: VLMEvalKit's parse_bbox_aguvis, and GUI-R1: its ScreenSpot script's extract_coord, on grounding benchmarks).
ORIGIN_FALLBACK = ("guiowl15", "guig2", "uivenus", "gta1", "aguvis", "guir1")


def _rows(preset: str) -> list[dict]:
    """A GUI-R1 grounding prediction file: a hit, a miss and an unparseable answer, with misleading pred_* fields
    (the hit says it missed and vice versa) that --preset must ignore."""
    base = {"gt_action": "click", "gt_bbox": BOX, "gt_input_text": "no input text", "group": "web",
            "ui_type": "text", "image_size": [W, H], "instruction": "open it"}
    return [
        {**base, "id": "hit", "pred": _answer(preset, (200, 150)), "pred_action": "click", "pred_coord": [900, 450]},
        {**base, "id": "miss", "pred": _answer(preset, (700, 400)), "pred_action": "click", "pred_coord": [200, 150]},
        {**base, "id": "garbage", "pred": "I am not sure.", "pred_action": "click", "pred_coord": [200, 150]},
    ]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_eval_preset_reparses_each_format(preset, tmp_path):
    pred = tmp_path / "screenspot_test.json"
    pred.write_text("".join(json.dumps(r) + "\n" for r in _rows(preset)))
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "--predictions", str(pred), "--benchmark", "screenspot", "--preset", preset,
                              "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["counts"]["hits"] == 1 and data["counts"]["n"] == 3, data["counts"]
    # the authors' code of these turns an answer without coordinates into a click at (0, 0): a miss, not unparseable
    assert data["unparseable"]["count"] == (0 if preset in ORIGIN_FALLBACK else 1)
    assert data["data"]["preset"] == preset and data["data"]["reading"] == "authors"
    # without the preset, the stored (misleading) pred_* fields are what is scored
    res = runner.invoke(app, ["eval", "--predictions", str(pred), "--benchmark", "screenspot", "--json", str(out),
                              "--overwrite"])
    assert json.loads(out.read_text())["counts"]["hits"] == 2


def test_reparse_row_frames():
    """The same 0-1000 answer lands on the same original pixel for every 0-1000 preset, and the resized-pixel
    presets use the row's recorded resized size when it has one."""
    row = {"pred": "(500, 250)", "image_size": [2000, 1000]}
    assert reparse_row(row, get_preset("uground"), None)["pred_coord"] == [1000.0, 250.0]
    row = {"pred": "Action: click(start_box='(100,50)')", "image_size": [2000, 1000],
           "resize": {"resized_size": [1000, 500]}}
    assert reparse_row(row, get_preset("uitars15"), None)["pred_coord"] == [200.0, 100.0]
    h, w = smart_resize(1000, 2000, min_pixels=100 * 28 * 28, max_pixels=16384 * 28 * 28)
    row.pop("resize")
    # UI-TARS' action_parser.py rounds the mapped point to 3 decimals (the authors' reading, issue 51)
    assert reparse_row(row, get_preset("uitars15"), None)["pred_coord"] == [round(100 / w * 2000, 3),
                                                                            round(50 / h * 1000, 3)]
    assert reparse_row(row, get_preset("uitars15"), None, "tolerant")["pred_coord"] == pytest.approx(
        [100 * 2000 / w, 50 * 1000 / h])
    bad = reparse_row({"pred": "(1, 2)", "image_size": "big"}, get_preset("uground"), None)
    assert not bad["parse_ok"] and "image_size" in bad["parse_error"]


def test_eval_unknown_preset_is_one_error_line(tmp_path):
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps(_rows("uground")[0]) + "\n")
    res = runner.invoke(app, ["eval", "--predictions", str(pred), "--benchmark", "screenspot", "--preset", "gpt"])
    assert res.exit_code == 2 and "unknown preset 'gpt'" in res.output and "Traceback" not in res.output


# ------------------------------------------------------------------------------------------------ infer --preset

@pytest.fixture(scope="module")
def bench_dir(shared_data, tmp_path_factory) -> Path:
    """``screenspot_test.parquet`` (4 real ScreenSpot web rows, 2560x1440) and ``androidcontrol_high_test.parquet``
    (the AitZ episode in GUI-R1 layout)."""
    from core.data.cli import run_convert
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary
    from core.inference.bench import write_guir1_benchmark

    d = tmp_path_factory.mktemp("bench")
    write_guir1_benchmark(list(READERS["aitw"](shared_data / "aitz", summary=ConversionSummary())),
                          d / "androidcontrol_high_test.parquet")
    written, _ = run_convert("screenspot", "unified", shared_data / "screenspot" / "screenspot_v1_annotations.jsonl",
                             d / "converted", images_dir=shared_data / "screenspot" / "images", skip_missing=True)
    Path(written).rename(d / "screenspot_test.parquet")
    return d


def _infer(*args: str):
    return runner.invoke(app, ["infer", "--backend", "baseline", "--model", "centre", *args])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_infer_preset_with_baseline(preset, bench_dir, tmp_path):
    """Every preset through infer: its grounding prompt, its resize, answers in its format and frame parsed back
    to the screen centre in original pixels."""
    p = get_preset(preset)
    out = tmp_path / "screenspot_test.json"
    res = _infer("--input", str(bench_dir / "screenspot_test.parquet"), "--output", str(out), "--preset", preset)
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 4
    for row in rows:
        assert row["template"] == p.templates["grounding"] and row["parse_ok"], row
        w, h = row["image_size"]
        assert row["pred_coord"] == pytest.approx([w / 2, h / 2], abs=max(w, h) / 200)
        geo = p.geometry(w, h, "screenspot")
        assert row["resize"]["resized_size"] == [geo.resized_width, geo.resized_height]
    res = runner.invoke(app, ["eval", "--predictions", str(out), "--benchmark", "screenspot", "--preset", preset])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("preset", sorted(n for n, p in PRESETS.items() if "navigation" in p.templates))
def test_infer_preset_navigation(preset, bench_dir, tmp_path):
    out = tmp_path / "androidcontrol_high_test.json"
    res = _infer("--input", str(bench_dir / "androidcontrol_high_test.parquet"), "--output", str(out),
                 "--preset", preset)
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows and all(r["template"] == get_preset(preset).template_for("androidcontrol_high") for r in rows)
    assert all(r["parse_ok"] and r["pred_action"] == "click" for r in rows), rows


def test_dry_run_aguvis_navigation_prompt(bench_dir, tmp_path):
    """Aguvis on an AndroidControl-style file: its agent system message with the mobile plugin functions, then the
    screenshot and user_instruction with the previous actions as "Step i: ..." lines ("None" on the first step)."""
    from core.model_prompts import AGUVIS_AGENT_SYSTEM, AGUVIS_GROUNDING_SYSTEM

    res = runner.invoke(app, ["infer", "--backend", "hf", "--model", "m", "--input",
                              str(bench_dir / "androidcontrol_high_test.parquet"), "--output",
                              str(tmp_path / "o.json"), "--preset", "aguvis", "--dry-run"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    assert len(rows) == 4 and not (tmp_path / "o.json").exists()
    head, *functions = AGUVIS_AGENT_SYSTEM.rstrip("\n").split("\n- ")
    assert head == AGUVIS_GROUNDING_SYSTEM + "\n\nYou have access to the following functions:"
    assert [json.loads(f)["name"] for f in functions] == ["mobile.swipe", "mobile.home", "mobile.back",
                                                           "mobile.wait", "mobile.long_press", "mobile.open_app"]
    for i, r in enumerate(rows):
        assert r["template"] == "aguvis-mobile" and r["error"] is None
        system, user = r["messages"]
        assert system == {"role": "system", "content": AGUVIS_AGENT_SYSTEM} and user["role"] == "user"
        assert user["content"].startswith("<image>Please generate the next move according to the ui screenshot, "
                                          "instruction and previous actions.\n\nInstruction: open app \"Clock\"")
        previous = user["content"].split("\n\nPrevious actions:\n", 1)[1]
        lines = previous.rstrip("\n").split("\n")
        if i == 0:
            assert lines == ["None"]
        else:
            assert len(lines) == i and all(ln.startswith(f"Step {k}: ") for k, ln in enumerate(lines, 1)), previous
        assert r["generation"]["max_new_tokens"] == 1024 and r["generation"]["temperature"] == 0.0
        assert r["resize"]["max_pixels"] == 12_845_056 and r["resize"]["factor"] == 28


def _aguvis_nav_rows() -> list[dict]:
    """AndroidControl-High prediction rows (GUI-R1 layout, 1080x2400) whose raw answers are written the way
    Aguvis answers (pyautogui / mobile.* calls, fractions of the screen), with misleading pred_* fields."""
    base = {"group": "mobile", "image_size": [1080, 2400], "instruction": "set an alarm", "history": "None",
            "gt_bbox": [-100.0, -100.0], "gt_input_text": "no input text", "pred_action": "wait", "pred_coord": None}
    return [
        {**base, "id": "click", "gt_action": "click", "gt_bbox": [540.0, 1200.0],
         "pred": "all\nAction: tap the Clock icon\nassistantos\npyautogui.click(x=0.51, y=0.49)"},
        {**base, "id": "long", "gt_action": "long_press", "gt_bbox": [270.0, 1800.0],
         "pred": "mobile.long_press(x=0.25, y=0.75)"},
        # finger up = content scrolls down (AndroidControl's scroll direction)
        {**base, "id": "scroll", "gt_action": "scroll", "gt_input_text": "down",
         "pred": "mobile.swipe(from_coord=[0.5, 0.7], to_coord=[0.5, 0.3])"},
        {**base, "id": "back", "gt_action": "press_back", "pred": "mobile.back()"},
        {**base, "id": "home", "gt_action": "press_home", "pred": "mobile.home()"},
        {**base, "id": "open", "gt_action": "open_app", "gt_input_text": "Clock",
         "pred": "mobile.open_app(app_name='Clock')"},
        {**base, "id": "type", "gt_action": "type", "gt_input_text": "alarm 7am",
         "pred": "pyautogui.write(message='alarm 7am')"},
        {**base, "id": "done", "gt_action": "complete", "pred": "mobile.terminate(status='success')"},
        # wrong: the finger moves down, so the content scrolls up; the click lands far from the gold point
        {**base, "id": "scroll-up", "gt_action": "scroll", "gt_input_text": "down",
         "pred": "mobile.swipe(from_coord=[0.5, 0.3], to_coord=[0.5, 0.7])"},
        {**base, "id": "far", "gt_action": "click", "gt_bbox": [540.0, 1200.0], "pred": "pyautogui.click(x=0.9, y=0.1)"},
        # never run: os.system is not an Aguvis call, the row is unparseable
        {**base, "id": "code", "gt_action": "click", "gt_bbox": [540.0, 1200.0], "pred": "os.system('rm -rf /')"},
    ]


def test_eval_preset_aguvis_navigation(tmp_path):
    pred = tmp_path / "androidcontrol_high_test.json"
    pred.write_text("".join(json.dumps(r) + "\n" for r in _aguvis_nav_rows()))
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "--predictions", str(pred), "--benchmark", "androidcontrol_high", "--preset",
                              "aguvis", "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    per_action = data["metrics"]["per_action"]
    assert {a: (m["hits"]["type"], m["hits"]["sr"], m["n"]) for a, m in per_action.items()} == {
        "click": (2, 1, 3), "long_press": (1, 1, 1), "scroll": (2, 1, 2), "press_back": (1, 1, 1),
        "press_home": (1, 1, 1), "open_app": (1, 1, 1), "type": (1, 1, 1), "complete": (1, 1, 1)}
    assert data["counts"]["sr"] == {"hits": 8, "n": 11} and data["unparseable"]["count"] == 1
    assert data["confusion"]["click"] == {"click": 2, "(none)": 1}


def test_infer_grounding_preset_on_navigation_is_usage_error(bench_dir, tmp_path):
    res = _infer("--input", str(bench_dir / "androidcontrol_high_test.parquet"), "--output",
                 str(tmp_path / "o.json"), "--preset", "seeclick")
    assert res.exit_code == 2 and "no navigation prompt" in res.output
    assert not (tmp_path / "o.json").exists()


def test_dry_run_prints_requests_and_loads_no_model(bench_dir, tmp_path):
    out = tmp_path / "never.json"
    res = runner.invoke(app, ["infer", "--backend", "hf", "--model", str(tmp_path / "no-such-model"), "--input",
                              str(bench_dir / "screenspot_test.parquet"), "--output", str(out), "--preset", "guir1",
                              "--dry-run", "--limit", "2"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    assert len(lines) == 2 and not out.exists()
    for r in lines:
        assert r["template"] == "guir1-inference-screenspot" and r["error"] is None
        text = r["messages"][0]["content"]
        assert text.startswith("You are RUN1-R1, a reasoning GUI Agent Assistant. In this UI screenshot <image>")
        # GUI-R1's ScreenSpot script: qwen-vl-utils' fetch_image resize, then the processor's under 2,097,152
        w, h = fetch_image_resize(*r["image_size"])
        rh, rw = smart_resize(h, w, min_pixels=3136, max_pixels=GUIR1_SCREENSPOT_MAX_PIXELS)
        assert r["resized_size"] == [rw, rh] and rw * rh <= GUIR1_SCREENSPOT_MAX_PIXELS
        assert r["resize"]["fetch_image_first"] is True
        assert r["generation"]["repetition_penalty"] == 1.05 and r["generation"]["max_new_tokens"] == 1024
    # explicit flags win over the preset
    res = runner.invoke(app, ["infer", "--backend", "hf", "--model", "m", "--input",
                              str(bench_dir / "screenspot_test.parquet"), "--output", str(out), "--preset", "uitars15",
                              "--dry-run", "--limit", "1", "--max-pixels", "500000", "--repetition-penalty", "1.0"])
    r = json.loads(next(x for x in res.stdout.splitlines() if x.startswith("{")))
    assert r["resize"]["max_pixels"] == 500000 and r["generation"]["repetition_penalty"] == 1.0
    assert r["generation"]["max_new_tokens"] == 400 and r["template"] == "uitars15-grounding"
    content = r["messages"][-1]["content"]  # UI-TARS: the screenshot after the text
    assert content.startswith("You are a GUI agent.") and content.endswith("<image>")
    assert "## User Instruction\n" in content and "<image>" not in content[:-7]


def test_dry_run_uitars_grounding_is_the_readme_v1_script(bench_dir, tmp_path):
    """UI-TARS 1.0 grounding as bytedance/UI-TARS README_v1.md sends it: one user turn, the screenshot, then
    the fixed query + the instruction; max_tokens=128."""
    res = runner.invoke(app, ["infer", "--backend", "hf", "--model", "m", "--input",
                              str(bench_dir / "screenspot_test.parquet"), "--output", str(tmp_path / "o.json"),
                              "--preset", "uitars", "--dry-run", "--limit", "1"])
    assert res.exit_code == 0, res.output
    r = json.loads(next(x for x in res.stdout.splitlines() if x.startswith("{")))
    (message,) = r["messages"]
    assert message["role"] == "user" and r["template"] == "uitars-grounding"
    assert message["content"].startswith("<image>Output only the coordinate of one point in your response. What "
                                         "element matches the following task: ")
    assert r["generation"]["max_new_tokens"] == 128


def test_infer_unknown_preset_is_usage_error(bench_dir, tmp_path):
    res = _infer("--input", str(bench_dir / "screenspot_test.parquet"), "--output", str(tmp_path / "o.json"),
                 "--preset", "gpt")
    assert res.exit_code == 2 and "unknown preset 'gpt'" in res.output


def test_preset_geometry_matches_template_render(bench_dir):
    """The dry-run prompt is the template's own rendering (what the authors' script sends, with <image> where the
    screenshot goes)."""
    from core.inference.bench import iter_benchmark

    step = next(iter(iter_benchmark(bench_dir / "screenspot_test.parquet")))
    for preset in PRESETS.values():
        t = get_template(preset.templates["grounding"])
        msgs = t.render(step, ImageGeometry.unresized(*step.image_size))
        text = "".join(m["content"] for m in msgs)
        assert text.count("<image>") == 1 and step.instruction in text, preset.name


@pytest.mark.slow
@pytest.mark.rl_env
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_infer_preset_with_tiny_model(preset, bench_dir, tmp_path):
    """Plumbing with a real (random, tiny) Qwen2.5-VL / Qwen3-VL through the HF backend: the preset's prompt and
    resize reach the model, a row is written for each step without a backend error, and its raw answer goes
    through the preset's parser (random weights answer garbage: a parse error, never a crash)."""
    pytest.importorskip("transformers")
    from core.testing import tiny_qwen3vl_path, tiny_qwen25vl_path

    model = tiny_qwen3vl_path() if get_preset(preset).factor == 32 else tiny_qwen25vl_path()
    out = tmp_path / "screenspot_test.json"
    res = runner.invoke(app, ["infer", "--backend", "hf", "--model", str(model), "--device", "cpu", "--input",
                              str(bench_dir / "screenspot_test.parquet"), "--output", str(out), "--preset", preset,
                              "--limit", "1", "--max-new-tokens", "4", "--max-pixels", "250000",
                              "--min-pixels", "3136"])  # below UI-Venus-Ground-7B's own minimum of 2,000,000
    assert res.exit_code == 0, res.output
    (row,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert row["error"] is None and isinstance(row["pred"], str)
    assert row["template"] == get_preset(preset).templates["grounding"]
    assert row["resize"]["max_pixels"] == 250000 and row["resize"]["factor"] == get_preset(preset).factor
    assert row["parse_ok"] or row["parse_error"]


# ------------------------------------------------------------------------------------------------ benchmark layouts

_SCREENS = ("web_6f93090a-81f6-489e-bb35-1a2838b18c01.png", "web_dfacd48d-d2c2-492f-b94c-41e6a34ea99f.png")
_CENTRE = [1180, 620, 1380, 820]  # around the centre (1280, 720) of the 2560x1440 screenshots
_CORNER = [0, 0, 100, 100]


def _pro_record(i: int, group: str, ui_type: str, bbox: list[int]) -> dict:
    """A record in ScreenSpot-Pro's published layout (annotations/<app>_<os>.json)."""
    return {"img_filename": _SCREENS[i % 2], "bbox": bbox, "instruction": f"target {i}", "application": "vscode",
            "platform": "macos", "ui_type": ui_type, "group": group, "img_size": [2560, 1440], "id": f"pro_{i}"}


def _convert_and_score(shared_data, tmp_path, annotations: Path, bench: str) -> dict:
    from core.data.cli import run_convert

    written, summary = run_convert("screenspot", "unified", annotations, tmp_path / "conv",
                                   images_dir=shared_data / "screenspot" / "images")
    parquet = tmp_path / f"{bench}_test.parquet"
    Path(written).rename(parquet)
    out = tmp_path / f"{bench}_test.json"
    res = _infer("--input", str(parquet), "--output", str(out), "--preset", "uground")
    assert res.exit_code == 0, res.output
    report = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "--predictions", str(out), "--benchmark", bench, "--preset", "uground",
                              "--json", str(report)])
    assert res.exit_code == 0, res.output
    return json.loads(report.read_text())


def test_screenspot_pro_layout_scored_per_group_and_ui_type(shared_data, tmp_path):
    """ScreenSpot-Pro's annotations/*.json (xyxy boxes, group, ui_type) -> per application group text / icon /
    average, as the ScreenSpot-Pro paper reports them; the centre baseline hits exactly the centre boxes."""
    ann = tmp_path / "annotations"
    ann.mkdir()
    rows = [_pro_record(0, "Dev", "text", _CENTRE), _pro_record(1, "Dev", "icon", _CORNER),
            _pro_record(2, "Creative", "icon", _CENTRE), _pro_record(3, "Creative", "text", _CORNER)]
    (ann / "vscode_macos.json").write_text(json.dumps(rows[:2]))
    (ann / "photoshop_windows.json").write_text(json.dumps(rows[2:]))
    m = _convert_and_score(shared_data, tmp_path, ann, "screenspot_pro")["metrics"]
    assert m["per_group"] == {"Dev-text": 1.0, "Dev-icon": 0.0, "Creative-icon": 1.0, "Creative-text": 0.0}
    assert m["per_platform"] == {"Dev": 0.5, "Creative": 0.5}
    assert m["per_ui_type"] == {"text": 0.5, "icon": 0.5} and m["overall"] == 0.5


def test_screenspot_v2_layout_takes_the_platform_from_the_file_name(shared_data, tmp_path):
    """OS-Atlas' ScreenSpot-v2 files (screenspot_<platform>_v2.json: xywh boxes, data_type, no platform field)."""
    ann = tmp_path / "v2"
    ann.mkdir()
    x1, y1, x2, y2 = _CENTRE
    rec = {"img_filename": _SCREENS[0], "instruction": "open it", "data_source": "shop"}
    (ann / "screenspot_web_v2.json").write_text(json.dumps([
        {**rec, "bbox": [x1, y1, x2 - x1, y2 - y1], "data_type": "text"},
        {**rec, "bbox": [0, 0, 100, 100], "data_type": "icon"}]))
    m = _convert_and_score(shared_data, tmp_path, ann, "screenspot_v2")["metrics"]
    assert m["per_group"] == {"web-text": 1.0, "web-icon": 0.0} and m["overall"] == 0.5


def test_experiment_script_defaults_to_the_guir1_preset(bench_dir, tmp_path):
    """experiments/guir1/inference.sh without PROMPT/MAX_PIXELS runs GUI-R1's inference settings (dry run)."""
    import os
    import subprocess

    repo = Path(__file__).resolve().parents[1]
    (tmp_path / "model").mkdir()  # the script's model pre-flight wants a folder; a dry run loads nothing from it
    env = {**os.environ, "MODEL_PATH": str(tmp_path / "model"), "DATA_DIR": str(bench_dir), "OUT_DIR": str(tmp_path),
           "BACKEND": "hf", "INFER_ARGS": "--dry-run --limit 1", "HF_HUB_OFFLINE": "1"}
    for var in ("PRESET", "PROMPT", "MAX_PIXELS", "MIN_PIXELS"):
        env.pop(var, None)
    proc = subprocess.run(["bash", str(repo / "experiments" / "guir1" / "inference.sh")], cwd=tmp_path, env=env,
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["input"].rsplit("/", 1)[-1]: r for r in map(json.loads, (x for x in proc.stdout.splitlines()
                                                                          if x.startswith("{")))}
    ss, ac = rows["screenspot_test.parquet"], rows["androidcontrol_high_test.parquet"]
    assert ss["template"] == "guir1-inference-screenspot" and ss["resize"]["max_pixels"] == 2_097_152
    assert ac["template"] == "guir1-inference-androidcontrol" and ac["resize"]["max_pixels"] == 12_845_056
    assert ss["generation"] == ac["generation"] == {"max_new_tokens": 1024, "temperature": 0.0, "top_p": 0.001,
                                                    "repetition_penalty": 1.05, "seed": 0}


def test_eval_report_preset_rescores_a_folder(tmp_path):
    """eval-report --preset: every benchmark file of a GUI-R1-named folder is re-parsed with the preset."""
    d = tmp_path / "pred"
    d.mkdir()
    (d / "screenspot_test.json").write_text("".join(json.dumps(r) + "\n" for r in _rows("uitars15")))
    res = runner.invoke(app, ["eval-report", "--pred-dir", str(d), "--out", str(tmp_path / "rep"), "--no-plots",
                              "--no-gallery", "--preset", "uitars15"])
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "rep" / "report.json").read_text())["results"]["screenspot"]
    assert result["counts"]["hits"] == 1 and result["data"]["preset"] == "uitars15"


# ------------------------------------------------------------------------------------------------ hostile rows

def _eval_rows(tmp_path, rows: list[str], preset: str, benchmark: str = "screenspot", *extra: str):
    """``eval --preset`` on JSON lines written as given (so a row can hold what json.dumps cannot write)."""
    pred = tmp_path / f"{benchmark}_test.json"
    pred.write_text("".join(r + "\n" for r in rows))
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "--predictions", str(pred), "--benchmark", benchmark, "--preset", preset,
                              "--json", str(out), "--overwrite", *extra])
    return res, (json.loads(out.read_text()) if res.exit_code == 0 else None)


@pytest.mark.parametrize("size, reason", [
    ("[1e308, 1e308]", "must be <= 1e+06"),
    ("[Infinity, 500]", "must be a finite number"),
    ("[1" + "0" * 400 + ", 500]", "beyond the float range"),
    ("[true, 500]", "must be a number"),
])
def test_eval_preset_row_with_an_impossible_image_size_is_one_unparseable_row(size, reason, tmp_path):
    """An image_size of 1e308, inf or a 400-digit integer is that row's parse error, never an OverflowError; the
    other rows are scored (eval and eval-report)."""
    good, bad = _rows("uground")[0], dict(_rows("uground")[0], id="huge")
    bad.pop("image_size")
    rows = [json.dumps(good), json.dumps(bad)[:-1] + f', "image_size": {size}}}']
    res, data = _eval_rows(tmp_path, rows, "uground")
    assert res.exit_code == 0, res.output
    assert data["counts"]["hits"] == 1 and data["counts"]["n"] == 2 and data["unparseable"]["count"] == 1
    assert "image_size" in res.output and reason in res.output
    res = runner.invoke(app, ["eval-report", "--pred-dir", str(tmp_path), "--out", str(tmp_path / "rep"),
                              "--no-plots", "--no-gallery", "--preset", "uground"])
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["results"]["screenspot"]["counts"]["n"] == 2


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_eval_preset_on_navigation_follows_infers_rule(preset, tmp_path):
    """eval --preset refuses a navigation benchmark exactly when infer --preset does (a grounding-only preset has
    no navigation prompt, so its parser never read such answers): exit 2 and one line, in eval and eval-report."""
    grounding_only = "navigation" not in get_preset(preset).templates
    rows = [json.dumps(dict(_rows(preset)[0], gt_action="click", gt_bbox=[200.0, 150.0]))]
    res, _ = _eval_rows(tmp_path, rows, preset, "androidcontrol_high")
    assert res.exit_code == (2 if grounding_only else 0), res.output
    assert ("no navigation prompt" in res.output) == grounding_only and "Traceback" not in res.output
    res = runner.invoke(app, ["eval-report", "--pred-dir", str(tmp_path), "--out", str(tmp_path / "rep"),
                              "--no-plots", "--no-gallery", "--preset", preset])
    assert res.exit_code == (2 if grounding_only else 0), res.output


@pytest.mark.parametrize("preset, pred, reason", [
    ("uground", "(1e2, 0x1A)", "'0x1A' is not a decimal number"),
    ("uitars", "Action: click(start_box='(1.2.3,4)')", "'1.2.3' is not a decimal number"),
    ("os_atlas", "<|box_start|>(1e999,1),(2,3)<|box_end|>", "not finite")])
def test_eval_preset_refuses_numbers_it_cannot_read_whole(preset, pred, reason, tmp_path):
    """A number the preset's parser cannot read whole makes the row unparseable, named with the reason; before,
    its pieces were read as extra numbers and scored as a box."""
    res, data = _eval_rows(tmp_path, [json.dumps(dict(_rows(preset)[0], pred=pred))], preset, "screenspot",
                           "--reading", "tolerant")
    assert res.exit_code == 0, res.output
    assert data["counts"]["hits"] == 0 and data["unparseable"]["count"] == 1 and reason in res.output


def test_eval_preset_reads_exponents_thoughts_and_cut_boxes_where_the_model_meant(tmp_path):
    """1e2 is one number; an OS-Atlas thought that starts with an action word is thought; a SeeClick box without
    </box> is on its 0-1000 grid (the tolerant reading; SeeClick's own script finds no box there: wrong format):
    each lands on the gold box (hit)."""
    x, y = _in_frame("uground", (200, 150))
    xo, yo = _in_frame("os_atlas", (200, 150))
    cases = [
        ("uground", f"({x / 100:.4f}e2, {round(y)})"),
        ("os_atlas", f"thoughts:\nWAIT for the page.\nactions:\nCLICK <point>[[{round(xo)},{round(yo)}]]</point>"),
        ("seeclick", "<box>(150,250),(250,350)"),  # centre (0.2, 0.3) of a 1000 x 500 screen: (200, 150)
    ]
    for preset, pred in cases:
        reading = ["--reading", "tolerant"] if preset == "seeclick" else []
        res, data = _eval_rows(tmp_path, [json.dumps(dict(_rows(preset)[0], pred=pred))], preset, "screenspot",
                               *reading)
        assert res.exit_code == 0 and data["counts"]["hits"] == 1, (preset, pred, res.output)
    res, data = _eval_rows(tmp_path, [json.dumps(dict(_rows("seeclick")[0], pred=cases[-1][1]))], "seeclick")
    assert res.exit_code == 0 and data["unparseable"]["count"] == 1, res.output
