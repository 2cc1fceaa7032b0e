"""Issue 12, property: random corruptions of REAL rows (../shared/data) fed through every reader by
``gui-agent data convert --to unified`` end in exit 0 or 2, never a traceback; every row written is a valid
Step whose image decodes; every rejected row is named (the error line names record and field, or the summary
lists it under its reason)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from core.data.cli import data_app
from core.data.ingest._common import checked_size
from core.data.ingest.aitw import read_aitw
from core.data.summary import ConversionSummary
from core.data.unified import UNIFIED_SCHEMA, iter_unified_batches, row_to_step, step_to_row

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if not DATA.is_dir():
    pytest.skip(f"real data folder {DATA} is absent", allow_module_level=True)

AITZ = DATA / "aitz" / "GOOGLE_APPS-523638528775825151"
SHOT = AITZ / "GOOGLE_APPS-523638528775825151_2.png"
SCREENSPOT_IMAGES = DATA / "screenspot" / "images"
SESSION = DATA / "screenagent" / "session1"
SUMMARY_RE = re.compile(r"read (\d+), written (\d+), skipped (\d+)")
NAMED_ERROR_RE = re.compile(r"^error: record .+: field '[^']+': .+")
#: examples per reader (``BAD_INPUT_EXAMPLES=500`` for a longer hunt)
PROPERTY = settings(max_examples=int(os.environ.get("BAD_INPUT_EXAMPLES", "30")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

#: Values a corruption may put anywhere in a record.
JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**6, max_value=10**6), st.just(10**400),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12), st.just("../../../../etc/passwd"),
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=5),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


@st.composite
def corrupted_json(draw, records: list[Any]) -> list[Any]:
    """``records`` with one or two fields (or nested items) replaced by junk or deleted, or a record replaced."""
    records = json.loads(_json(records))
    for _ in range(draw(st.integers(1, 2))):
        i = draw(st.integers(0, len(records) - 1))
        target = records[i]
        if not isinstance(target, dict) or not target or draw(st.integers(0, 9)) == 0:
            records[i] = draw(JUNK)
            continue
        key = draw(st.sampled_from(sorted(target)))
        inner = target[key]
        if isinstance(inner, (list, dict)) and inner and draw(st.booleans()):  # one level deeper
            sub = draw(st.sampled_from(range(len(inner)) if isinstance(inner, list) else sorted(inner)))
            inner[sub] = draw(JUNK)
        elif draw(st.integers(0, 4)) == 0:
            del target[key]
        else:
            target[key] = draw(JUNK)
    return records


@st.composite
def corrupted_bytes(draw, text: str) -> bytes:
    """``text`` as UTF-8, sometimes truncated or with a stray non-UTF-8 byte inserted."""
    raw = text.encode("utf-8")
    kind = draw(st.sampled_from(["none", "none", "truncate", "insert"]))
    at = draw(st.integers(0, max(0, len(raw) - 1)))
    if kind == "truncate":
        return raw[:at]
    if kind == "insert":
        return raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x00", b"{"])) + raw[at:]
    return raw


def convert(source: str, input_path: Path, out: Path, skip: bool, *extra: str):
    args = ["convert", "--from", source, "--to", "unified", "--input", str(input_path), "--output", str(out),
            "--name", "out", *extra] + (["--skip-missing"] if skip else [])
    return CliRunner().invoke(data_app, args)


def check(result, out: Path, skip: bool) -> None:
    """The property: exit 0 or 2 without a traceback; written rows valid; rejected rows named."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        raise AssertionError("traceback:\n" + "".join(traceback.format_exception(result.exception)))
    assert result.exit_code in (0, 2), (result.exit_code, result.output)
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1, result.stderr
        assert (NAMED_ERROR_RE.match(errors[0]) or "no .json" in errors[0]
                or errors[0].startswith("error: every record was skipped (")), errors[0]  # issue 38, 10
        assert not (out / "out.parquet").exists()  # nothing under the final name
        return
    read, written, skipped = map(int, SUMMARY_RE.search(result.stdout).groups())
    assert read == written + skipped
    reasons = [line for line in result.stdout.splitlines() if line.strip().startswith("skipped ")]
    assert sum(int(line.split()[1]) for line in reasons) == skipped
    for line in reasons:  # a reader's own skips (no target bbox, ...) or --skip-missing: each names its records
        assert re.search(r" x .+ \(e\.g\. \S+", line), line
    n = 0
    for batch in iter_unified_batches(out / "out.parquet"):
        for row in batch.to_pylist():
            step = row_to_step(row)  # raises on an invalid row
            if isinstance(step.image, bytes):
                assert checked_size(step.id, step.image, step.image_size) == step.image_size
            n += 1
    assert n == written


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="bad-input-") as d:
        yield Path(d)


def fresh(workdir: Path) -> Path:
    return Path(tempfile.mkdtemp(dir=workdir))


# ------------------------------------------------------------------------------------------------ JSON readers

SCREENSPOT_ROWS = [json.loads(line) for line in (DATA / "screenspot" / "screenspot_v1_annotations.jsonl")
                   .read_text().splitlines() if json.loads(line)["image"].startswith("web_6f93")]
AITZ_STEPS = json.loads((AITZ / f"{AITZ.name}.json").read_text())
ODYSSEY = json.loads((DATA / "guiodyssey" / "navigation_meta_format.json").read_text())
MIND2WEB_EPISODE = json.loads((DATA / "mind2web" / "mind2web_data_test_task.json").read_text())[0]
SESSION_STEP = sorted(SESSION.glob("*_translate.json"))[0]


@PROPERTY
@given(data=st.data(), skip=st.booleans())
def test_screenspot_rows(workdir, data, skip):
    rows = data.draw(corrupted_json(SCREENSPOT_ROWS))
    d = fresh(workdir)
    (d / "s.jsonl").write_bytes(data.draw(corrupted_bytes("\n".join(_json(r) for r in rows) + "\n")))
    check(convert("screenspot", d / "s.jsonl", d / "o", skip, "--images", str(SCREENSPOT_IMAGES)), d / "o", skip)


@PROPERTY
@given(data=st.data(), skip=st.booleans())
def test_aitw_episode(workdir, data, skip):
    steps = data.draw(corrupted_json(AITZ_STEPS))
    d = fresh(workdir)
    (d / "e.json").write_bytes(data.draw(corrupted_bytes(_json(steps))))
    check(convert("aitw", d / "e.json", d / "o", skip, "--images", str(AITZ)), d / "o", skip)


@PROPERTY
@given(data=st.data(), skip=st.booleans())
def test_guiodyssey_records(workdir, data, skip):
    records = data.draw(corrupted_json(ODYSSEY * 2))
    d = fresh(workdir)
    (d / "g.json").write_bytes(data.draw(corrupted_bytes(_json(records))))
    check(convert("guiodyssey", d / "g.json", d / "o", skip, "--images", str(DATA / "guiodyssey")), d / "o", skip)


@pytest.fixture(scope="module")
def mind2web_images(workdir):
    """The first episode's screenshots: a real 2560x1440 ScreenSpot web shot under each SeeClick name."""
    images = workdir / "m2w-images"
    images.mkdir()
    shot = next(SCREENSPOT_IMAGES.glob("*.png"))
    for act in MIND2WEB_EPISODE["actions"]:
        shutil.copy(shot, images / f"{MIND2WEB_EPISODE['annotation_id']}-{act['action_uid']}.jpg")
    return images


@PROPERTY
@given(data=st.data(), skip=st.booleans())
def test_mind2web_episode(workdir, mind2web_images, data, skip):
    episode = data.draw(corrupted_json([MIND2WEB_EPISODE, *MIND2WEB_EPISODE["actions"][:3]]))
    d = fresh(workdir)
    (d / "m.json").write_bytes(data.draw(corrupted_bytes(_json([episode[0]]))))
    check(convert("mind2web", d / "m.json", d / "o", skip, "--images", str(mind2web_images)), d / "o", skip)


@PROPERTY
@given(data=st.data(), skip=st.booleans())
def test_screenagent_step(workdir, data, skip):
    (step,) = data.draw(corrupted_json([json.loads(SESSION_STEP.read_text())]))
    d = fresh(workdir)
    (d / "session").mkdir()
    (d / "session" / SESSION_STEP.name).write_bytes(data.draw(corrupted_bytes(_json(step))))
    check(convert("screenagent", d / "session", d / "o", skip, "--images", str(SESSION / "images")), d / "o", skip)


# --------------------------------------------------------------------------------------------- parquet readers

GUIR1_SCHEMA = pa.schema([
    ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])), ("instruction", pa.string()),
    ("history", pa.string()), ("gt_action", pa.string()), ("gt_bbox", pa.list_(pa.float64())),
    ("gt_input_text", pa.string()), ("task_type", pa.string()), ("id", pa.int64()),
])
GUIR1_ROWS = [
    {"image": {"bytes": SHOT.read_bytes(), "path": None}, "instruction": "open the clock app", "history": "None",
     "gt_action": action, "gt_bbox": box, "gt_input_text": text, "task_type": "high", "id": i}
    for i, (action, box, text) in enumerate([
        ("click", [0.5496, 0.4725, 0.6644, 0.5279], "no input text"), ("click", [0.607, 0.4984], "no input text"),
        ("type", [-100.0, -100.0], "Clock"), ("scroll", [-100.0, -100.0], "down")])
]
CELL = {  # per column type: a corrupt value of the same type (the file stays a valid parquet)
    pa.string(): st.one_of(st.none(), st.text(max_size=20), st.just("../../etc/passwd"), st.just("[1, 2")),
    pa.int64(): st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)),
    pa.int32(): st.one_of(st.none(), st.integers(-2**31, 2**31 - 1)),
    pa.list_(pa.float64()): st.one_of(st.none(), st.lists(st.floats(allow_nan=True, allow_infinity=True),
                                                           max_size=5)),
}


@st.composite
def corrupted_table(draw, rows: list[dict], schema: pa.Schema) -> pa.Table:
    """``rows`` with cells replaced by same-typed junk, an image's bytes cut or swapped, or a column dropped."""
    rows = [dict(r) for r in rows]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(rows) - 1))
        field = schema.field(draw(st.sampled_from(schema.names)))
        if field.name == "image":
            raw = rows[i]["image"]["bytes"] or b""
            rows[i]["image"] = draw(st.sampled_from([
                {"bytes": raw[: len(raw) // 2], "path": None}, {"bytes": b"GIF89a", "path": None},
                {"bytes": None, "path": "/etc/passwd"}, {"bytes": None, "path": None}]))
        elif field.type in CELL:
            rows[i][field.name] = draw(CELL[field.type])
    if draw(st.integers(0, 5)) == 0:
        schema = schema.remove(draw(st.integers(0, len(schema.names) - 1)))
    return pa.Table.from_pylist([{k: r.get(k) for k in schema.names} for r in rows], schema=schema)


@PROPERTY
@given(data=st.data(), skip=st.booleans())
def test_guir1_rows(workdir, data, skip):
    d = fresh(workdir)
    pq.write_table(data.draw(corrupted_table(GUIR1_ROWS, GUIR1_SCHEMA)), d / "train.parquet")
    check(convert("guir1", d / "train.parquet", d / "o", skip), d / "o", skip)


@PROPERTY
@given(data=st.data(), skip=st.booleans())
def test_unified_rows(workdir, data, skip):
    rows = [step_to_row(s) for s in read_aitw(DATA / "aitz", summary=ConversionSummary())]
    d = fresh(workdir)
    pq.write_table(data.draw(corrupted_table(rows, UNIFIED_SCHEMA)), d / "u.parquet")
    check(convert("unified", d / "u.parquet", d / "o", skip), d / "o", skip)
