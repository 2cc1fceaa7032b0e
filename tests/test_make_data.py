"""`make data` turns GUI-R1 train/test parquets into every format the recipes read, named as they expect."""

import json
import subprocess
from pathlib import Path

import pyarrow.parquet as pq

from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.geometry import smart_resize
from core.inference.bench import write_guir1_benchmark
from core.recipes import recipe_pixel_bounds

REPO = Path(__file__).resolve().parents[1]


def test_make_data_writes_what_the_recipes_read(tmp_path, shared_data):
    steps = list(READERS["aitw"](shared_data / "aitz", summary=ConversionSummary()))
    raw = tmp_path / "GUI-R1-3K"
    write_guir1_benchmark(steps[:3], raw / "train.parquet")
    write_guir1_benchmark(steps[3:], raw / "test.parquet")
    out, lf = tmp_path / "Data", tmp_path / "lf"
    r = subprocess.run(["make", "-s", "data", f"GUIR1_DIR={raw}", f"DATA_ROOT={out}", f"LF_DATA_DIR={lf}"],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

    # verl: what make grpo-verl reads, images stored at the smart_resize size of the GUI-R1 recipe's bounds
    train = pq.read_table(out / "verl" / "gui-r1-3k" / "train.parquet").to_pylist()
    assert len(train) == 3 and (out / "verl" / "gui-r1-3k" / "test.parquet").is_file()
    w, h = steps[0].image_size
    low, high = recipe_pixel_bounds(REPO / "recipes" / "qwen2_5_vl_3b" / "grpo" / "config_guir1_verl.yaml")
    rh, rw = smart_resize(h, w, min_pixels=low, max_pixels=high)
    assert train[0]["extra_info"]["resized_size"] == [rw, rh]
    # LLaMA-Factory: both splits registered in the dataset_info.json the YAMLs point at
    info = json.loads((lf / "dataset_info.json").read_text())
    assert {"gui-r1-3k", "gui-r1-3k-test"} <= info.keys()
    assert (lf / info["gui-r1-3k"]["file_name"]).is_file()
    # ms-swift and VLM-R1
    assert len((out / "swift" / "gui-r1-3k.jsonl").read_text().splitlines()) == 3
    assert len((out / "swift" / "gui-r1-3k-test.jsonl").read_text().splitlines()) == 1
    assert (out / "vlmr1" / "gui-r1-3k.hf").is_dir()
