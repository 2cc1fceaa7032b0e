"""Screenshots for export: format sniffing, the one resize to the model size, content-addressed image files.

Images pass through byte for byte, or (with ``max_pixels``/``min_pixels``) are resized once with PIL to the exact
``smart_resize`` size, so no backend resizes again and the gold coordinates match the stored pixels.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from core.geometry import ImageGeometry
from core.io import atomic_write_bytes


class ImageError(ValueError):
    """An image that cannot be exported (unknown format, undecodable, size differs from ``image_size``)."""


_MAGIC = ((b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpg"), (b"GIF87a", "gif"), (b"GIF89a", "gif"),
          (b"BM", "bmp"))


def sniff_extension(data: bytes) -> str:
    """File extension of encoded image bytes from their magic number (no decoding)."""
    for magic, ext in _MAGIC:
        if data.startswith(magic):
            return ext
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    raise ImageError("unrecognised image format (not PNG/JPEG/WebP/GIF/BMP)")


def resized_extension(data: bytes) -> str:
    """Extension of the re-encoded image: JPEG stays JPEG, everything else becomes PNG."""
    return "jpg" if sniff_extension(data) == "jpg" else "png"


def resize_image(data: bytes, geometry: ImageGeometry) -> bytes:
    """Decode, check the size against ``geometry`` (ORIGINAL px), resize (bicubic) to the resized size, re-encode.

    JPEG is re-encoded as JPEG (quality 95), every other format as PNG. Returns ``data`` unchanged when the
    resized size equals the original. Raises :class:`ImageError`.
    """
    from PIL import Image, UnidentifiedImageError

    target = (geometry.resized_width, geometry.resized_height)
    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.size != (geometry.width, geometry.height):
                raise ImageError(f"decoded size {im.size[0]}x{im.size[1]} differs from image_size "
                                 f"{geometry.width}x{geometry.height}")
            if im.size == target:
                return data
            fmt = im.format
            if im.mode not in ("RGB", "RGBA", "L"):
                im = im.convert("RGBA" if ("A" in im.mode or "transparency" in im.info) else "RGB")
            out = im.resize(target, Image.Resampling.BICUBIC)
    except (UnidentifiedImageError, OSError) as e:
        raise ImageError(f"cannot decode image: {e}") from None
    buf = io.BytesIO()
    if fmt == "JPEG":
        out.convert("RGB").save(buf, "JPEG", quality=95)
    else:
        out.save(buf, "PNG", compress_level=1)
    return buf.getvalue()


class ImageStore:
    """Content-addressed image files under ``root``: ``<sha1[:2]>/<sha1>[-<W>x<H>].<ext>``.

    The same screenshot used by several steps is stored once; a file that exists is complete (atomic
    rename), so a resumed run skips it without decoding or resizing.
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self.written = 0
        self.reused = 0

    def put(self, data: bytes, geometry: ImageGeometry, *, resize: bool) -> Path:
        digest = hashlib.sha1(data).hexdigest()
        if resize:
            name = f"{digest}-{geometry.resized_width}x{geometry.resized_height}.{resized_extension(data)}"
        else:
            name = f"{digest}.{sniff_extension(data)}"
        path = self.root / digest[:2] / name
        if path.exists():
            self.reused += 1
            return path
        atomic_write_bytes(path, resize_image(data, geometry) if resize else data)
        self.written += 1
        return path
