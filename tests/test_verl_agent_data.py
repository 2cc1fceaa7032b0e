"""verl/prepare_gui_agent_data.py: simulated-phone demo rows and logged trajectories (JSONL with real AitZ
screenshots, unified parquet) load through verl's RLHFDataset with the tiny Qwen3-VL processor and run through
the gui_agent loop (online and replayed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.rl_env

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SCRIPT = ROOT / "verl" / "prepare_gui_agent_data.py"
AITZ = DATA / "aitz" / "GOOGLE_APPS-523638528775825151"

pytest.importorskip("verl")
pytest.importorskip("gymnasium")
sys.path.insert(0, str(ROOT / "verl" / "gui_agent"))
sys.path.insert(0, str(ROOT / "tests"))

import mobile_use_tool as mut  # noqa: E402
import test_verl_agent as agent  # noqa: E402

qwen3_dir, processor = agent.qwen3_dir, agent.processor


def prepare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT,
                          env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}, timeout=600)


def load_rlhf(path: Path, processor):
    from omegaconf import OmegaConf
    from verl.trainer.ppo.utils import create_rl_dataset

    import verl

    cfg = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml").data
    cfg.train_files, cfg.max_prompt_length, cfg.filter_overlong_prompts = str(path), 4096, True
    cfg.filter_overlong_prompts_workers, cfg.cache_dir = None, str(path.parent / "verl-cache")
    return create_rl_dataset(cfg.train_files, cfg, processor.tokenizer, processor, is_train=True)


def aitz_jsonl(tmp_path: Path) -> Path:
    """The real AitZ episode as a recipe JSONL trajectory, actions on a 999x999 space."""
    from PIL import Image

    from core.actions import to_mobile_use
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary

    steps = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    space = mut.CoordinateGrid.fixed(999, 999)
    actions = [mut.regrid_arguments(to_mobile_use(s.action, *s.image_size), mut.CoordinateGrid("pixels"), space,
                                    s.image_size) for s in steps]
    (tmp_path / "shots").mkdir(exist_ok=True)
    images = [f"shots/{AITZ.name}_{i}.png" for i in range(len(steps))]  # inside the JSONL's folder, as required
    for name in images:
        shutil.copy(AITZ / Path(name).name, tmp_path / name)
    assert Image.open(tmp_path / images[0]).size == steps[0].image_size
    path = tmp_path / "traj.jsonl"
    path.write_text(json.dumps({"instruction": steps[0].instruction, "images": images, "actions": actions}) + "\n")
    return path


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    proc = prepare("--output_dir", str(out), "--create_demo", "--demo_samples", "6")
    assert proc.returncode == 0, proc.stderr
    return out


def test_demo_rows_load_through_rlhf_dataset_and_run_online(demo_dir: Path, processor) -> None:
    import pyarrow.parquet as pq

    rows = pq.read_table(demo_dir / "train.parquet").to_pylist()
    assert len(rows) == 6 and len(pq.read_table(demo_dir / "test.parquet")) == 1
    row = rows[0]
    assert row["agent_name"] == "gui_agent" and row["extra_info"]["screen_width"] == 999
    expected = mut.plain(row["extra_info"]["expected_actions"])
    assert json.loads(row["ground_truth"]) == expected[0] and expected[-1]["action"] in ("terminate", "answer") or \
        expected
    assert all(0 <= v <= 999 for a in expected for k in ("coordinate", "coordinate2") for v in a.get(k) or [])
    ds = load_rlhf(demo_dir / "train.parquet", processor)
    assert len(ds) == 6
    item = ds[0]
    assert item["agent_name"] == "gui_agent"
    assert [b["type"] for b in item["raw_prompt"][0]["content"]] == ["image", "text"]
    # the dataset row drives the loop against the simulated phone: the gold policy solves it
    loop = agent.make_loop(processor)
    server = agent.ScriptedServer(processor.tokenizer, lambda: agent.gold_text(loop))
    out = agent.run_episode(loop, server, {k: item[k] for k in ("raw_prompt", "extra_info", "agent_name")})
    assert out.extra_fields["error"] is None and out.extra_fields["episode"]["success"]
    assert len(server.calls) == len(expected)


def test_jsonl_trajectory_replays_through_the_loop(tmp_path: Path, processor) -> None:
    import pyarrow.parquet as pq

    proc = prepare("--output_dir", str(tmp_path / "out"), "--input_file", str(aitz_jsonl(tmp_path)),
                   "--screen_width", "999", "--screen_height", "999")
    assert proc.returncode == 0, proc.stderr
    (row,) = pq.read_table(tmp_path / "out" / "train.parquet").to_pylist()
    expected = mut.plain(row["extra_info"]["expected_actions"])
    assert [a["action"] for a in expected] == ["system_button", "swipe", "click", "terminate"]
    assert len(row["extra_info"]["screenshots"]) == 4 and row["data_source"] == "gui_agent/replay"
    ds = load_rlhf(tmp_path / "out" / "train.parquet", processor)
    item = ds[0]
    # replaying the expected calls (on the grid) through tool + loop completes the logged task
    loop = agent.make_loop(processor)
    answers = iter(expected)
    server = agent.ScriptedServer(processor.tokenizer,
                                  lambda: f"Thought: t\nAction: a\n{mut.tool_call_text(next(answers))}")
    out = agent.run_episode(loop, server, {k: item[k] for k in ("raw_prompt", "extra_info", "agent_name")})
    assert out.extra_fields["error"] is None
    assert out.extra_fields["episode"]["success"] and len(out.multi_modal_data["images"]) == 4
    assert out.reward_score == pytest.approx(2.0)


def test_unified_parquet_input_and_bad_input_named(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary
    from core.data.unified import UnifiedWriter

    steps = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    unified = tmp_path / "aitz.parquet"
    with UnifiedWriter(unified) as writer:
        for s in steps:
            writer.write(s)
    proc = prepare("--output_dir", str(tmp_path / "u"), "--input_file", str(unified), "--grid", "grid1000")
    assert proc.returncode == 0, proc.stderr
    (row,) = pq.read_table(tmp_path / "u" / "train.parquet").to_pylist()
    click = mut.plain(row["extra_info"]["expected_actions"])[2]
    w, h = steps[2].image_size
    assert click["coordinate"] == [round(steps[2].action.point[0] / w * 1000), round(steps[2].action.point[1] / h * 1000)]
    assert row["extra_info"]["grid"] == "grid1000" and row["extra_info"]["screen_width"] == 1000

    bad = tmp_path / "bad.jsonl"
    good = json.loads(aitz_jsonl(tmp_path).read_text())
    bad.write_text(json.dumps(good) + "\n" + json.dumps(dict(good, actions=[{"action": "fly"}])) + "\n")
    proc = prepare("--output_dir", str(tmp_path / "b"), "--input_file", str(bad))
    assert proc.returncode == 2 and "bad.jsonl:2: field 'actions[0]'" in proc.stderr
    assert not (tmp_path / "b" / "train.parquet").exists()  # nothing half-written under the final name


# ------------------------------------------------------------------------------------------ hostile input


def _hostile_cases(tmp_path: Path, png_bomb: bytes) -> dict[str, tuple[dict, str]]:
    """name -> (a trajectory line built on the real AitZ one, the error its row must name)."""
    good = json.loads(aitz_jsonl(tmp_path).read_text())
    (tmp_path / "bomb.png").write_bytes(png_bomb)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.png"
    shutil.copy(tmp_path / good["images"][0], outside)
    click = {"action": "click", "coordinate": [10, 10]}
    return {
        "parent": (dict(good, images=["../" + outside.name, *good["images"][1:]]),
                   "field 'images[0]': image outside root"),
        "absolute": (dict(good, images=[str(outside), *good["images"][1:]]), "field 'images[0]': image outside root"),
        "bomb": (dict(good, images=["bomb.png", *good["images"][1:]]), "field 'images[0]': image too large"),
        "inf": (dict(good, actions=[dict(click, coordinate=[1e999, 5]), *good["actions"][1:]]),
                "field 'actions[0]': coordinate[0]: must be a finite number"),
        "400 digits": (dict(good, actions=[dict(click, coordinate=[10 ** 400, 5]), *good["actions"][1:]]),
                       "field 'actions[0]': coordinate[0]: must be a finite number"),
        "1 image 5 actions": (dict(good, images=good["images"][:1], actions=[click] * 5),
                              "field 'images': 1 image(s) for 5 action(s)"),
    }


@pytest.mark.parametrize("case", ["parent", "absolute", "bomb", "inf", "400 digits", "1 image 5 actions"])
def test_hostile_trajectory_is_a_named_row_error_exit_2(tmp_path: Path, png_bomb: bytes, case: str) -> None:
    line, message = _hostile_cases(tmp_path, png_bomb)[case]
    src = tmp_path / "hostile.jsonl"
    src.write_text(json.dumps(json.loads(aitz_jsonl(tmp_path).read_text())) + "\n" + json.dumps(line) + "\n")
    proc = prepare("--output_dir", str(tmp_path / "out"), "--input_file", str(src))
    assert proc.returncode == 2, proc.stderr
    (error,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert f"hostile.jsonl:2: {message}" in error and "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "train.parquet").exists()


def test_output_dir_naming_a_file_is_one_error_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me")
    proc = prepare("--output_dir", str(notes), "--input_file", str(aitz_jsonl(tmp_path)))
    assert proc.returncode == 2 and "--output_dir" in proc.stderr.splitlines()[-1] and "is a file" in proc.stderr
    assert "Traceback" not in proc.stderr and notes.read_text() == "keep me"
