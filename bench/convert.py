"""Benchmark: GUI-R1-style parquet -> LLaMA-Factory dataset, against a naive converter and the I/O floor.

Builds (once, cached under ``--work``) GUI-R1-style parquets of N and 4N rows with distinct synthetic
1080x2400 PNG screenshots (flat UI cards, text, a photo-like patch: about 1 MB each, like real phone
screenshots), then runs each variant in its own subprocess and reports rows/s, MB/s (image bytes in) and peak
RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of that subprocess):

- ``naive``: ``pandas.read_parquet`` of the whole file, a row loop, PIL decode + re-save of every image, JSON;
- ``floor``: stream the parquet and write each image's bytes to a file, nothing else;
- ``export``: the real path, ``core.data.ingest`` GUI-R1 reader -> ``core.data.export.export_llamafactory``;

Usage: ``python bench/convert.py [--rows 50] [--workers 2] [--work outputs/bench-convert]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require("pandas")

WIDTH, HEIGHT = 1080, 2400
VARIANTS = ("naive", "floor", "export")
#: Modules each variant imports, loaded before its clock starts (start-up is not per-row work).
PRELOAD = {"naive": ("pandas", "PIL.Image"), "floor": ("pyarrow.parquet",),
           "export": ("core.data.export", "core.data.ingest", "core.prompts", "PIL.Image")}


def _screenshot(seed: int) -> tuple[bytes, list[float]]:
    """A distinct synthetic phone screenshot (PNG bytes) and a normalized box of one of its cards."""
    import numpy as np
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    im = Image.new("RGB", (WIDTH, HEIGHT), (rng.randint(230, 255),) * 3)
    d = ImageDraw.Draw(im)
    d.rectangle([0, 0, WIDTH, 160], fill=(rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)))
    boxes, y = [], 200
    while y < HEIGHT - 300:
        h = rng.randint(120, 300)
        d.rounded_rectangle([40, y, WIDTH - 40, y + h], radius=24, fill=(255, 255, 255), outline=(220, 220, 220),
                            width=3)
        for k in range(rng.randint(1, 4)):
            text = "".join(rng.choice("abcdefghij klmnopqrstuvwxyz") for _ in range(rng.randint(10, 50)))
            d.text((80, y + 20 + k * 40), text, fill=(30, 30, 30), font_size=28)
        boxes.append([40 / WIDTH, y / HEIGHT, (WIDTH - 40) / WIDTH, (y + h) / HEIGHT])
        y += h + 30
    ph = rng.randint(300, 600)
    noise = np.random.default_rng(seed).integers(0, 255, (ph // 4, WIDTH // 4, 3), dtype=np.uint8)
    im.paste(Image.fromarray(noise).resize((WIDTH, ph), Image.Resampling.BILINEAR), (0, rng.randint(300, HEIGHT - ph - 100)))
    buf = io.BytesIO()
    im.save(buf, "PNG", compress_level=1)
    return buf.getvalue(), rng.choice(boxes)


def build_input(path: Path, rows: int, *, jobs: int) -> None:
    """A GUI-R1 train.parquet look-alike: image{bytes,path}, normalized gt_bbox, instruction, history, ..."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.io import atomic_path

    schema = pa.schema([("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
                        ("gt_bbox", pa.list_(pa.float64())), ("instruction", pa.string()), ("history", pa.string()),
                        ("gt_action", pa.string()), ("gt_input_text", pa.string()), ("task_type", pa.string()),
                        ("group", pa.string()), ("ui_type", pa.string()), ("id", pa.int64())])
    with atomic_path(path) as tmp, ProcessPoolExecutor(max_workers=jobs) as ex, pq.ParquetWriter(tmp, schema) as w:
        batch = []
        for i, (png, box) in enumerate(ex.map(_screenshot, range(rows), chunksize=4)):
            batch.append({"image": {"bytes": png, "path": f"{i:06d}.png"}, "gt_bbox": box,
                          "instruction": f"open the item number {i}", "history": "None", "gt_action": "click",
                          "gt_input_text": "no input text", "task_type": "low", "group": "mobile",
                          "ui_type": "text", "id": i})
            if len(batch) == 16:
                w.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch = []
        if batch:
            w.write_table(pa.Table.from_pylist(batch, schema=schema))


# --------------------------------------------------------------------------------------------- variants


def run_naive(src: Path, out: Path) -> int:
    import pandas as pd
    from PIL import Image

    df = pd.read_parquet(src)
    (out / "images").mkdir(parents=True)
    rows = []
    for i, row in df.iterrows():
        im = Image.open(io.BytesIO(row["image"]["bytes"]))
        name = f"images/{i:06d}.png"
        im.save(out / name)
        x1, y1, x2, y2 = row["gt_bbox"]
        point = [round((x1 + x2) / 2 * im.width), round((y1 + y2) / 2 * im.height)]
        rows.append({"messages": [
            {"role": "user", "content": f"<image>{row['instruction']}"},
            {"role": "assistant", "content": f"<answer>[{{'action': 'click', 'point': {point}}}]</answer>"}],
            "images": [name]})
    (out / "data.json").write_text(json.dumps(rows))
    return len(rows)


def run_floor(src: Path, out: Path) -> int:
    import pyarrow.parquet as pq

    (out / "images").mkdir(parents=True)
    n = 0
    for batch in pq.ParquetFile(src, pre_buffer=False).iter_batches(batch_size=16, columns=["image"]):
        for img in batch.column(0).to_pylist():
            (out / "images" / f"{n:06d}.png").write_bytes(img["bytes"])
            n += 1
    return n


def run_export(src: Path, out: Path, workers: int) -> int:
    from core.data.export import ExportOptions, export_llamafactory
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary

    summary = ConversionSummary()
    steps = READERS["guir1"](src, summary=summary)
    export_llamafactory(steps, out / "gui-r1-bench", options=ExportOptions(name="gui-r1-bench", workers=workers),
                        summary=summary)
    if summary.n_skipped:
        raise RuntimeError(summary.render())
    return summary.written


def child(variant: str, src: Path, out: Path, workers: int) -> None:
    import importlib

    for module in PRELOAD[variant]:
        importlib.import_module(module)
    t0 = time.perf_counter()
    n = {"naive": lambda: run_naive(src, out), "floor": lambda: run_floor(src, out),
         "export": lambda: run_export(src, out, workers)}[variant]()
    seconds = time.perf_counter() - t0
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"rows": n, "seconds": seconds, "max_rss_mb": rss_kb / 1024}))


def measure(variant: str, src: Path, work: Path, workers: int) -> dict:
    out = work / f"out-{variant}-{src.stem}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    proc = subprocess.run([sys.executable, __file__, "--child", variant, "--src", str(src), "--out", str(out),
                           "--workers", str(workers)], capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{variant} failed:\n{proc.stderr[-3000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    shutil.rmtree(out, ignore_errors=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=50, help="N (the second size is 4N)")
    ap.add_argument("--workers", type=int, default=2, help="exporter image threads")
    ap.add_argument("--work", type=Path, default=Path("outputs/bench-convert"))
    ap.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    ap.add_argument("--src", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.src, args.out, args.workers)
        return

    args.work.mkdir(parents=True, exist_ok=True)
    results = []
    for rows in (args.rows, 4 * args.rows):
        src = args.work / f"guir1-{rows}.parquet"
        if not src.exists():
            t = time.perf_counter()
            build_input(src, rows, jobs=os.cpu_count() or 1)
            print(f"built {src} ({rows} rows) in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        mb = _image_mb(src)
        for variant in VARIANTS:
            r = measure(variant, src, args.work, args.workers)
            r.update(variant=variant, n=rows, mb_s=mb / r["seconds"], rows_s=r["rows"] / r["seconds"])
            results.append(r)
            print(f"{variant:>6} N={rows:<5} {r['rows_s']:8.1f} rows/s {r['mb_s']:8.1f} MB/s "
                  f"peak RSS {r['max_rss_mb']:7.1f} MB  ({r['seconds']:.2f}s)", flush=True)
    by = {(r["variant"], r["n"]): r for r in results}
    for rows in (args.rows, 4 * args.rows):
        e, f, nv = by["export", rows], by["floor", rows], by["naive", rows]
        print(f"export N={rows}: {e['rows_s'] / nv['rows_s']:.1f}x naive rows/s (target >= 30x), "
              f"{f['rows_s'] / e['rows_s']:.2f}x slower than the floor (target <= 2x)")
    e1, e4 = by["export", args.rows], by["export", 4 * args.rows]
    print(f"export peak RSS {e1['max_rss_mb']:.0f} MB at N -> {e4['max_rss_mb']:.0f} MB at 4N "
          f"(target < 1024 MB, flat: x{e4['max_rss_mb'] / e1['max_rss_mb']:.2f})")


def _image_mb(src: Path) -> float:
    import pyarrow.parquet as pq

    total = 0
    for batch in pq.ParquetFile(src, pre_buffer=False).iter_batches(batch_size=16, columns=["image"]):
        total += sum(len(i["bytes"]) for i in batch.column(0).to_pylist())
    return total / 1e6


if __name__ == "__main__":
    main()
