"""Benchmark metrics in two modes: ``strict`` (what the field means) and ``guir1`` (GUI-R1's evaluator, number
for number, quirks included).  Definitions: :mod:`core.eval.registry`.

Every scorer streams :class:`~core.eval.io.Record` rows and keeps only counters (plus a bounded list of failed
rows for the gallery), so memory is flat in the number of rows.  Coordinates are ORIGINAL-image pixels.
Rows whose prediction cannot be read count as wrong and are counted under ``unparseable``; they are never dropped.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from core.actions import POINT_ACTIONS, canonical_action_name
from core.console import quoted
from core.eval.aitw import score_aitw
from core.eval.io import (
    PredictionFileError,
    Record,
    gold_numbers,
    gold_size,
    gold_str,
    iter_records,
    pred_point,
)
from core.eval.registry import (
    CATEGORY_SEPARATOR,
    absent_averages,
    MMBENCH_GUI_LEVELS,
    MMBENCH_GUI_PLATFORMS,
    OSWORLD_G_BOX_TYPES,
    OSWORLD_G_CATEGORIES,
    OSWORLD_G_UNCLASSIFIED,
    UI_VISION_CATEGORIES,
    UI_VISION_SETTINGS,
    BENCHMARKS,
    Benchmark,
    get_benchmark,
)
from core.eval.tally import NO_PRED, Failures, Unparseable, Warnings
from core.geometry import Frame, point_in_box
from core.matching import POINT_RADIUS, Predicted, match, point_facts
from core.records import GoldRecord, GoldRecordError, from_prediction_row
from core.regions import REFUSAL_ACTION, Polygon, as_polygon, point_in_polygon, refuses

MODES = ("strict", "guir1")

#: GUI-R1 eval_omni.py: gold actions whose point is checked, and those whose input_text is checked.
GUIR1_GROUNDING_ACTIONS = ("click", "long_press", "moveto", "doubleclick", "rightclick")
GUIR1_TEXT_ACTIONS = ("open_app", "type", "scroll", "select")



@dataclass
class EvalResult:
    """Scores of one prediction file set.  ``metrics`` values are fractions in [0, 1] (None: not applicable)."""

    benchmark: str
    mode: str
    n_rows: int
    metrics: dict[str, Any]
    counts: dict[str, Any]
    confusion: dict[str, dict[str, int]]
    unparseable: dict[str, Any]
    warnings: list[dict[str, Any]]
    definition: str
    source: str
    failures: list[dict[str, Any]] = field(default_factory=list, repr=False)
    #: Metrics left None because they are not defined on these rows, each with why (``registry.absent_averages``).
    absent: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark, "mode": self.mode, "n_rows": self.n_rows, "metrics": self.metrics,
            "counts": self.counts, "confusion": self.confusion, "unparseable": self.unparseable,
            "warnings": self.warnings, "definition": self.definition, "source": self.source,
            **({"absent": self.absent} if self.absent else {}),
        }


def _frac(hits: int, n: int) -> float | None:
    return hits / n if n else None


# --------------------------------------------------------------------------------------------- predictions

@dataclass(slots=True)
class Prediction:
    """A predicted action read from a row: ``point`` in ORIGINAL pixels; ``error`` set when unreadable."""

    action: str | None
    point: tuple[float, float] | None
    text: str | None
    direction: str | None
    error: str | None


def _reparse(rec: Record) -> Prediction:
    """Run the project's parser on the raw model text (``pred``) and map its point to ORIGINAL pixels.

    The model's frame: ``resize.frame`` when the row records it, else ``grid1000`` for Qwen3-VL tool calls and
    ``resized`` (Qwen2.5-VL absolute pixels, ``resize.resized_size``) otherwise.
    """
    from core.geometry import ImageGeometry
    from core.parsers import parse_action

    res = parse_action(rec.row["pred"])
    if not res.ok or res.action is None:
        return Prediction(None, None, None, None, f"parse error: {res.error or 'unparseable'}")
    w, h = gold_size(rec)
    resize = rec.row.get("resize") if isinstance(rec.row.get("resize"), dict) else {}
    rs = pred_point(resize.get("resized_size"))
    geometry = ImageGeometry(int(w), int(h), int(rs[0]), int(rs[1])) if rs else ImageGeometry.unresized(int(w), int(h))
    frame = resize.get("frame") or (Frame.GRID1000 if res.action.fmt == "tool_call" else Frame.RESIZED)
    try:
        act = res.action.to_action(geometry, frame)
    except ValueError as e:
        return Prediction(None, None, None, None, f"invalid action: {e}"[:200])
    return Prediction(act.type, act.point, act.text, act.direction, None)


def strict_prediction(rec: Record) -> Prediction:
    """The prediction of a row: its ``pred_*`` fields when present, else the raw ``pred`` text re-parsed."""
    row = rec.row
    if row.get("parse_error"):
        return Prediction(None, None, None, None, f"parse error: {str(row['parse_error'])[:200]}")
    if "pred_action" in row:
        action = row["pred_action"]
        if not isinstance(action, str) or not action.strip():
            return Prediction(None, None, None, None, "pred_action missing or not a string")
        text = row.get("pred_input_text")
        text = text if isinstance(text, str) else None
        direction = text if canonical_action_name(action) == "scroll" else None
        return Prediction(action, pred_point(row.get("pred_coord")), text, direction, None)
    if isinstance(row.get("pred"), str):
        return _reparse(rec)
    return Prediction(None, None, None, None, "no prediction (neither pred_action nor pred)")


# ------------------------------------------------------------------------------------------------ grounding

def _score_grounding(records: Iterable[Record], mode: str, fails: Failures) -> dict[str, Any]:
    hits: dict[str, int] = defaultdict(int)
    full: dict[str, int] = defaultdict(int)
    warn, unp = Warnings(), Unparseable()
    n = 0
    for rec in records:
        n += 1
        group, ui_type = gold_str(rec, "group"), gold_str(rec, "ui_type")
        box = gold_numbers(rec, "gt_bbox", (4,))
        key = f"{group}-{ui_type}"
        full[key] += 1
        if mode == "guir1":
            point = pred_point(rec.row.get("pred_coord"))
            pa = rec.row.get("pred_action")
            if point is None:
                warn.add("pred_coord missing or not two numbers: the reference crashes here; counted as a miss",
                         rec.where)
                unp.add(rec, "pred_coord missing or not two numbers")
                hit = False
            else:
                hit = point_in_box(point, box, strict=True)
        else:
            pred = strict_prediction(rec)
            point, pa = pred.point, pred.action
            if pred.error or point is None:
                unp.add(rec, pred.error or "prediction has no point")
                hit = False
            else:
                hit = point_in_box(point, box, strict=False)
        if hit:
            hits[key] += 1
        else:
            fails.add(rec, reason="point outside the gold box" if point else "no point", point=point,
                      pred_action=pa if isinstance(pa, str) else None, gt_box=box)

    def agg(by) -> tuple[dict[str, float | None], dict[str, dict[str, int]]]:
        h: dict[str, int] = defaultdict(int)
        f: dict[str, int] = defaultdict(int)
        for k, rows in full.items():
            h[by(k)] += hits.get(k, 0)
            f[by(k)] += rows
        return {k: _frac(h[k], f[k]) for k in f}, {k: {"hits": h[k], "n": f[k]} for k in f}

    per_group = {k: hits.get(k, 0) / full[k] for k in full}
    # Group keys are "<group>-<ui_type>"; ui_type never holds "-" in the benchmark files, so split from the right.
    per_platform, platform_counts = agg(lambda k: k.rsplit("-", 1)[0])
    per_ui_type, ui_counts = agg(lambda k: k.rsplit("-", 1)[-1])
    total_hits = sum(hits.values())
    metrics: dict[str, Any] = {
        "overall": _frac(total_hits, n), "per_group": per_group, "per_platform": per_platform,
        "per_ui_type": per_ui_type,
    }
    if mode == "guir1":
        metrics["omitted_by_reference"] = sorted(k for k in full if not hits.get(k))
        metrics["reference_prints_overall"] = False
    counts = {"hits": total_hits, "n": n,
              "per_group": {k: {"hits": hits.get(k, 0), "n": full[k]} for k in full},
              "per_platform": platform_counts, "per_ui_type": ui_counts}
    return {"n_rows": n, "metrics": metrics, "counts": counts, "confusion": {}, "unparseable": unp.as_dict(),
            "warnings": warn.as_list()}


# ------------------------------------------------------- grounding with polygon / refusal gold (2025-26 papers)

def is_refusal(pred: Prediction) -> bool:
    """Whether a prediction refuses: it parsed, and :func:`core.regions.refuses` says its answer refuses."""
    return not pred.error and refuses(pred.action, pred.point)


def _gold_polygon(rec: Record) -> Polygon | None:
    value = rec.row.get("gt_polygon")
    if value is None:
        return None
    try:
        return as_polygon(value)
    except ValueError as e:
        raise PredictionFileError(rec.where, "gt_polygon", str(e)) from None


def region_hit(rec: Record, pred: Prediction) -> tuple[bool, str, tuple[float, ...] | None]:
    """(hit, gold region kind ``bbox`` / ``polygon`` / ``refusal``, box drawn for the gallery) of one row: a refusal
    gold (``gt_action`` impossible) is hit by a refusing prediction only; otherwise the predicted point must lie in
    ``gt_polygon`` when the row has one (:func:`core.regions.point_in_polygon`), else in ``gt_bbox``, edges
    included. Bad gold fields raise :class:`PredictionFileError` naming the row."""
    if canonical_action_name(gold_str(rec, "gt_action")) == REFUSAL_ACTION:
        return is_refusal(pred), "refusal", None
    polygon = _gold_polygon(rec)
    box = gold_numbers(rec, "gt_bbox", (4,))
    if pred.point is None or is_refusal(pred):
        return False, "bbox" if polygon is None else "polygon", box
    if polygon is not None:
        return point_in_polygon(pred.point, polygon), "polygon", box
    return point_in_box(pred.point, box), "bbox", box


class _Cells:
    """Hits and rows per (dimension, value) cell of a benchmark's breakdown."""

    def __init__(self) -> None:
        self.hits: Counter = Counter()
        self.rows: Counter = Counter()

    def add(self, cells: Iterable[tuple[str, str]], hit: bool) -> None:
        for cell in cells:
            self.rows[cell] += 1
            self.hits[cell] += hit

    def frac(self, dim: str, value: str = "") -> float | None:
        return _frac(self.hits[dim, value], self.rows[dim, value])

    def count(self, dim: str, value: str = "") -> dict[str, int]:
        return {"hits": self.hits[dim, value], "n": self.rows[dim, value]}

    def table(self, dim: str, order: Iterable[str] = ()) -> tuple[dict[str, float | None], dict[str, dict[str, int]]]:
        """Accuracy and counts of every value of ``dim`` seen, in ``order`` first, then sorted."""
        rank = {v: i for i, v in enumerate(order)}
        values = sorted((v for d, v in self.rows if d == dim), key=lambda v: (rank.get(v, len(rank)), v))
        return {v: self.frac(dim, v) for v in values}, {v: self.count(dim, v) for v in values}


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _optional_str(rec: Record, field: str) -> str | None:
    value = rec.row.get(field)
    if value is not None and not isinstance(value, str):
        raise PredictionFileError(rec.where, field, f"must be a string, got {type(value).__name__}")
    return value or None


#: Who writes a ``group`` label: UI-Vision's settings and MMBench-GUI's platforms are no other benchmark's
#: (their readers write them; a ScreenSpot or navigation row never has one), and a ``gt_polygon`` is OSWorld-G's.
_GROUP_OWNERS = {**dict.fromkeys(UI_VISION_SETTINGS, "ui_vision"), **dict.fromkeys(MMBENCH_GUI_PLATFORMS, "mmbench_gui")}


def _own_rows(records: Iterable[Record], bench: Benchmark) -> Iterator[Record]:
    """``records``, each checked to be a row of ``bench``: a row that carries another benchmark's own label (a
    UI-Vision setting or MMBench-GUI platform in ``group``, a ``gt_polygon``) stops the scoring naming the row,
    so a mixed or mislabelled file is never scored as ``bench`` without a word."""
    for rec in records:
        group = rec.row.get("group")
        field, owner = (("gt_polygon", "osworld_g") if rec.row.get("gt_polygon") is not None
                        else ("group", _GROUP_OWNERS.get(group) if isinstance(group, str) else None))
        if owner is not None and owner != bench.name:
            shown = "a polygon" if field == "gt_polygon" else quoted(group)
            raise PredictionFileError(rec.where, field, f"{shown} makes this a {BENCHMARKS[owner].title} row, not a "
                                      f"{bench.title} one: a mixed or mislabelled file; score each benchmark's rows "
                                      f"with its own --benchmark ({owner})")
        yield rec


def _label(rec: Record, field: str, allowed: tuple[str, ...], what: str, title: str) -> str:
    """The ``field`` of ``rec``, one of ``allowed`` (the benchmark's own ``what``: its settings, platforms,
    levels); anything else is a row of another benchmark, or a mislabelled one: an error naming the row."""
    value = gold_str(rec, field)
    if value not in allowed:
        raise PredictionFileError(rec.where, field, f"{quoted(value)} is not a {title} {what} ({', '.join(allowed)}): "
                                  "a row of another benchmark, or a mislabelled file?")
    return value


def _with_point(pred: Prediction, point: tuple[float, float]) -> Prediction:
    return Prediction(pred.action, point, pred.text, pred.direction, pred.error)


def _fractions_read(rec: Record, pred: Prediction, as_fractions: Callable[[float, float], bool]) -> Prediction:
    """``pred`` with its point (x, y) read as fractions of the image, (x * W, y * H) ORIGINAL px, when the
    benchmark's evaluator reads such a point so (``as_fractions(x, y)``); otherwise unchanged."""
    if pred.point is None or not as_fractions(*pred.point):
        return pred
    w, h = gold_size(rec)
    return _with_point(pred, (pred.point[0] * w, pred.point[1] * h))


def _osworld_g_point(rec: Record, pred: Prediction) -> Prediction:
    """The answer as OSWorld-G's evaluator scores it: its parser turns an answer without a click (unparseable, or
    an action without a point that is no refusal) into the point [0, 0, 0, 0], so such a row is scored as a click
    at the origin (ORIGINAL px; the parse error stays on the row); a point with both coordinates in [0, 1] is read
    as fractions of the image (``_eval``: ``all(0 <= coord <= 1)``, then ``coord * image_size``)."""
    if pred.point is None and not is_refusal(pred):
        return _with_point(pred, (0.0, 0.0))
    return _fractions_read(rec, pred, lambda x, y: 0 <= x <= 1 and 0 <= y <= 1)


#: A row's verdict as its benchmark's evaluator decides it: (the prediction as shown, in ORIGINAL px; hit; gold
#: region kind; gold box drawn for the gallery).
Verdict = tuple[Prediction, bool, str, "tuple[float, ...] | None"]


def _osworld_g_verdict(rec: Record, pred: Prediction) -> Verdict:
    """OSWorld-G's evaluator compares in ORIGINAL pixels (``_eval``), the answer read as it reads it."""
    shown = _osworld_g_point(rec, pred)
    return (shown, *region_hit(rec, shown))


def _in_fraction_box(rec: Record, pred: Prediction, hit: bool, point: tuple[float, float] | None) -> bool:
    """Whether ``point`` (FRACTIONS of the image) lies in the row's ``gt_bbox_fractions``, edges included: the
    verdict of an evaluator that compares in fractions. ``hit`` (the verdict in pixels) stands for a row written
    before that column existed, and for an answer without a point or a refusing one."""
    if rec.row.get("gt_bbox_fractions") is None or point is None or is_refusal(pred):
        return hit
    x1, y1, x2, y2 = gold_numbers(rec, "gt_bbox_fractions", (4,))
    return x1 <= point[0] <= x2 and y1 <= point[1] <= y2


def _as_fractions(rec: Record, point: tuple[float, float] | None) -> tuple[float, float] | None:
    """A point in ORIGINAL px divided by the image's width and height."""
    if point is None:
        return None
    w, h = gold_size(rec)
    return point[0] / w, point[1] / h


def _mmbench_gui_verdict(rec: Record, pred: Prediction) -> Verdict:
    """MMBench-GUI's L2 evaluator (``evaluate``) reads a point with neither coordinate above 1 as fractions of the
    image, any other point (ORIGINAL px) divided by the image's width and height, and compares it with the box in
    fractions (``gt_bbox_fractions``), so exact edges fall as there."""
    shown = _fractions_read(rec, pred, lambda x, y: not (x > 1 or y > 1))
    hit, region, box = region_hit(rec, shown)
    point = pred.point
    if point is not None and (point[0] > 1 or point[1] > 1):
        point = _as_fractions(rec, point)
    return shown, _in_fraction_box(rec, pred, hit, point), region, box


def _ui_vision_verdict(rec: Record, pred: Prediction) -> Verdict:
    """UI-Vision's evaluator (``eval_sample_positive_gt``) compares the model's point, fractions of the image, with
    the box divided by ``image_size``: the point in ORIGINAL px divided by the image's width and height."""
    hit, region, box = region_hit(rec, pred)
    return pred, _in_fraction_box(rec, pred, hit, _as_fractions(rec, pred.point)), region, box


def _osworld_g_cells(rec: Record, region: str) -> list[tuple[str, str]]:
    categories = [c for c in (_optional_str(rec, "ui_type") or "").split(CATEGORY_SEPARATOR) if c]
    return ([("all", ""), ("box", region)] + ([("answerable", "")] if region != "refusal" else [])
            + [("category", c) for c in categories or [OSWORLD_G_UNCLASSIFIED]])


def _osworld_g_scores(cells: _Cells) -> tuple[dict[str, Any], dict[str, Any]]:
    per_category, category_counts = cells.table("category", (*OSWORLD_G_CATEGORIES, OSWORLD_G_UNCLASSIFIED))
    per_box, box_counts = cells.table("box", OSWORLD_G_BOX_TYPES)
    metrics = {"overall": cells.frac("all"), "overall_no_refusal": cells.frac("answerable"),
               "refusal": cells.frac("box", "refusal"), "per_group": per_category, "per_box_type": per_box}
    counts = {**cells.count("all"), "overall_no_refusal": cells.count("answerable"),
              "refusal": cells.count("box", "refusal"), "per_group": category_counts, "per_box_type": box_counts}
    return metrics, counts


def _ui_vision_cells(rec: Record, region: str) -> list[tuple[str, str]]:
    setting = _label(rec, "group", UI_VISION_SETTINGS, "setting", "UI-Vision")
    category = _optional_str(rec, "ui_type")
    return [("all", ""), ("setting", setting)] + ([("cell", f"{setting}-{category}")] if category else [])


def _ui_vision_scores(cells: _Cells) -> tuple[dict[str, Any], dict[str, Any]]:
    per_setting, setting_counts = cells.table("setting", UI_VISION_SETTINGS)
    per_cell, cell_counts = cells.table("cell", [f"{s}-{c}" for s in UI_VISION_SETTINGS for c in UI_VISION_CATEGORIES])
    metrics = {"overall": cells.frac("all"), **{s: per_setting.get(s) for s in UI_VISION_SETTINGS},
               "final_avg": _mean(per_setting.values()), "per_group": per_cell, "per_setting": per_setting}
    counts = {**cells.count("all"), **setting_counts, "per_group": cell_counts, "per_setting": setting_counts}
    return metrics, counts


def _mmbench_gui_cells(rec: Record, region: str) -> list[tuple[str, str]]:
    platform = _label(rec, "group", MMBENCH_GUI_PLATFORMS, "platform", "MMBench-GUI")
    level = _label(rec, "ui_type", MMBENCH_GUI_LEVELS, "level", "MMBench-GUI")
    return [("all", ""), ("level", level), ("platform", platform), ("cell", f"{platform}-{level}")]


def _mmbench_gui_scores(cells: _Cells) -> tuple[dict[str, Any], dict[str, Any]]:
    per_level, level_counts = cells.table("level", MMBENCH_GUI_LEVELS)
    per_cell, cell_counts = cells.table("cell", [f"{p}-{lv}" for p in MMBENCH_GUI_PLATFORMS
                                                 for lv in MMBENCH_GUI_LEVELS])
    per_platform, platform_counts = cells.table("platform", MMBENCH_GUI_PLATFORMS)
    metrics = {"overall": cells.frac("all"), **{lv: per_level.get(lv) for lv in MMBENCH_GUI_LEVELS},
               "average": _mean(per_level.values()), "per_group": per_cell, "per_platform": per_platform}
    counts = {**cells.count("all"), **level_counts, "per_group": cell_counts, "per_platform": platform_counts}
    return metrics, counts


#: breakdown -> (the row's verdict as the benchmark's evaluator decides it; the cells a row counts in, given its
#: gold region kind; the published numbers of the cells).
_BREAKDOWNS: dict[str, tuple[Callable[[Record, Prediction], Verdict],
                             Callable[[Record, str], list[tuple[str, str]]],
                             Callable[[_Cells], tuple[dict[str, Any], dict[str, Any]]]]] = {
    "osworld_g": (_osworld_g_verdict, _osworld_g_cells, _osworld_g_scores),
    "ui_vision": (_ui_vision_verdict, _ui_vision_cells, _ui_vision_scores),
    "mmbench_gui": (_mmbench_gui_verdict, _mmbench_gui_cells, _mmbench_gui_scores),
}


def _score_regions(records: Iterable[Record], breakdown: str, fails: Failures) -> dict[str, Any]:
    """Grounding with box / polygon / refusal gold (``registry.REGION_HIT``) and the paper's breakdown."""
    verdict, row_cells, scores = _BREAKDOWNS[breakdown]
    cells = _Cells()
    unp = Unparseable()
    n = 0
    for rec in records:
        n += 1
        pred = strict_prediction(rec)
        if pred.error:
            unp.add(rec, pred.error)
        pred, hit, region, box = verdict(rec, pred)
        cells.add(row_cells(rec, region), hit)
        if not hit:
            reason = pred.error or ("did not refuse" if region == "refusal" else "refused" if is_refusal(pred)
                                    else "no point" if pred.point is None else f"point outside the gold {region}")
            fails.add(rec, reason=reason, point=pred.point, pred_action=pred.action, gt_box=box)
    metrics, counts = scores(cells)
    absent = absent_averages(breakdown, metrics)
    metrics.update(dict.fromkeys(absent))  # a mean over only the settings scored is not the paper's number
    return {"n_rows": n, "metrics": metrics, "counts": counts, "confusion": {}, "unparseable": unp.as_dict(),
            "warnings": [], "absent": absent}


# ------------------------------------------------------------------------------------- navigation, guir1 mode

def _guir1_point_hit(rec: Record, warn: Warnings) -> tuple[bool, tuple[float, float] | None, tuple[float, ...]]:
    gt = gold_numbers(rec, "gt_bbox", (2, 4))
    w, h = gold_size(rec)
    point = pred_point(rec.row.get("pred_coord"))
    if point is None:
        warn.add("pred_coord missing or not two numbers: the reference crashes here; counted as a miss", rec.where)
        return False, None, gt
    px, py = point
    try:  # GUI-R1's squared-distance test, kept bit for bit; a point ~1e154 screens away overflows: a miss
        return ((gt[0] - px) / w) ** 2 + ((gt[1] - py) / h) ** 2 < POINT_RADIUS ** 2, point, gt
    except OverflowError:
        return False, point, gt


def _score_navigation_guir1(records: Iterable[Record], fails: Failures) -> dict[str, Any]:
    from core.text_match import guir1_f1

    # Same string-keyed counters as the reference: "<group>-<action>", "...-grounding", "...-text" and "_full".
    score: dict[str, int] = defaultdict(int)
    confusion: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    warn, unp = Warnings(), Unparseable()
    n = 0
    for rec in records:
        n += 1
        group, gta = gold_str(rec, "group"), gold_str(rec, "gt_action")
        category = f"{group}-{gta}"
        score[category + "_full"] += 1
        if "pred_action" not in rec.row:
            warn.add("pred_action missing: the reference crashes here (KeyError); counted as a type miss", rec.where)
        pa = rec.row.get("pred_action")
        if not isinstance(pa, str):
            unp.add(rec, "pred_action missing or null")
        confusion[gta][pa if isinstance(pa, str) else NO_PRED] += 1
        type_hit = gta == pa
        if type_hit:
            score[category] += 1
        arg_ok, point, box = True, pred_point(rec.row.get("pred_coord")), None
        if gta in GUIR1_GROUNDING_ACTIONS:
            ok, point, box = _guir1_point_hit(rec, warn)
            score[category + "-grounding_full"] += 1
            if ok:
                score[category + "-grounding"] += 1
            arg_ok = ok
        if gta in GUIR1_TEXT_ACTIONS:
            gt_text = gold_str(rec, "gt_input_text")
            pred_text = rec.row.get("pred_input_text")
            score[category + "-text_full"] += 1
            if not isinstance(pred_text, str):
                warn.add("pred_input_text missing or not a string: the reference crashes here; counted as a miss",
                         rec.where)
                arg_ok = False
            else:
                # The reference calls calculate_f1_score(gt_text, pred_text): same argument order here.
                arg_ok = guir1_f1(gt_text, pred_text) >= 0.5
                if arg_ok:
                    score[category + "-text"] += 1
        if not (type_hit and arg_ok):
            fails.add(rec, reason="type mismatch" if not type_hit else "argument wrong", point=point,
                      pred_action=pa if isinstance(pa, str) else None, gt_box=box)

    # The reference sums only keys that were ever incremented, i.e. categories with at least one hit.
    tot = {"type": [0, 0], "gr": [0, 0], "step": [0, 0]}
    for key in [k for k in score if not k.endswith("full")]:
        hit, full_n = score[key], score[key + "_full"]
        if key.endswith("grounding"):
            kinds = ("step", "gr")
        elif key.endswith("text"):
            kinds = ("step",)
        else:
            kinds = ("type",)
        for kind in kinds:
            tot[kind][0] += hit
            tot[kind][1] += full_n
    metrics: dict[str, Any] = {}
    for kind, out in (("type", "type"), ("gr", "gr"), ("step", "sr")):
        h, f = tot[kind]
        if f == 0:
            warn.add(f"no {out} hits at all: the reference divides by zero here; reported as 0")
            metrics[out] = 0.0
        else:
            metrics[out] = h / f
    per_category: dict[str, Any] = {}
    for key in [k[: -len("_full")] for k in score if k.endswith("_full")]:
        if key.endswith(("-grounding", "-text")):
            continue
        g_n, t_n = score.get(key + "-grounding_full", 0), score.get(key + "-text_full", 0)
        g_h, t_h = score.get(key + "-grounding", 0), score.get(key + "-text", 0)
        omitted = [kind for kind, hh, nn in (("type", score.get(key, 0), 1), ("gr", g_h, g_n), ("text", t_h, t_n))
                   if nn and not hh]
        per_category[key] = {
            "n": score[key + "_full"], "type": score.get(key, 0) / score[key + "_full"],
            "gr": _frac(g_h, g_n), "text": _frac(t_h, t_n), "sr": _frac(g_h + t_h, g_n + t_n),
            "hits": {"type": score.get(key, 0), "gr": g_h, "text": t_h}, "rows": {"gr": g_n, "text": t_n},
            "omitted_by_reference": omitted,
        }
    metrics["per_category"] = per_category
    # "left_out": rows the metric applies to that the reference drops from its denominator (zero-hit categories)
    eligible = {"type": n, "gr": sum(v for k, v in score.items() if k.endswith("-grounding_full")),
                "step": sum(v for k, v in score.items() if k.endswith(("-grounding_full", "-text_full")))}
    counts = {out: {"hits": tot[kind][0], "n": tot[kind][1], "left_out": eligible[kind] - tot[kind][1]}
              for kind, out in (("type", "type"), ("gr", "gr"), ("step", "sr"))}
    return {"n_rows": n, "metrics": metrics, "counts": counts,
            "confusion": {k: dict(v) for k, v in confusion.items()}, "unparseable": unp.as_dict(),
            "warnings": warn.as_list()}


# ------------------------------------------------------------------------------------ navigation, strict mode

def _strict_point_ok(point: tuple[float, float] | None, gold: GoldRecord) -> bool:
    """Grounding: the point in the gold box, or within :data:`core.matching.POINT_RADIUS` of a gold point."""
    in_box, dist, _ = point_facts(point, gold, Frame.ORIGINAL)
    return bool(in_box) if in_box is not None else dist is not None and dist < POINT_RADIUS


class _Tally:
    __slots__ = ("gr", "gr_n", "n", "sr", "type")

    def __init__(self) -> None:
        self.n = self.type = self.sr = self.gr = self.gr_n = 0

    def add(self, type_hit: bool, sr_hit: bool, gr: bool | None) -> None:
        self.n += 1
        self.type += type_hit
        self.sr += sr_hit
        if gr is not None:
            self.gr_n += 1
            self.gr += gr

    def scores(self) -> dict[str, Any]:
        return {"n": self.n, "type": _frac(self.type, self.n), "gr": _frac(self.gr, self.gr_n),
                "sr": _frac(self.sr, self.n),
                "hits": {"type": self.type, "gr": self.gr, "sr": self.sr}, "rows": {"gr": self.gr_n}}


def _strict_gold(rec: Record) -> GoldRecord:
    """The row's gold record (:func:`core.records.from_prediction_row`); bad gold names the row and field."""
    try:
        return from_prediction_row(rec.row, rec.where)
    except GoldRecordError as e:
        raise PredictionFileError(rec.where, e.field, e.reason) from None


def _score_navigation_strict(records: Iterable[Record], fails: Failures) -> dict[str, Any]:
    total = _Tally()
    per_action: dict[str, _Tally] = defaultdict(_Tally)
    per_group: dict[str, _Tally] = defaultdict(_Tally)
    per_category: dict[str, _Tally] = defaultdict(_Tally)
    confusion: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    unp = Unparseable()
    for rec in records:
        group = gold_str(rec, "group")
        gta = canonical_action_name(gold_str(rec, "gt_action"))
        if gta in POINT_ACTIONS:
            gold_numbers(rec, "gt_bbox", (2, 4))
            gold_size(rec)
        gold = _strict_gold(rec)
        pred = strict_prediction(rec)
        if pred.error:
            unp.add(rec, pred.error)
        pa = canonical_action_name(pred.action) if pred.action else None
        confusion[gta][pa or NO_PRED] += 1
        try:
            m = match(Predicted(pred.action, pred.point, pred.text, pred.direction, Frame.ORIGINAL), gold)
        except GoldRecordError as e:
            raise PredictionFileError(rec.where, e.field, e.reason) from None
        type_hit = m.type_ok
        gr: bool | None = None
        box = None
        if gta in POINT_ACTIONS:
            box = gold.box or gold.point
            gr = _strict_point_ok(pred.point, gold)
        sr_hit = m.ok
        for t in (total, per_action[gta], per_group[group], per_category[f"{group}-{gta}"]):
            t.add(type_hit, sr_hit, gr)
        if not sr_hit:
            reason = pred.error or ("type mismatch" if not type_hit else "argument wrong")
            fails.add(rec, reason=reason, point=pred.point, pred_action=pred.action, gt_box=box)
    s = total.scores()
    metrics = {"type": s["type"], "gr": s["gr"], "sr": s["sr"],
               "per_category": {k: v.scores() for k, v in per_category.items()},
               "per_action": {k: v.scores() for k, v in per_action.items()},
               "per_group": {k: v.scores() for k, v in per_group.items()}}
    counts = {"type": {"hits": total.type, "n": total.n}, "gr": {"hits": total.gr, "n": total.gr_n},
              "sr": {"hits": total.sr, "n": total.n}}
    return {"n_rows": total.n, "metrics": metrics, "counts": counts,
            "confusion": {k: dict(v) for k, v in confusion.items()}, "unparseable": unp.as_dict(), "warnings": []}


# ---------------------------------------------------------------------------------------------- Mind2Web

_M2W_OP = {"click": 4, "hover": 4, "enter": 4, "press_enter": 4, "select": 2, "type": 3}


def mind2web_f1(pred: str, label: str) -> float:
    """Token-set F1 of SeeClick's Mind2Web evaluation (both empty: 1, one empty: 0)."""
    p, g = set(pred.strip().split()), set(label.strip().split())
    if not p and not g:
        return 1.0
    if not p or not g:
        return 0.0
    tp = len(p & g)
    if tp == 0:
        return 0.0
    precision, recall = tp / len(p), tp / len(g)
    return 2 * precision * recall / (precision + recall)


def _m2w_op_str(op: int, text: str | None) -> str:
    return f"{op} {(text or '').lower()}" if op in (2, 3) else str(op)


def _score_mind2web(records: Iterable[Record], fails: Failures) -> dict[str, Any]:
    n = ele = op_match = sr = 0
    op_f1: dict[int, list[float]] = {4: [0.0, 0], 2: [0.0, 0], 3: [0.0, 0]}  # sum, count per gold op
    episodes: dict[str, bool] = {}
    confusion: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    unp = Unparseable()
    for rec in records:
        n += 1
        gta = canonical_action_name(gold_str(rec, "gt_action"))
        if gta not in _M2W_OP:
            raise PredictionFileError(rec.where, "gt_action", f"Mind2Web actions are {sorted(_M2W_OP)}, got {gta!r}")
        box = gold_numbers(rec, "gt_bbox", (4,))
        gold_op = _M2W_OP[gta]
        pred = strict_prediction(rec)
        if pred.error:
            unp.add(rec, pred.error)
        pa = canonical_action_name(pred.action) if pred.action else None
        confusion[gta][pa or NO_PRED] += 1
        pred_op = _M2W_OP.get(pa or "", -1)
        op_match += pred_op == gold_op
        ele_hit = pred.point is not None and point_in_box(pred.point, box)
        ele += ele_hit
        f1 = 0.0 if pred.error else mind2web_f1(_m2w_op_str(pred_op, pred.text),
                                                  _m2w_op_str(gold_op, gold_str(rec, "gt_input_text", "")))
        op_f1[gold_op][0] += f1
        op_f1[gold_op][1] += 1
        step_ok = f1 == 1.0 and ele_hit
        sr += step_ok
        ep = rec.row.get("annot_id", rec.row.get("episode_id"))
        if ep is not None:
            episodes[str(ep)] = episodes.get(str(ep), True) and step_ok
        if not step_ok:
            fails.add(rec, reason=pred.error or ("element missed" if not ele_hit else "operation wrong"),
                      point=pred.point, pred_action=pred.action, gt_box=box)
    per_op = {name: (s / c if c else None) for name, (s, c) in zip(("CLICK", "SELECT", "TYPE"), op_f1.values(), strict=False)}
    present = [v for v in per_op.values() if v is not None]
    metrics = {"type": _frac(op_match, n), "gr": _frac(ele, n), "sr": _frac(sr, n),
               "op_f1": sum(present) / len(present) if present else None, "op_f1_per_op": per_op,
               "episode_sr": _frac(sum(episodes.values()), len(episodes)) if episodes else None}
    counts = {"type": {"hits": op_match, "n": n}, "gr": {"hits": ele, "n": n}, "sr": {"hits": sr, "n": n},
              "episodes": len(episodes)}
    return {"n_rows": n, "metrics": metrics, "counts": counts,
            "confusion": {k: dict(v) for k, v in confusion.items()}, "unparseable": unp.as_dict(), "warnings": []}


# ------------------------------------------------------------------------------------------------ entry point

def score_records(records: Iterable[Record], benchmark: str | Benchmark, mode: str = "strict",
                  max_failures: int = 0) -> EvalResult:
    """Score rows of one benchmark.  ``max_failures`` wrong rows are kept on the result for the gallery."""
    bench = benchmark if isinstance(benchmark, Benchmark) else get_benchmark(benchmark)
    if mode not in MODES:
        raise ValueError(f"unknown mode {quoted(mode)}; use one of {MODES}")
    if mode not in bench.modes:
        raise ValueError(f"benchmark {bench.name!r} has no {mode!r} mode (GUI-R1's evaluator does not cover it); "
                         f"available: {', '.join(bench.modes)}")
    fails = Failures(max_failures)
    records = _own_rows(records, bench)
    if bench.kind == "grounding" and bench.breakdown in _BREAKDOWNS:
        out = _score_regions(records, bench.breakdown, fails)
    elif bench.kind == "grounding":
        out = _score_grounding(records, mode, fails)
    elif bench.kind == "navigation":
        out = (_score_navigation_guir1 if mode == "guir1" else _score_navigation_strict)(records, fails)
    elif bench.kind == "mind2web":
        out = _score_mind2web(records, fails)
    else:
        out = score_aitw(records, fails)
    return EvalResult(benchmark=bench.name, mode=mode, definition=bench.definitions[mode], source=bench.source,
                      failures=fails.rows, **out)


def evaluate(paths, benchmark: str | Benchmark, mode: str = "strict", max_failures: int = 0) -> EvalResult:
    """Score one or more prediction files (streamed) of ``benchmark`` in ``mode``."""
    return score_records(iter_records(paths), benchmark, mode, max_failures)
