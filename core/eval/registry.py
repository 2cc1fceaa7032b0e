"""Benchmark registry: every benchmark ``gui-agent eval`` scores, with its exact metric definition and source.

Each :class:`Benchmark` names its kind (which scorer in :mod:`core.eval.metrics` / :mod:`core.eval.aitw`
applies; grounding benchmarks also name their ``breakdown``), the modes it supports, the GUI-R1 paper table it
belongs to, the file name GUI-R1's inference scripts give its predictions (``<parquet stem>.json``, JSON lines
despite the extension), the papers / code that define its metric and the numbers its paper leads with
(``headline``).  All coordinates in prediction rows are ORIGINAL-image pixels.

The grounding benchmarks of 2025-26 papers (OSWorld-G, UI-Vision, MMBench-GUI L2) are read by
:mod:`core.data.ingest` into rows whose ``group`` / ``ui_type`` carry the paper's breakdown (below, per benchmark);
their gold region may be a polygon (``gt_polygon``) or a refusal (``gt_action`` ``impossible``, :mod:`core.regions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.console import quoted

GUIR1_SOURCE = (
    "GUI-R1 (Luo et al., arXiv:2504.10458), evaluator scripts guir1/eval/eval_screenspot.py and "
    "guir1/eval/eval_omni.py of github.com/ritzz-ai/GUI-R1"
)

GROUNDING_STRICT = (
    "hit = predicted point (pred_coord[:2], original px) inside the gold box [x1, y1, x2, y2], edges included "
    "(SeeClick/ScreenSpot definition); accuracy over ALL rows, unparseable predictions are misses; "
    "reported overall, per group-ui_type, per platform (group) and per ui_type."
)
GROUNDING_GUIR1 = (
    "hit = x1 < x < x2 and y1 < y < y2 (edges miss) on pred_coord[:2]; accuracy per group-ui_type only; the "
    "reference prints no overall number and omits groups with zero hits (both shown here, values unchanged)."
)
REFUSAL_PREDICTION = (
    "A prediction REFUSES when it parses and its action is `impossible` (terminate(status='failure'), UI-TARS "
    "call_user/fail, OS-Atlas IMPOSSIBLE, GUI-R1 'impossible') or `answer` (a text reply instead of a click), or "
    "its point has both coordinates negative (OSWorld-G's convention, e.g. [-1, -1]). An unparseable prediction "
    "is never a refusal and is wrong on every row (OSWorld-G: scored as a click at the origin, as there); a "
    "refusing prediction is wrong on every row with a region."
)
REGION_HIT = (
    "hit = the predicted point (ORIGINAL px) inside the gold region: a box [x1, y1, x2, y2] with its edges "
    "(x1 <= x <= x2 and y1 <= y <= y2, as every reference evaluator), or a polygon (gt_polygon, core.regions: "
    "OSWorld-G's evaluator's even-odd ray casting, which leaves part of the boundary out, e.g. the right and "
    "bottom edges of a box-shaped polygon; a polygon of zero area holds no point); a refusal gold (gt_action "
    "impossible) is hit by a refusing prediction only. " + REFUSAL_PREDICTION
)

#: OSWorld-G's categories in its paper's column order (classification_result.json of github.com/xlang-ai/OSWorld-G).
OSWORLD_G_CATEGORIES: tuple[str, ...] = ("text_matching", "element_recognition", "layout_understanding",
                                         "fine_grained_manipulation", "refusal")
#: The group OSWorld-G's evaluation script reports for rows in no category (its ``classification_list`` empty).
OSWORLD_G_UNCLASSIFIED = "unclassified"
OSWORLD_G_BOX_TYPES: tuple[str, ...] = ("bbox", "polygon", "refusal")
#: Joins a row's OSWorld-G categories in its ``ui_type`` (a row may have several).
CATEGORY_SEPARATOR = "+"
UI_VISION_SETTINGS: tuple[str, ...] = ("basic", "functional", "spatial")
#: UI-Vision's application categories in its paper's column order (Ed, Br, De, Pr, Cr, En).
UI_VISION_CATEGORIES: tuple[str, ...] = ("Education", "Browsers", "Development", "Productivity", "Creativity",
                                         "Entertainment")
#: MMBench-GUI's platforms (its ``platform`` values) in its paper's column order: Windows, macOS, Linux, iOS,
#: Android, Web.
MMBENCH_GUI_PLATFORMS: tuple[str, ...] = ("os_windows", "os_mac", "os_linux", "os_ios", "os_android", "os_web")
MMBENCH_GUI_LEVELS: tuple[str, ...] = ("basic", "advanced")

OSWORLD_G_STRICT = (
    REGION_HIT + " Rows (ui_type = the row's categories joined by '+', from classification_result.json): "
    "overall = hits / ALL rows, refusal rows counted (the paper's Overall); overall_no_refusal = hits / the bbox "
    "and polygon rows (refusal rows out of the denominator: the number for models that cannot refuse); refusal "
    "= hits / refusal rows; per_group = accuracy per category, a row counting in each of its categories and a "
    "row in none in 'unclassified' (the evaluation script's group); per_box_type = bbox / polygon / refusal. An "
    "answer without a click (unparseable, or an action without a point that is no refusal) is scored as a click "
    "at the origin (0, 0): the evaluator's parser gives [0, 0, 0, 0] for it. A point with both coordinates in "
    "[0, 1] is read as fractions of the image (x * W, y * H), as the evaluator reads it."
)
UI_VISION_STRICT = (
    REGION_HIT + " Rows (group = setting basic/functional/spatial, ui_type = application category): "
    "basic / functional / spatial = hits / rows of that setting (the reference's action_acc per annotation file); "
    "final_avg = the plain mean of the settings' accuracies (the paper's Final Avg; over the settings present); "
    "per_group = accuracy per setting-category (the paper's Ed/Br/De/Pr/Cr/En columns); overall = hits / all rows."
)
MMBENCH_GUI_STRICT = (
    REGION_HIT + " Rows (group = platform, ui_type = grounding type basic/advanced): per_group = accuracy per "
    "platform-level (the paper's cells); basic / advanced = hits / rows of that level (the reference's "
    "row-weighted mean over platforms); average = (basic + advanced) / 2 (the reference's 'Average accuracy', the "
    "paper's Avg; over the levels present); per_platform = hits / rows per platform, both levels; overall = hits "
    "/ all rows. Unparseable answers (the reference's 'Error format') count as misses. A point with neither "
    "coordinate above 1 is read as fractions of the image (x * W, y * H), as the reference reads it."
)
NAV_STRICT = (
    "Type = canonical gt action == canonical predicted action over ALL rows. GR = predicted point correct over "
    "rows whose gold action takes a point (inside the gold box when a box is known, edges included; within 14% "
    "normalized distance ((dx/W)^2+(dy/H)^2 < 0.14^2) when only a point is known). SR (step success) = type "
    "matches AND the argument is right (point as for GR; text F1 >= 0.5 for type/select/open_app/hotkey/answer; "
    "scroll direction equal, case-insensitive; other actions: type alone) over ALL rows. Unparseable = wrong."
)
NAV_GUIR1 = (
    "Type = exact case-sensitive gt_action == pred_action. Grounding check for gt click/long_press/moveto/"
    "doubleclick/rightclick: ((gx-px)/W)^2+((gy-py)/H)^2 < 0.14^2 with (gx, gy) = gt_bbox[:2], (W, H) = "
    "image_size, whatever the predicted action. Text check for gt open_app/type/scroll/select: GUI-R1 F1 >= 0.5, "
    "whatever the predicted action. ALL Type = type hits / rows, ALL GR = grounding hits / grounding rows, "
    "ALL Step (SR) = (grounding + text hits) / (grounding + text rows). Quirk reproduced: a category "
    "(group-action) with zero hits of a kind leaves that kind's denominator. Where the reference crashes "
    "(a kind without any hit, malformed prediction fields) this reports 0 / a miss with a warning."
)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: ``kind`` selects the scorer; ``modes`` the metric modes it has."""

    name: str
    title: str
    kind: str  # grounding | navigation | aitw | mind2web
    paper_table: str  # grounding | low | high | other
    guir1_file: str | None  # GUI-R1 prediction file name (outputs/<model>/<name>)
    source: str
    definitions: dict[str, str]
    breakdown: str = "screenspot"  # grounding: screenspot | osworld_g | ui_vision | mmbench_gui
    headline: tuple[str, ...] = ()  # metrics tables show first (empty: core.eval.report's default)
    #: The metric the benchmark's published tables report (``eval-compare --official`` compares it).
    published_metric: str = "overall"
    #: Where published numbers differ by model: the metric of a model that does not refuse (OSWorld-G), see
    #: :func:`core.presets.published_metric`.
    published_metric_no_refusal: str | None = None

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.definitions)


def _grounding(name: str, title: str, source: str) -> Benchmark:
    return Benchmark(name, title, "grounding", "grounding", f"{name}_test.json", source,
                     {"strict": GROUNDING_STRICT, "guir1": GROUNDING_GUIR1})


def _region_grounding(name: str, title: str, source: str, definition: str, headline: tuple[str, ...],
                      **published: str) -> Benchmark:
    """A grounding benchmark whose gold may be a polygon or a refusal, with its paper's breakdown (strict only:
    GUI-R1's evaluator does not cover it); its published metric is the first of ``headline``."""
    return Benchmark(name, title, "grounding", "other", f"{name}_test.json", source, {"strict": definition},
                     breakdown=name, headline=headline, published_metric=headline[0], **published)


def _navigation(name: str, title: str, table: str, paper: str) -> Benchmark:
    """A navigation benchmark scored with OS-Atlas Type/GR/SR; ``paper`` cites the data set, ``table`` is the
    GUI-R1 table (low | high) it is reported in."""
    source = f"{paper}, OS-Atlas Type/GR/SR; GUI-R1 {table}-level table. " + GUIR1_SOURCE
    return Benchmark(name, title, "navigation", table, f"{name}_test.json", source,
                     {"strict": NAV_STRICT, "guir1": NAV_GUIR1})


BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    _grounding("screenspot", "ScreenSpot",
               "SeeClick (Cheng et al., ACL 2024, arXiv:2401.10935); GUI-R1 paper Table 'GUI grounding'. "
               + GUIR1_SOURCE),
    _grounding("screenspot_v2", "ScreenSpot-v2",
               "OS-Atlas (Wu et al., arXiv:2410.23218) corrected ScreenSpot annotations; same metric as ScreenSpot."),
    _grounding("screenspot_pro", "ScreenSpot-Pro",
               "ScreenSpot-Pro (Li et al., arXiv:2504.07981); GUI-R1 paper Table 'ScreenSpot-Pro'. " + GUIR1_SOURCE),
    _region_grounding(
        "osworld_g", "OSWorld-G",
        "OSWorld-G (Jedi: Xie et al., 'Scaling Computer-Use Grounding via UI Decomposition and Synthesis', "
        "arXiv:2505.13227), Table 'OSWorld-G' (Text Matching, Element Recognition, Layout Understanding, "
        "Fine-grained Manipulation, Refusal, Overall); annotations benchmark/OSWorld-G.json + "
        "classification_result.json of github.com/xlang-ai/OSWorld-G; refusal denominators as in "
        "clawgui-eval/judge/osworld_g_judge.py + metric/osworldg_metric.py of github.com/ZJU-REAL/ClawGUI "
        "(commit d990d3e3).",
        # The paper's Overall counts every row, refusal rows too; ClawGUI-Eval (metric/osworldg_metric.py) leaves
        # them out unless the model refuses (--include_refusal, scripts/judge/osworld-g_run_judge.sh).
        OSWORLD_G_STRICT, ("overall", "overall_no_refusal", "refusal"),
        published_metric_no_refusal="overall_no_refusal"),
    _region_grounding(
        "ui_vision", "UI-Vision",
        "UI-Vision (Nayak et al., ICML 2025, arXiv:2503.15661), element grounding table (Basic / Functional / "
        "Spatial per category, Final Avg); evaluator eval/grounding/eval_uivision.py of github.com/uivision/"
        "UI-Vision (commit 76085a95); annotations huggingface.co/datasets/ServiceNow/ui-vision.",
        UI_VISION_STRICT, ("final_avg", "basic", "functional", "spatial", "overall")),
    _region_grounding(
        "mmbench_gui", "MMBench-GUI L2",
        "MMBench-GUI (Wang et al., arXiv:2507.19478), L2 GUI element grounding table (Basic / Advanced per "
        "platform, Avg); evaluator benchmarks/l2_element_grounding.py + level2_calculate_scores in "
        "benchmarks/matrics.py of github.com/open-compass/MMBench-GUI (commit 896ddf1d); annotations "
        "L2_annotations.json of huggingface.co/datasets/OpenGVLab/MMBench-GUI.",
        MMBENCH_GUI_STRICT, ("average", "basic", "advanced", "overall")),
    _navigation("androidcontrol_low", "AndroidControl-Low", "low", "AndroidControl (Li et al., arXiv:2406.03679)"),
    _navigation("androidcontrol_high", "AndroidControl-High", "high", "AndroidControl (Li et al., arXiv:2406.03679)"),
    _navigation("guiodyssey", "GUI-Odyssey", "high", "GUI-Odyssey (Lu et al., arXiv:2406.08451)"),
    _navigation("guiact_web", "GUI-Act-Web", "low", "GUICourse/GUI-Act (Chen et al., arXiv:2406.11317)"),
    _navigation("omniact_web", "OmniAct-Web", "low", "OmniAct (Kapoor et al., arXiv:2402.17553)"),
    _navigation("omniact_desktop", "OmniAct-Desktop", "low", "OmniAct (Kapoor et al., arXiv:2402.17553)"),
    Benchmark("aitw", "AITW", "aitw", "other", "aitw_test.json",
              "Android in the Wild (Rawles et al., arXiv:2307.10088); type/parameter accuracy as in R1-V-GUI-agent "
              "(github.com/kokolerk/R1-V-GUI-agent, eval/test_aitw.py).",
              {"strict": (
                  "Rows carry a gold call string (`solution`, `<answer>` body if tagged) and the raw model text "
                  "(`pred`). Both are split by R1-V's `(.+?)\\((.+?)\\)`: type = names equal, param = parameter "
                  "strings identical (so a call with empty parentheses, e.g. mobile.home(), never matches), "
                  "sr = both. Tolerant variant (also reported): names equal, coordinates within 14% of the screen "
                  "((dx)^2+(dy)^2 < 0.14^2 in normalized units), text arguments F1 >= 0.5, other arguments equal "
                  "after whitespace/quote normalization, empty parameter lists allowed.")}),
    Benchmark("mind2web", "Mind2Web", "mind2web", "other", "mind2web_test.json",
              "Mind2Web (Deng et al., NeurIPS 2023, arXiv:2306.06070) as evaluated by SeeClick "
              "(agent_tasks/mind2web_test.py): element accuracy, operation F1, step success rate.",
              {"strict": (
                  "gr (Ele.Acc) = predicted point inside the gold element box, edges included; type = operation "
                  "type equal (click/hover/enter count as CLICK); op_f1 = macro mean over CLICK/SELECT/TYPE of "
                  "token-set F1 between 'OP value' strings (value lower-cased, only for SELECT/TYPE); sr = element "
                  "right AND op F1 == 1; episode_sr over `annot_id`/`episode_id` when rows carry one.")}),
)}

#: The metrics that are means over a benchmark's parts, as its paper defines them (UI-Vision's Final Avg over its
#: three settings, MMBench-GUI's Avg over its two levels): (benchmark, metric) -> (what the parts are, the parts).
#: Such a mean is defined only when every part has rows (:func:`absent_averages`).
AVERAGES: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("ui_vision", "final_avg"): ("settings", UI_VISION_SETTINGS),
    ("mmbench_gui", "average"): ("levels", MMBENCH_GUI_LEVELS),
}


def absent_averages(benchmark: str, metrics: dict[str, Any]) -> dict[str, str]:
    """The averaged metrics of a ``benchmark`` result (:data:`AVERAGES`) that are not defined, each with why:
    a part of the mean has no number in ``metrics`` (no row of that setting was scored; ``eval`` writes every
    part, null when it has no rows). A mean over the parts that are there would be another number than the
    published one, so it is absent, never shown. ``metrics`` naming none of the parts (a hand-written summary)
    says nothing about them: nothing is absent."""
    out = {}
    for (bench, metric), (kind, parts) in AVERAGES.items():
        if bench != benchmark or not any(p in metrics for p in parts):
            continue
        missing = [p for p in parts if isinstance(metrics.get(p), bool) or not isinstance(metrics.get(p), (int, float))]
        if missing:
            out[metric] = (f"no rows of the {kind} {', '.join(missing)}: {metric} is the mean over all {len(parts)} "
                           f"{kind} ({', '.join(parts)})")
    return out


_STEM = re.compile(r"^(?P<name>[a-z0-9_]+?)_test(?:_\d+_\d+)?(?:_pred)?$")


def get_benchmark(name: str) -> Benchmark:
    """The registry entry for ``name``; a clear error listing the known names otherwise."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ValueError(f"unknown benchmark {quoted(name)}; known: {', '.join(BENCHMARKS)}") from None


def benchmark_for_file(path: str | Path) -> Benchmark | None:
    """The benchmark a prediction file belongs to, from GUI-R1's naming: ``<bench>_test.json`` (its inference
    scripts), ``<bench>_test_<start>_<end>_pred.json`` (chunked runs) or ``<bench>_test_pred.jsonl``."""
    stem = Path(path).name
    for suffix in (".jsonl", ".json"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    else:
        return None
    m = _STEM.match(stem)
    if not m:
        return None
    return BENCHMARKS.get(m.group("name"))
