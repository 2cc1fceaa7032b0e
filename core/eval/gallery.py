"""HTML gallery of failed rows: each screenshot with the gold box (green) and the predicted point (red) drawn,
the instruction, gold and predicted actions and the raw model text.

Each row's screenshot is found in this order: the row's ``image_path`` inside ``--image-root`` or the prediction
file's folder, by the path rule of every data reader (:func:`image_file`; a path that leaves both, absolute or
with ``..``, is refused and never opened, so the gallery cannot be used to read or probe other files); else the
screenshot stored inline in the benchmark file named by the row's ``image_source`` (written by ``gui-agent
infer``; navigation data such as AitZ and GUIOdyssey carries a relative ``image_path`` that no longer resolves).
Rows without an available image are still listed, with a note saying why.  Points and boxes are printed with at
most one decimal, GUI-R1's ``[-100, -100]`` as "no point".  Drawn thumbnails
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
from core.geometry import shown_coords
from core.io import atomic_path
from core.outputs import FolderFiles, as_folder_files

#: The files a gallery writes into its folder (``--gallery``: listed in its manifest, :mod:`core.outputs`).
GALLERY_FILES: tuple[str, ...] = ("index.html", "img/*.png")

GOLD = (0, 200, 0)
PRED = (255, 0, 0)


def image_file(row: Mapping[str, Any], image_root: str | Path | None = None) -> tuple[Path | None, bool]:
    """``(path, refused)``: the row's ``image_path`` found inside the prediction file's folder or ``image_root``,
    by the rule every data reader follows (:func:`core.data.ingest._common.image_candidates`: the path as
    written, then its file name, in each root; a form that climbs out with ``..`` or is absolute elsewhere is
    never opened).  ``refused`` is True when no existing file was found and the path names a place outside the
    roots; whether such a file exists is never looked at."""
    p = row.get("image_path")
    if not isinstance(p, str) or not p:
        return None, False
    from core.data.ingest._common import image_candidates

    where = row.get("where")
    pred_dir = Path(where.rsplit(":", 1)[0]).parent if isinstance(where, str) and where else None
    roots = [Path(r) for r in (image_root, pred_dir) if r is not None]
    if not roots:
        return None, True
    candidates = image_candidates(p, images_dir=roots[0] if len(roots) > 1 else None, record_dir=roots[-1])
    found = next((c for c in candidates if c.is_file()), None)
    return found, found is None and bool(candidates.outside)


def inline_images(failures: Sequence[Mapping[str, Any]],
                  image_root: str | Path | None = None) -> dict[tuple[str, str], bytes]:
    """Screenshots of failure rows without an image file (:func:`image_file`), read back from the benchmark file the
    prediction came from (``image_source``, written by ``gui-agent infer``) through the same reader, streamed once
    per file.  Keyed by (source file, row id)."""
    wanted: dict[str, set[str]] = defaultdict(set)
    for row in failures:
        src = row.get("image_source")
        if isinstance(src, str) and src and Path(src).is_file() and image_file(row, image_root)[0] is None:
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
    """The screenshot of a failure row: its image file (:func:`image_file`), else its inline image (``inline``
    from :func:`inline_images`); None when neither is available."""
    return image_file(row, image_root)[0] or inline.get((str(row.get("image_source")), str(row.get("id"))))


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


def write_gallery(failures: Sequence[Mapping[str, Any]], out_dir: str | Path | FolderFiles, *,
                  title: str = "failures", image_root: str | Path | None = None) -> dict[str, Any]:
    """Write ``out_dir/index.html`` (+ drawn PNGs ``img/NNNNN.png``; a :class:`core.outputs.FolderFiles` lists
    each in its manifest first); returns ``{"html", "rows", "with_image", "without_image", "refused"}``
    (``refused``: rows whose image_path lies outside the prediction file's folder and ``image_root``, never
    opened)."""
    from PIL import Image

    from core.data.ingest._common import OUTSIDE_ROOT

    files = as_folder_files(out_dir)
    cards, with_img, refused = [], 0, 0
    inline = inline_images(failures, image_root)
    for i, row in enumerate(failures):
        src = resolve_image(row, inline, image_root)
        if src is None and image_file(row, image_root)[1]:
            refused += 1
            pic = (f'<p class="noimg">screenshot refused: {_esc(row.get("image_path"))} lies outside the prediction '
                   f"file's folder and --image-root ({OUTSIDE_ROOT}; not opened)</p>")
        elif src is not None:
            try:
                png = draw_failure(src, row, files.path(f"img/{i:05d}.png"))
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
            f"<dt>gold</dt><dd>{_esc(row.get('gt_action'))} box={_esc(shown_coords(row.get('gt_box')))} "
            f"text={_esc(row.get('gt_input_text'))}</dd>"
            f"<dt>predicted</dt><dd>{_esc(row.get('pred_action'))} point={_esc(shown_coords(row.get('pred_point')))} "
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
    path = write_text(page, files.path("index.html"))
    return {"html": str(path), "rows": len(failures), "with_image": with_img, "without_image": missing,
            "refused": refused}
