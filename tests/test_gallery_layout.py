"""The failure gallery as a browser lays it out (headless Chromium): 16:9 ScreenSpot screenshots keep their aspect
ratio beside long and short model answers (issue 13, item 3: they used to be stretched into a tall strip)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest
from test_eval_metrics import _pred_at, screenspot_rows, write_jsonl

from core.eval.gallery import write_gallery
from core.eval.metrics import evaluate

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
#: Measures every <img> once the page has loaded: natural size and the box the layout gave it (CSS px).
PROBE = ("<script>addEventListener('load', () => document.body.setAttribute('data-probe', JSON.stringify("
         "[...document.images].map(i => [i.naturalWidth, i.naturalHeight, i.getBoundingClientRect().width, "
         "i.getBoundingClientRect().height]))))</script></body>")


@pytest.mark.skipif(BROWSER is None, reason="no chromium (apt-get install chromium)")
@pytest.mark.parametrize("window", ["1280,900", "800,900"])
def test_screenshots_keep_their_aspect_ratio_beside_any_text(tmp_path, shared_data, window):
    images = shared_data / "screenspot" / "images"
    rows = [r for r in screenspot_rows() if (images / r["image_path"]).is_file()]
    preds = [{**_pred_at(r, "out"), "pred": "long answer text " * (400 if i % 2 == 0 else 1)}
             for i, r in enumerate(rows)]
    res = evaluate(write_jsonl(tmp_path / "screenspot_test.json", preds), "screenspot", "strict", max_failures=10)
    info = write_gallery(res.failures, tmp_path / "gallery", image_root=images)
    assert info["with_image"] == len(rows) == 4
    page = tmp_path / "gallery" / "index.html"
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace("</body>", PROBE))
    out = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--no-first-run", f"--window-size={window}", "--virtual-time-budget=5000", "--dump-dom",
                          probe.as_uri()], capture_output=True, text=True, check=False).stdout
    m = re.search(r'data-probe="([^"]*)"', out)
    assert m, out[-2000:]
    boxes = json.loads(html.unescape(m.group(1)))
    assert len(boxes) == 4
    for nat_w, nat_h, w, h in boxes:
        assert (nat_w, nat_h) == (800, 450)  # 2560x1440 thumbnails
        assert 100 <= w <= 480 and w / h == pytest.approx(nat_w / nat_h, rel=0.01)
