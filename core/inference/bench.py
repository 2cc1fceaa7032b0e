"""Benchmark input: a GUI-R1-layout parquet (``gt_action``/``gt_bbox`` columns) or a unified parquet from
``gui-agent data convert``, read with the ``core.data.ingest`` readers.

Records the reader rejects (missing or corrupt image, invalid box...) come out as
:class:`~core.inference.rows.SkippedRecord` in their place, so they get a row with ``error`` instead of
vanishing or stopping the run.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from core.data.summary import ConversionSummary
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


class _RecordingSummary(ConversionSummary):
    """A summary that also queues every skipped record, so the caller can emit it in place."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: deque[SkippedRecord] = deque()

    def skip(self, reason: str, record: str) -> None:
        super().skip(reason, record)
        self.pending.append(SkippedRecord(id=record, reason=reason))


GUIR1_BENCH_SCHEMA = pa.schema([
    ("id", pa.string()),
    ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
    ("instruction", pa.string()),
    ("history", pa.string()),
    ("task_type", pa.string()),
    ("gt_action", pa.string()),
    ("gt_bbox", pa.list_(pa.float64())),
    ("gt_input_text", pa.string()),
    ("group", pa.string()),
    ("ui_type", pa.string()),
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


__all__ = ["GUIR1_BENCH_SCHEMA", "count_rows", "detect_layout", "iter_benchmark", "write_guir1_benchmark"]
