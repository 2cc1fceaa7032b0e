"""HTML gallery of failed rows: each screenshot with the gold box (green) and the predicted point (red) drawn,
the instruction, gold and predicted actions and the raw model text.

Each row's screenshot is found in this order: the row's ``image_path`` when it is readable as written (absolute,
or relative to the working folder or to the prediction file's folder); the screenshot stored inline in the
benchmark file named by the row's ``image_source`` (written by ``gui-agent infer``; navigation data such as AitZ
and GUIOdyssey carries a relative ``image_path`` that no longer resolves); ``image_path`` under ``image_root``
(``--image-root``).  Rows without an available image are still listed, with a note saying so.  Drawn thumbnails
(at most ``max_side`` px) are written next to ``index.html`` and shown at their own aspect ratio whatever the
length of the text beside them.  Coordinates of the rows are ORIGINAL-image pixels; they are scaled with the
thumbnail.
"""

from __future__ import annotations

import html
import io
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.eval.io import pred_point
from core.eval.report import write_text
from core.io import atomic_path

GOLD = (0, 200, 0)
PRED = (255, 0, 0)


def readable_path(row: Mapping[str, Any]) -> Path | None:
    """The row's ``image_path`` when it names a readable file as written (absolute, relative to the working
    folder, or relative to the prediction file's folder), else None."""
    p = row.get("image_path")
    if not isinstance(p, str) or not p:
        return None
    path = Path(p)
    candidates = [path]
    where = row.get("where")
    if isinstance(where, str) and not path.is_absolute():
        candidates.append(Path(where.rsplit(":", 1)[0]).parent / path)
    return next((c for c in candidates if c.is_file()), None)


def under_root(row: Mapping[str, Any], image_root: str | Path | None) -> Path | None:
    """The row's ``image_path`` (or its file name) under ``image_root``, when that file exists."""
    p = row.get("image_path")
    if image_root is None or not isinstance(p, str) or not p:
        return None
    root, path = Path(image_root), Path(p)
    return next((c for c in (root / path, root / path.name) if c.is_file()), None)


def inline_images(failures: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], bytes]:
    """Screenshots of failure rows whose ``image_path`` is not readable, read back from the benchmark file the
    prediction came from (``image_source``, written by ``gui-agent infer``) through the same reader, streamed once
    per file.  Keyed by (source file, row id)."""
    wanted: dict[str, set[str]] = defaultdict(set)
    for row in failures:
        src = row.get("image_source")
        if isinstance(src, str) and src and Path(src).is_file() and readable_path(row) is None:
            wanted[src].add(str(row.get("id")))
    if not wanted:
        return {}
    from core.inference.bench import iter_benchmark
    from core.schema import Step

    found: dict[tuple[str, str], bytes] = {}
    total = sum(len(v) for v in wanted.values())
    for src, ids in wanted.items():
        for item in iter_benchmark(src):
            if isinstance(item, Step) and item.id in ids and isinstance(item.image, bytes):
                found[(src, item.id)] = item.image
                if len(found) == total:
                    return found
    return found


def resolve_image(row: Mapping[str, Any], inline: Mapping[tuple[str, str], bytes],
                  image_root: str | Path | None = None) -> Path | bytes | None:
    """The screenshot of a failure row: a readable ``image_path``, else its inline image (``inline`` from
    :func:`inline_images`), else ``image_path`` under ``image_root``; None when none is available."""
    return (readable_path(row) or inline.get((str(row.get("image_source")), str(row.get("id"))))
            or under_root(row, image_root))


def draw_failure(image: Path | bytes, row: Mapping[str, Any], out_path: Path, max_side: int = 800) -> Path:
    """Draw the gold box (or gold point) and the predicted point on a thumbnail of the screenshot
    (a file path or encoded image bytes)."""
    from PIL import Image, ImageDraw

    with Image.open(io.BytesIO(image) if isinstance(image, bytes) else image) as im:
        img = im.convert("RGB")
    w, h = img.size
    scale = min(1.0, max_side / max(w, h))
    if scale < 1.0:
        img = img.resize((max(1, round(w * scale)), max(1, round(h * scale))))
    draw = ImageDraw.Draw(img)
    line = max(2, round(3 * img.size[0] / 800))
    gt = row.get("gt_box")
    if isinstance(gt, (list, tuple)) and len(gt) == 4:
        draw.rectangle([v * scale for v in gt], outline=GOLD, width=line)
    elif isinstance(gt, (list, tuple)) and len(gt) == 2:
        gx, gy = gt[0] * scale, gt[1] * scale
        r = 4 * line
        draw.ellipse([gx - r, gy - r, gx + r, gy + r], outline=GOLD, width=line)
    pt = pred_point(row.get("pred_point"))
    if pt is not None:
        px, py = pt[0] * scale, pt[1] * scale
        r = 3 * line
        draw.ellipse([px - r, py - r, px + r, py + r], fill=PRED)
        draw.line([px - 3 * r, py, px + 3 * r, py], fill=PRED, width=line)
        draw.line([px, py - 3 * r, px, py + 3 * r], fill=PRED, width=line)
    with atomic_path(out_path) as tmp:
        img.save(tmp, format="PNG")
    return out_path


def _esc(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def write_gallery(failures: Sequence[Mapping[str, Any]], out_dir: str | Path, *, title: str = "failures",
                  image_root: str | Path | None = None) -> dict[str, Any]:
    """Write ``out_dir/index.html`` (+ drawn PNGs); returns ``{"html", "rows", "with_image", "without_image"}``."""
    from PIL import Image

    out = Path(out_dir)
    cards, with_img = [], 0
    inline = inline_images(failures)
    for i, row in enumerate(failures):
        src = resolve_image(row, inline, image_root)
        if src is not None:
            try:
                png = draw_failure(src, row, out / "img" / f"{i:05d}.png")
                pic = f'<img src="img/{png.name}" alt="screenshot {i}">'
                with_img += 1
            except (OSError, ValueError, OverflowError, SyntaxError, Image.DecompressionBombError) as e:
                # a corrupt file, a decompression bomb over the pixel limit, coordinates that cannot be drawn
                pic = f'<p class="noimg">screenshot unreadable ({_esc(type(e).__name__)}: {_esc(e)})</p>'
        else:
            pic = (f'<p class="noimg">screenshot not available'
                   f'{": " + _esc(row.get("image_path")) if row.get("image_path") else " (no image_path in row)"}'
                   "</p>")
        cards.append(
            f'<div class="card"><div class="shot">{pic}</div><dl>'
            f"<dt>row</dt><dd>{_esc(row.get('where'))} id={_esc(row.get('id'))}</dd>"
            f"<dt>why</dt><dd>{_esc(row.get('reason'))}</dd>"
            f"<dt>instruction</dt><dd>{_esc(row.get('instruction'))}</dd>"
            f"<dt>gold</dt><dd>{_esc(row.get('gt_action'))} box={_esc(row.get('gt_box'))} "
            f"text={_esc(row.get('gt_input_text'))}</dd>"
            f"<dt>predicted</dt><dd>{_esc(row.get('pred_action'))} point={_esc(row.get('pred_point'))} "
            f"text={_esc(row.get('pred_input_text'))}</dd>"
            f"<dt>model text</dt><dd><pre>{_esc(row.get('pred'))}</pre></dd></dl></div>")
    missing = len(failures) - with_img
    note = (f"{len(failures)} failures; {with_img} with screenshots"
            + (f", {missing} without (images not available: pass --image-root or keep image_path in the rows)"
               if missing else ""))
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>" + _esc(title) + "</title><style>"
            # the screenshot column has a fixed basis and never stretches or shrinks with the text beside it;
            # the image keeps its aspect ratio inside it (both sizes auto, capped)
            "body{font-family:sans-serif;margin:1em}.card{border:1px solid #ccc;margin:1em 0;padding:.5em;"
            "display:flex;align-items:flex-start;gap:1em}.shot{flex:0 0 480px}"
            ".shot img{display:block;width:auto;height:auto;max-width:100%;max-height:640px}"
            ".card dl{flex:1 1 0;min-width:0;margin:0}dt{font-weight:bold}"
            "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6}.noimg{color:#a00}"
            "</style></head><body>"
            f"<h1>{_esc(title)}</h1><p>{_esc(note)}. Green: gold box; red: predicted point.</p>"
            + "".join(cards) + "</body></html>\n")
    path = write_text(page, out / "index.html")
    return {"html": str(path), "rows": len(failures), "with_image": with_img, "without_image": missing}
