"""Reports of scored benchmarks: a rich console table, a JSON file, markdown laid out like the GUI-R1 paper
tables (each followed by the row count ``n`` and the files it was scored on), and a side-by-side comparison of
two runs.

A *run* is ``{"name": str, "mode": str, "results": {benchmark: EvalResult.to_json()}}`` (what
``gui-agent eval-report`` writes as ``report.json``); a single ``gui-agent eval --json`` file is also accepted
wherever a run is read.  Numbers in tables are percentages with one decimal, as in the paper.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from core.console import bounded, make_console, quoted, styled
from core.eval.registry import BENCHMARKS, get_benchmark
from core.io import atomic_write_bytes
from core.markdown import md_table, md_text
from core.numbers import NumberError, checked_number

NAV_CELLS = ("type", "gr", "sr")
#: Column order of the GUI-R1 paper tables.
SCREENSPOT_GROUPS = ("mobile", "desktop", "web")
SCREENSPOT_PRO_GROUPS = ("cad", "dev", "creative", "scientific", "office", "os")
LOW_LEVEL = ("guiact_web", "omniact_web", "omniact_desktop", "androidcontrol_low")
HIGH_LEVEL = ("androidcontrol_high", "guiodyssey")
DASH = "–"
_DISPLAY = {"cad": "CAD", "os": "OS"}


def write_json(obj: Any, path: str | Path) -> Path:
    """Write ``obj`` as indented JSON atomically (:func:`write_text`)."""
    return write_text(json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n", path)


def write_text(text: str, path: str | Path) -> Path:
    """Write ``text`` as UTF-8 atomically (:func:`core.io.atomic_write_bytes`, mode 0644). A lone surrogate from
    model text is written as its escape ``\\udXXX``, which JSON reads back as the same character: lossless,
    and never an encoding error."""
    return atomic_write_bytes(path, text.encode("utf-8", "backslashreplace"))


def make_run(name: str, mode: str, results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {"name": name, "mode": mode, "results": {r["benchmark"]: dict(r) for r in results}}


def load_run(path: str | Path) -> dict[str, Any]:
    """A run from a ``report.json`` or a single-benchmark ``eval --json`` file (named after the file), checked
    (:func:`checked_run`): ``ValueError`` with one line naming the file and field for anything else."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{bounded(path)}: cannot read a report: {e}") from None
    except RecursionError:
        raise ValueError(f"{bounded(path)}: cannot read a report: nested too deeply") from None
    return checked_run(data, path)


#: The numbers of a result :func:`headline` shows when the registry names none.
DEFAULT_HEADLINE = ("overall", "type", "gr", "sr", "op_f1", "param", "param_tolerant", "sr_tolerant", "episode_sr")


def _json_kind(value: Any) -> str:
    """``value``'s JSON type, as an error names it."""
    return {bool: "a boolean", str: "a string", list: "a list", dict: "an object", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _report_error(path: Path, field: str, why: str) -> ValueError:
    return ValueError(f"{bounded(path)}: field {quoted(field)}: {why}")


def _read_keys(bench: str) -> tuple[str, ...]:
    """The metrics of a ``bench`` result that comparisons read: its headline and its published metrics."""
    b = BENCHMARKS.get(bench)
    keys = (b.headline or DEFAULT_HEADLINE) if b is not None else DEFAULT_HEADLINE
    extra = (b.published_metric, b.published_metric_no_refusal) if b is not None else ("overall",)
    return tuple(dict.fromkeys(k for k in (*keys, *extra) if k))


def _checked_result(result: Any, path: Path, where: str, bench: str) -> None:
    """``result`` (one benchmark's ``eval --json`` object, at ``where`` in the file) is what reports and comparisons
    read: an object with an object ``metrics`` whose read numbers (:func:`_read_keys`) are numbers or null,
    optional objects ``counts`` (a left-out count with whole ``n`` / ``left_out``), ``data`` (``preset`` a
    string or null) and ``absent``, a string ``benchmark``; else ``ValueError`` naming the field."""
    if not isinstance(result, dict):
        raise _report_error(path, where or "(top level)", f"must be an object, got {_json_kind(result)}")
    at = f"{where}." if where else ""
    if not isinstance(result.get("benchmark", bench), str):
        raise _report_error(path, f"{at}benchmark", f"must be a string, got {_json_kind(result['benchmark'])}")
    for field, needed in (("metrics", True), ("counts", False), ("data", False), ("absent", False)):
        value = result.get(field)
        if value is None and not needed:
            continue
        if not isinstance(value, dict):
            raise _report_error(path, f"{at}{field}", f"must be an object, got {_json_kind(value)}"
                                if field in result else "missing")
    counts = result.get("counts") or {}
    for key in _read_keys(bench):
        value = result["metrics"].get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise _report_error(path, f"{at}metrics.{key}", f"must be a number or null, got {_json_kind(value)}")
        c = counts.get(key)
        if isinstance(c, dict) and c.get("left_out") is not None:
            for part in ("n", "left_out"):
                if isinstance(c.get(part), bool) or not isinstance(c.get(part), int):
                    raise _report_error(path, f"{at}counts.{key}.{part}",
                                        f"must be a whole number, got {_json_kind(c.get(part))}")
    preset = (result.get("data") or {}).get("preset")
    if preset is not None and not isinstance(preset, str):
        raise _report_error(path, f"{at}data.preset", f"must be a string or null, got {_json_kind(preset)}")


def checked_run(data: Any, path: Path) -> dict[str, Any]:
    """``data`` (a JSON document read from ``path``) as a run: a ``report.json`` (a non-empty string ``name``, a
    string ``mode`` when given, ``results`` an object of :func:`_checked_result` objects) or one ``eval --json``
    result (``benchmark`` + ``metrics``, named after the file). Anything else, wrong types, missing fields, is a
    ``ValueError`` of one line naming the file and the field (``results.osworld_g.metrics``)."""
    if isinstance(data, dict) and "results" in data:
        if not isinstance(data["results"], dict):
            raise _report_error(path, "results", f"must be an object, got {_json_kind(data['results'])}")
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _report_error(path, "name", "missing" if name is None else
                                f"must be a non-empty string, got {quoted(name, 60)}")
        if not isinstance(data.get("mode", "?"), str):
            raise _report_error(path, "mode", f"must be a string, got {_json_kind(data['mode'])}")
        for bench, result in data["results"].items():
            _checked_result(result, path, f"results.{bench}", bench)
        return data
    if isinstance(data, dict) and "benchmark" in data and "metrics" in data:
        if not isinstance(data["benchmark"], str):
            raise _report_error(path, "benchmark", f"must be a string, got {_json_kind(data['benchmark'])}")
        _checked_result(data, path, "", data["benchmark"])
        mode = data.get("mode", "?")
        return make_run(path.stem, mode if isinstance(mode, str) else "?", [data])
    raise ValueError(f"{bounded(path)}: not a report (needs 'results' or 'benchmark' + 'metrics')")


def pct(v: float | None) -> str:
    return DASH if v is None else f"{100 * v:.1f}"


def left_out_note(result: Mapping[str, Any], key: str) -> str:
    """`` (n=4 of 73)`` when the ``key`` number of ``result`` leaves rows out of its denominator (GUI-R1's
    evaluator drops zero-hit categories: ``counts[key]["left_out"]``), else empty."""
    c = (result.get("counts") or {}).get(key)
    if not isinstance(c, Mapping) or not c.get("left_out"):
        return ""
    return f" (n={c['n']} of {c['n'] + c['left_out']})"


def share(value: Any) -> float | None:
    """``value`` when it is a share in [0, 1] (what every metric is), else None: a report read back may hold
    ``5`` or ``1e308``, which no table shows as a percentage."""
    try:
        return None if value is None else checked_number(value, "metric", minimum=0, maximum=1)
    except NumberError:
        return None


def shown_number(result: Mapping[str, Any] | None, key: str) -> str:
    """The ``key`` metric of ``result`` as a table shows it: a percentage with one decimal and, where rows are
    left out of it, how many (:func:`left_out_note`); a dash when missing, and one saying so when it is not a
    share in [0, 1]."""
    if not result:
        return DASH
    value = result["metrics"].get(key)
    if value is not None and share(value) is None:
        return f"{DASH} (not a share in [0, 1])"
    return pct(value) + left_out_note(result, key)


def paper_overall(cells: Iterable[float | None]) -> float | None:
    """The paper's Overall column: the plain mean of the Type/GR/SR cells of a table row (missing cells skipped)."""
    vals = [c for c in cells if c is not None]
    return sum(vals) / len(vals) if vals else None


def headline(result: Mapping[str, Any]) -> dict[str, float | None]:
    """The main numbers of a result: the benchmark's own ``headline`` (its paper's numbers) when the registry
    names one, else ``overall`` for grounding, Type/GR/SR (+ extras) for the others."""
    m = result["metrics"]
    bench = BENCHMARKS.get(result.get("benchmark"))
    keys = bench.headline if bench is not None and bench.headline else DEFAULT_HEADLINE
    return {k: m[k] for k in keys if k in m}


# -------------------------------------------------------------------------------------------------- markdown

def _lookup(per: Mapping[str, float | None], group: str, ui: str) -> float | None:
    for k, v in per.items():
        g, _, u = k.rpartition("-")
        if g.lower() == group and u.lower() == ui:
            return v
    return None


def _groups_in_order(per: Mapping[str, Any], known: tuple[str, ...]) -> list[str]:
    present = {k.rpartition("-")[0].lower() for k in per}
    return [g for g in known if g in present] + sorted(present - set(known))


def data_label(result: Mapping[str, Any]) -> str:
    """``n=<rows>`` and the files a result was scored from: its prediction files and, where the rows record it
    (``image_source``), the benchmark data the predictions were made on; with ``eval --preset``, the preset and
    the reading of its answers (``authors`` / ``tolerant``; a result written before readings existed: tolerant)."""
    data = result.get("data") or {}
    label = f"n={result['n_rows']}"
    if data.get("predictions"):
        label += f", predictions {', '.join(data['predictions'])}"
    if data.get("inputs"):
        label += f" on {', '.join(data['inputs'])}"
    if isinstance(data.get("preset"), str):  # which reading of the answers produced the numbers (core.authors)
        label += f", preset {data['preset']}, {data.get('reading', 'tolerant')} reading"
    return label


def _data_lines(runs: list[Mapping[str, Any]], benches: Iterable[str]) -> str:
    lines = [f"- {md_text(r['name'])} / {BENCHMARKS[b].title}: {md_text(data_label(r['results'][b]))}"
             for b in benches for r in runs if b in r["results"]]
    return "\n\nRows and data:\n\n" + "\n".join(lines)


def _grounding_table(runs: list[Mapping[str, Any]], bench: str, known: tuple[str, ...]) -> str | None:
    have = [r for r in runs if bench in r["results"]]
    if not have:
        return None
    groups: list[str] = []
    for r in have:
        for g in _groups_in_order(r["results"][bench]["metrics"]["per_group"], known):
            if g not in groups:
                groups.append(g)
    title = get_benchmark(bench).title
    header = ["Model"] + [f"{_DISPLAY.get(g, g.capitalize())} {u}" for g in groups
                         for u in ("Text", "Icon")] + ["Text", "Icon", "Avg"]
    rows = []
    for r in have:
        m = r["results"][bench]["metrics"]
        cells = [pct(_lookup(m["per_group"], g, u)) for g in groups for u in ("text", "icon")]
        cells += [pct(m.get("per_ui_type", {}).get("text")), pct(m.get("per_ui_type", {}).get("icon")),
                  pct(m["overall"])]
        rows.append([r["name"]] + cells)
    return f"### {title}\n\n" + md_table(header, rows) + _data_lines(have, [bench])


def _nav_table(runs: list[Mapping[str, Any]], benches: tuple[str, ...], caption: str) -> str | None:
    present = [b for b in benches if any(b in r["results"] for r in runs)]
    if not present:
        return None
    header = ["Model"] + [f"{BENCHMARKS[b].title} {c}" for b in present for c in ("Type", "GR", "SR")] + ["Overall"]
    rows = []
    for r in runs:
        vals, cells = [], []
        for b in present:
            res = r["results"].get(b)
            vals += [res["metrics"].get(c) if res else None for c in NAV_CELLS]
            cells += [shown_number(res, c) for c in NAV_CELLS]
        rows.append([r["name"]] + cells + [pct(paper_overall(vals))])
    return f"### {caption}\n\n" + md_table(header, rows) + _data_lines(runs, present)


def _other_table(runs: list[Mapping[str, Any]], bench: str) -> str | None:
    have = [r for r in runs if bench in r["results"]]
    if not have:
        return None
    keys = list(headline(have[0]["results"][bench]))
    rows = [[r["name"]] + [shown_number(r["results"][bench], k) for k in keys] for r in have]
    return f"### {BENCHMARKS[bench].title}\n\n" + md_table(["Model"] + keys, rows) + _data_lines(have, [bench])


def markdown_report(runs: list[Mapping[str, Any]] | Mapping[str, Any]) -> str:
    """Markdown tables laid out like GUI-R1's: grounding (ScreenSpot, -v2, -Pro), low-level and high-level
    (Type/GR/SR per benchmark + Overall = mean of the cells), then AITW / Mind2Web and the grounding benchmarks
    with their own breakdown (OSWorld-G, UI-Vision, MMBench-GUI: their headline numbers).  One row per run."""
    if isinstance(runs, Mapping):
        runs = [runs]
    modes = sorted({r.get("mode", "?") for r in runs})
    if len(modes) > 1:  # say which mode each row is in
        runs = [{**r, "name": f"{r['name']} ({r.get('mode', '?')})"} for r in runs]
    parts = [f"## Evaluation ({md_text(', '.join(modes))} mode)"]
    for t in (_grounding_table(runs, "screenspot", SCREENSPOT_GROUPS),
              _grounding_table(runs, "screenspot_v2", SCREENSPOT_GROUPS),
              _grounding_table(runs, "screenspot_pro", SCREENSPOT_PRO_GROUPS),
              _nav_table(runs, LOW_LEVEL, "Low-level tasks"),
              _nav_table(runs, HIGH_LEVEL, "High-level tasks"),
              _other_table(runs, "aitw"), _other_table(runs, "mind2web"),
              *(_other_table(runs, b) for b, bench in BENCHMARKS.items()
                if bench.kind == "grounding" and bench.breakdown != "screenspot")):
        if t:
            parts.append(t)
    notes = []
    for r in runs:
        for b, res in r["results"].items():
            u = res.get("unparseable", {}).get("count", 0)
            if u:
                notes.append(f"- {md_text(r['name'])} / {md_text(b)}: {u} of {res['n_rows']} predictions "
                             "unparseable (counted wrong)")
            for k, why in (res.get("absent") or {}).items():
                notes.append(f"- {md_text(r['name'])} / {md_text(b)}: {md_text(k)} absent: {md_text(why)}")
            for w in res.get("warnings", []):
                notes.append(f"- {md_text(r['name'])} / {md_text(b)}: {md_text(w['message'])} ({w['count']}x)")
    if notes:
        parts.append("Notes:\n\n" + "\n".join(notes))
    return "\n\n".join(parts) + "\n"


# --------------------------------------------------------------------------------------------------- compare

def compare_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, str, float | None, float | None]]:
    """(benchmark, metric, value in run a, value in run b) for every headline number of either run."""
    rows = []
    for bench in [x for x in BENCHMARKS if x in a["results"] or x in b["results"]]:
        ha = headline(a["results"][bench]) if bench in a["results"] else {}
        hb = headline(b["results"][bench]) if bench in b["results"] else {}
        for k in list(dict.fromkeys([*ha, *hb])):
            rows.append((bench, k, share(ha.get(k)), share(hb.get(k))))
    return rows


def _compare_cells(a: Mapping[str, Any], b: Mapping[str, Any], bench: str, k: str) -> tuple[str, str]:
    return shown_number(a["results"].get(bench), k), shown_number(b["results"].get(bench), k)


def compare_markdown(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    rows = []
    for bench, k, va, vb in compare_rows(a, b):
        delta = DASH if va is None or vb is None else f"{100 * (vb - va):+.1f}"
        rows.append([BENCHMARKS[bench].title, k, *_compare_cells(a, b, bench, k), delta])
    return md_table(["Benchmark", "Metric", a["name"], b["name"], "Δ"], rows) + "\n"


# --------------------------------------------------------------------------------------------------- console

def print_result(result: Mapping[str, Any], console=None) -> None:
    """A rich table of one benchmark result (headline numbers, then the per-group / per-category breakdown)."""
    from rich.table import Table

    console = console or make_console()
    head = Table(title=f"{result['benchmark']} ({result['mode']} mode, {data_label(result)})")
    head.add_column("metric")
    head.add_column("value %", justify="right")
    head.add_column("hits / n", justify="right")
    counts = result.get("counts", {})
    for k in headline(result):
        c = counts.get(k) or (counts if k == "overall" else {})
        head.add_row(k, shown_number(result, k), f"{c.get('hits', '')} / {c.get('n', '')}" if c else "")
    console.print(head)
    m = result["metrics"]
    if "per_group" in m and "overall" in m:
        t = Table(title="per group-ui_type")
        for col in ("group", "accuracy %", "hits / n", "note"):
            t.add_column(col)
        omitted = set(m.get("omitted_by_reference", []))
        for k, v in m["per_group"].items():
            c = counts["per_group"][k]
            t.add_row(k, pct(v), f"{c['hits']} / {c['n']}", "not printed by GUI-R1 (0 hits)" if k in omitted else "")
        console.print(t)
    elif "per_category" in m:
        t = Table(title="per category (group-action)")
        for col in ("category", "n", "Type %", "GR %", "SR %", "note"):
            t.add_column(col)
        for k, v in m["per_category"].items():
            omitted = v.get("omitted_by_reference") or []
            note = f"left out of GUI-R1 totals: {', '.join(omitted)}" if omitted else ""
            t.add_row(k, str(v["n"]), pct(v["type"]), pct(v["gr"]), pct(v["sr"]), note)
        console.print(t)
    unp = result.get("unparseable", {})
    if unp.get("count"):
        console.print(styled(f"{unp['count']} unparseable predictions counted as wrong;", "yellow"), "first: "
                      + "; ".join(f"{e['where']} ({e['reason']})" for e in unp["examples"][:3]))
    for k, why in (result.get("absent") or {}).items():
        console.print(styled(f"{k} absent:", "yellow"), why)
    for w in result.get("warnings", []):
        console.print(styled("warning:", "yellow"), f"{w['message']} ({w['count']}x"
                      + (f", e.g. {', '.join(w['examples'][:2])}" if w["examples"] else "") + ")")


def print_compare(a: Mapping[str, Any], b: Mapping[str, Any], console=None) -> None:
    from rich.table import Table

    console = console or make_console()
    t = Table(title=f"{a['name']} vs {b['name']}")
    for col in ("benchmark", "metric", a["name"], b["name"], "Δ"):
        t.add_column(col, justify="right" if col not in ("benchmark", "metric") else "left")
    for bench, k, va, vb in compare_rows(a, b):
        if va is None or vb is None:
            delta = DASH
        else:
            d = 100 * (vb - va)
            delta = styled(f"{d:+.1f}", "green") if d > 0 else styled(f"{d:+.1f}", "red") if d < 0 else "0.0"
        t.add_row(BENCHMARKS[bench].title, k, *_compare_cells(a, b, bench, k), delta)
    console.print(t)
