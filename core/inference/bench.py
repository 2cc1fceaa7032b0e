"""Benchmark input: a GUI-R1-layout parquet (``gt_action``/``gt_bbox`` columns) or a unified parquet from
``gui-agent data convert``, read with the ``core.data.ingest`` readers.

Records the reader rejects (missing or corrupt image, invalid box...) come out as
:class:`~core.inference.rows.SkippedRecord` in their place, so they get a row with ``error`` instead of
vanishing or stopping the run.

Which benchmark a file holds (:func:`input_benchmark`, what ``infer --preset`` picks the authors' prompt and pixel
bounds by) is read from the file, never guessed: ``--benchmark`` when given, else the rows' own ``benchmark``
field, the GUI-R1 file name ``<benchmark>_test.parquet`` or the unified rows' ``source``; the kind of task from the
rows themselves (a grounding row: ``task_type`` grounding, or in GUI-R1's layout no history and a target box).
A name that contradicts the rows is an error naming ``--benchmark``.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from core.console import quoted
from core.data.summary import ConversionSummary
from core.data.unified import UNIFIED_SCHEMA
from core.eval.registry import BENCHMARKS, benchmark_for_file, get_benchmark
from core.inference.rows import SkippedRecord, gold_columns, history_string
from core.io import atomic_path
from core.schema import Step

#: Columns that identify each layout.
UNIFIED_COLUMNS = frozenset({"id", "image", "image_width", "image_height", "action", "task_type"})
GUIR1_COLUMNS = frozenset({"image", "instruction", "gt_action"})


def _parquet_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        if not files:
            raise FileNotFoundError(f"no .parquet file under {path}")
        return files
    if not path.is_file():
        raise FileNotFoundError(f"benchmark file {path} does not exist")
    return [path]


def detect_layout(path: str | Path) -> str:
    """``unified`` or ``guir1`` from the parquet schema; ``ValueError`` names the missing columns otherwise."""
    first = _parquet_files(Path(path))[0]
    names = set(pq.ParquetFile(first).schema_arrow.names)
    if UNIFIED_COLUMNS <= names:
        return "unified"
    if GUIR1_COLUMNS <= names:
        return "guir1"
    raise ValueError(f"{first}: neither a unified parquet (needs columns {sorted(UNIFIED_COLUMNS)}) nor a "
                     f"GUI-R1 benchmark parquet (needs {sorted(GUIR1_COLUMNS)}); columns are {sorted(names)}")


def count_rows(path: str | Path) -> int:
    """Rows of the benchmark (parquet metadata only)."""
    return sum(pq.ParquetFile(p).metadata.num_rows for p in _parquet_files(Path(path)))


#: Unified rows' ``source`` values (written by ``gui-agent data convert``) that name a registered benchmark.
#: ScreenSpot's v1, v2 and Pro files all say ``screenspot``: every preset treats the three alike. The readers of
#: OSWorld-G, UI-Vision and MMBench-GUI (:mod:`core.data.ingest`) write their benchmark's name.
SOURCE_BENCHMARKS = {name: name for name in ("screenspot", "aitw", "guiodyssey", "mind2web", "osworld_g", "ui_vision",
                                             "mmbench_gui")}
#: History strings that mean "no earlier step" (GUI-R1's parquet writes `` \nNone\n`` for a first step).
_NO_HISTORY = ("", "none", "[]", "null")


@dataclass(frozen=True)
class InputBenchmark:
    """What a benchmark file holds: ``name`` (a :data:`core.eval.registry.BENCHMARKS` name, None when the file
    does not say), ``kind`` (``grounding`` or ``navigation``; None when its rows are of both kinds) and
    ``evidence`` (where each was read, for the ``infer`` line and error messages)."""

    name: str | None
    kind: str | None
    evidence: str

    def describe(self) -> str:
        return f"benchmark {self.name or 'not named'}, {self.kind or 'mixed'} rows ({self.evidence})"


def benchmark_kind(name: str) -> str:
    """``grounding`` or ``navigation`` (every benchmark that is not a grounding one)."""
    return "grounding" if BENCHMARKS[name].kind == "grounding" else "navigation"


def _has_box(value: object) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 4 and all(isinstance(v, (int, float)) for v in value)


def _row_kind(row: dict, layout: str) -> str:
    """``grounding``, ``navigation`` or ``first`` (GUI-R1 layout: no history and a target box, which is a grounding
    row or the first step of an episode; the other rows of the file decide)."""
    task = str(row.get("task_type") or "").strip().lower()
    if task == "grounding":
        return "grounding"
    if layout == "unified":  # data convert always writes task_type
        return "navigation"
    history = row.get("history")
    if str(history or "").strip().lower() in _NO_HISTORY and _has_box(row.get("gt_bbox")):
        return "first"
    return "navigation"


def input_benchmark(path: str | Path, layout: str | None = None, *, given: str | None = None) -> InputBenchmark:
    """The benchmark and kind of task of the file ``path`` (see the module docstring). ``given``: ``--benchmark``
    (a registered name, trusted). ``ValueError`` for an unknown ``given``, a file whose rows name several
    benchmarks, or a name that contradicts the rows (a navigation benchmark's name on grounding rows)."""
    if given is not None:
        get_benchmark(given)
        return InputBenchmark(given, benchmark_kind(given), "--benchmark")
    path = Path(path)
    layout = layout or detect_layout(path)
    wanted = ("task_type", "history", "gt_bbox", "source", "benchmark")
    kinds: Counter[str] = Counter()
    named: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    for part in _parquet_files(path):
        columns = [c for c in wanted if c in pq.ParquetFile(part).schema_arrow.names]
        for row in pq.read_table(part, columns=columns).to_pylist():
            kinds[_row_kind(row, layout)] += 1
            if row.get("benchmark"):
                named[str(row["benchmark"])] += 1
            if row.get("source"):
                sources[str(row["source"])] += 1
    if kinds["grounding"] and kinds["navigation"]:
        kind = None
    elif kinds["navigation"]:
        kind = "navigation"
    elif kinds["grounding"] or kinds["first"]:
        kind = "grounding"
    else:
        kind = None  # an empty file: nothing to decide by
    row_evidence = f"{sum(kinds.values())} rows: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    if len(named) > 1:
        raise ValueError(f"its rows name several benchmarks ({', '.join(map(quoted, sorted(named)))}); split the "
                         "file, or pass --benchmark")
    name, where = None, None
    by_name = benchmark_for_file(path.with_suffix(".json"))
    single_source = next(iter(sources)) if len(sources) == 1 else None
    if named and next(iter(named)) in BENCHMARKS:
        name, where = next(iter(named)), "its rows' benchmark field"
    elif by_name is not None:
        name, where = by_name.name, f"its file name {path.name}"
    elif single_source in SOURCE_BENCHMARKS:
        name, where = SOURCE_BENCHMARKS[single_source], f"its rows' source {quoted(single_source)}"
    if name is not None and kind is not None and benchmark_kind(name) != kind:
        raise ValueError(f"{where} says {name} ({benchmark_kind(name)}) but its rows are {kind} rows "
                         f"({row_evidence}); pass --benchmark")
    evidence = row_evidence if where is None else f"{where}; {row_evidence}"
    return InputBenchmark(name, kind if name is None else benchmark_kind(name), evidence)


class _RecordingSummary(ConversionSummary):
    """A summary that also queues every skipped record, so the caller can emit it in place."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: deque[SkippedRecord] = deque()

    def skip(self, reason: str, record: str) -> None:
        super().skip(reason, record)
        self.pending.append(SkippedRecord(id=record, reason=reason))


#: GUI-R1's test-file layout: the unified parquet's own fields (:data:`core.data.unified.UNIFIED_SCHEMA`, one
#: definition of each) around GUI-R1's gold columns.
GUIR1_BENCH_SCHEMA = pa.schema([
    *(UNIFIED_SCHEMA.field(name) for name in ("id", "image", "instruction", "history", "task_type")),
    ("gt_action", pa.string()), ("gt_bbox", pa.list_(pa.float64())), ("gt_input_text", pa.string()),
    *(UNIFIED_SCHEMA.field(name) for name in ("group", "ui_type")),
])


def write_guir1_benchmark(steps: Iterable[Step], path: str | Path) -> int:
    """Write ``steps`` as a benchmark parquet in GUI-R1's test-file layout (inline image bytes, ``gt_bbox`` in
    ORIGINAL pixels, history string as training renders it); atomic. Returns the number of rows."""
    path = Path(path)
    rows = [{
        "id": s.id,
        "image": {"bytes": s.image_bytes(), "path": None},
        "instruction": s.instruction,
        "history": history_string(s),
        "task_type": s.task_type,
        **{k: v for k, v in gold_columns(s).items() if k in ("gt_action", "gt_bbox", "gt_input_text")},
        "group": s.group,
        "ui_type": s.ui_type,
    } for s in steps]
    with atomic_path(path) as tmp:
        pq.write_table(pa.Table.from_pylist(rows, schema=GUIR1_BENCH_SCHEMA), tmp)
    return len(rows)


def iter_benchmark(path: str | Path, *, images_dir: str | Path | None = None, layout: str | None = None
                   ) -> Iterator[Step | SkippedRecord]:
    """Steps of a benchmark file in file order (ORIGINAL pixels), with rejected records as SkippedRecord."""
    from core.data.ingest import READERS

    layout = layout or detect_layout(path)
    summary = _RecordingSummary()
    source = str(Path(path).resolve())
    steps = READERS[layout](Path(path), images_dir=None if images_dir is None else Path(images_dir),
                            skip_missing=True, summary=summary)
    for step in steps:
        while summary.pending:
            yield summary.pending.popleft()
        step.extra.setdefault("image_source", source)  # where the gallery finds inline screenshots again
        yield step
    while summary.pending:
        yield summary.pending.popleft()


__all__ = ["GUIR1_BENCH_SCHEMA", "SOURCE_BENCHMARKS", "InputBenchmark", "benchmark_kind", "count_rows", "detect_layout",
           "input_benchmark", "iter_benchmark", "write_guir1_benchmark"]
