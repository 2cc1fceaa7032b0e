"""verl/prepare_gui_agent_data.py: simulated-phone demo rows and logged trajectories (JSONL with real AitZ
screenshots, unified parquet) load through verl's RLHFDataset with the tiny Qwen3-VL processor and run through
the gui_agent loop (online and replayed)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.rl_env

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RECIPE = ROOT / "verl" / "gui_agent" / "recipe.yaml"
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
                          env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})


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
    assert json.loads(row["ground_truth"]) == expected[0]
    # an online plan ends on the phone's goal check, not a terminate call: the gold episode below takes exactly
    # len(expected) turns
    assert expected and all(a["action"] in mut.RECIPE_ACTIONS for a in expected)
    assert all(0 <= v <= 999 for a in expected for k in ("coordinate", "coordinate2") for v in a.get(k) or [])
    from PIL import Image

    for r in rows:  # the prompt's screenshot is within the tool's cap; image_size stays the screen's
        w, h = Image.open(io.BytesIO(r["images"][0]["bytes"])).size
        sw, sh = r["extra_info"]["image_size"]
        assert w * h <= mut.DEFAULT_MAX_SCREENSHOT_PIXELS and (sw * sh <= w * h or (w % 32, h % 32) == (0, 0))
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


def test_validation_split_share_spread_and_at_least_one_row() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("prepare_gui_agent_data", SCRIPT)
    prep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prep)

    def rows(n):
        return [{"extra_info": {"index": i, "split": "train"}} for i in range(n)]

    split = list(prep.with_validation(rows(25), 0.1))
    assert [r["extra_info"]["index"] for k, r in split if k == "test"] == [9, 19]
    assert [r["extra_info"]["index"] for k, r in split if k == "train"] == [i for i in range(25) if i not in (9, 19)]
    assert all(r["extra_info"]["split"] == k for k, r in split)
    few = list(prep.with_validation(rows(3), 0.05))  # 3 x 0.05 < 1: the last row validates
    assert [(k, r["extra_info"]["index"]) for k, r in few] == [("train", 0), ("train", 1), ("test", 2)]
    one = list(prep.with_validation(rows(1), 0.05))  # one trajectory: trains and validates
    assert [(k, r["extra_info"]["index"]) for k, r in one] == [("train", 0), ("test", 0)]


def test_demo_rows_from_named_splits_after_skipped_tasks(tmp_path: Path) -> None:
    """`--train_split agent_train --skip K --test_split agent_val --test_samples N` (make demo-agent's RL data): the
    train rows are the split's tasks after the first K (those SFT used), the validation rows the other split's
    first N; bad values are one line naming the option."""
    import pyarrow.parquet as pq

    from core.world import list_tasks

    out = tmp_path / "rl"
    proc = prepare("--output_dir", str(out), "--create_demo", "--train_split", "agent_train", "--skip", "7",
                   "--demo_samples", "3", "--test_split", "agent_val", "--test_samples", "2",
                   "--max_screenshot_pixels", "57344")
    assert proc.returncode == 0, proc.stderr
    train = [t.id for t in list_tasks("agent_train")]
    val = [t.id for t in list_tasks("agent_val")]
    got = {name: [e["task_id"] for e in pq.read_table(out / f"{name}.parquet").column("extra_info").to_pylist()]
           for name in ("train", "test")}
    assert got == {"train": train[7:10], "test": val[:2]}
    for args, named in ((("--train_split", "nope"), "--train_split 'nope'"), (("--skip", "-1"), "--skip"),
                        (("--test_samples", "0"), "--test_samples"), (("--skip", str(len(train))), "--skip")):
        bad = prepare("--output_dir", str(tmp_path / "bad"), "--create_demo", "--demo_samples", "1", *args)
        assert bad.returncode == 2 and named in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


def dry_run(data_dir: Path, *overrides: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`DRY_RUN=1` on the recipe's GPU run script, as a user types it, with the tiny Qwen3-VL."""
    clean = {k: v for k, v in os.environ.items() if k not in ("TP", "TRAIN_BATCH_SIZE", "GRID", "ROLLOUT_ENGINE")}
    return subprocess.run(["bash", str(ROOT / "verl" / "examples" / "run_qwen3_vl_8b_gui_agent_gpu.sh"), *overrides],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**clean, "DRY_RUN": "1", "DATA_DIR": str(data_dir), "MODEL_PATH": str(qwen3_dir_path()),
                               "HF_HUB_OFFLINE": "1", **(env or {})})


def qwen3_dir_path() -> Path:
    from core.testing import tiny_model_path

    return tiny_model_path("qwen3-vl")


def report_of(proc: subprocess.CompletedProcess) -> dict[str, str]:
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.rstrip().endswith("no training)"), proc.stdout
    return dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)


@pytest.fixture(scope="module")
def shipped_dry_run(demo_dir: Path) -> dict[str, str]:
    """The dry run of the demo rows with no knob set: the shipped recipe file and, with DRY_RUN=1, vllm (both tests
    below read it; each dry run loads verl and both data splits, about 50 s)."""
    return report_of(dry_run(demo_dir))


@pytest.mark.slow
def test_dry_run_composes_and_loads_every_data_prep_mode(demo_dir: Path, tmp_path: Path,
                                                          shipped_dry_run: dict[str, str]) -> None:
    """The documented flow (data prep -> run script) gets to training on every prep mode: verl's config composed
    and validated, train AND validation files through RLHFDataset, tool YAML, agent loop and reward loaded."""
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary
    from core.data.unified import UnifiedWriter

    jsonl = tmp_path / "jsonl"
    assert prepare("--output_dir", str(jsonl), "--input_file", str(aitz_jsonl(tmp_path))).returncode == 0
    unified = tmp_path / "aitz.parquet"
    with UnifiedWriter(unified) as writer:
        for s in READERS["aitw"](DATA / "aitz", summary=ConversionSummary()):
            writer.write(s)
    parquet = tmp_path / "parquet"
    assert prepare("--output_dir", str(parquet), "--input_file", str(unified)).returncode == 0
    for data_dir, n_train, n_val, engine in ((demo_dir, 6, 1, "vllm"), (jsonl, 1, 1, "vllm"), (parquet, 1, 1, "sglang")):
        report = shipped_dry_run if data_dir == demo_dir else report_of(dry_run(data_dir, env={"ROLLOUT_ENGINE": engine}))
        assert report["train_files"].endswith(f"{{'rows': {n_train}, 'agent_name': 'gui_agent', 'first_row_images': 1}}")
        assert report["val_files"].startswith(str(data_dir / "test.parquet"))
        assert f"'rows': {n_val}," in report["val_files"]
        assert report["tools"] == f"mobile_use (grid grid999, recipe {RECIPE})"
        assert report["default_agent_loop"] == "gui_agent"
        assert report["rollout_engine"].startswith(engine) and report["rollout_n"] == "5"
        assert "max_turns=20" in report["gui_agent"]
        assert report["trainer"].startswith("v1 mode gui_agent, setup hook gui_agent_trainer.register; transfer_queue ")


@pytest.mark.slow
def test_dry_run_shows_the_agent_recipe_files_values(demo_dir: Path, tmp_path: Path,
                                                     shipped_dry_run: dict[str, str]) -> None:
    """The run script takes grid, turns, screenshots, cap, endings and prompt from the recipe file (RECIPE), the
    file `gui-agent rollout --recipe` reads: the dry run's loop and tool values are that file's, whatever it says."""
    from core.agent_recipe import AgentRecipe

    mine = tmp_path / "recipe.yaml"
    mine.write_text(RECIPE.read_text().replace("grid: grid999", "grid: grid1000").replace("max_turns: 20", "max_turns: 7")
                    .replace("on_invalid: end", "on_invalid: feedback").replace("Task: {instruction}", "Goal: {instruction}"))
    for path in (RECIPE, mine):
        recipe = AgentRecipe.load(path)
        report = shipped_dry_run if path == RECIPE else report_of(dry_run(demo_dir, env={"RECIPE": str(path)}))
        assert report["gui_agent"] == f"recipe {path}: " + ", ".join(
            f"{k}={getattr(recipe, k)}" for k in AgentRecipe.keys() if k != "prompt")
        assert report["gui_agent_prompt"] == repr(recipe.prompt)
        assert report["tools"] == f"mobile_use (grid {recipe.grid}, recipe {path})"
    assert "max_turns=7" in report["gui_agent"] and "grid=grid1000" in report["gui_agent"]
    # the values that moved into the recipe file are no knobs any more: one line naming the knob and the file
    knob = dry_run(demo_dir, env={"MAX_TURNS": "8"})
    assert knob.returncode == 2 and knob.stderr.strip() == (
        f"error: MAX_TURNS is set in the agent recipe file now (max_turns: in {RECIPE}); copy it and pass "
        f"RECIPE=<your copy>")
    mine.write_text(RECIPE.read_text() + "max_turn: 3\n")
    bad = dry_run(demo_dir, env={"RECIPE": str(mine)})
    assert bad.returncode == 2 and bad.stderr.strip().startswith(f"error: {mine}: unknown key(s) ['max_turn']")


@pytest.mark.slow
def test_dry_run_errors_are_one_named_line(demo_dir: Path, tmp_path: Path) -> None:
    bad = dry_run(demo_dir, "actor_rollout_ref.rollout.name=trt")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1] == (
        "error: actor_rollout_ref.rollout.name=trt: the recipes run on vllm, sglang, hf")
    missing = dry_run(tmp_path / "nowhere")
    assert missing.returncode == 2 and f"error: data.train_files: {tmp_path / 'nowhere'}/train.parquet not found" in missing.stderr
    typo = dry_run(demo_dir, "+gui_agent.max_turn=3")
    assert typo.returncode == 2 and "gui_agent: unknown key(s) ['max_turn']" in typo.stderr
    hook = dry_run(demo_dir, "ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=gui_agent_trainer.regster")
    assert hook.returncode == 2 and hook.stderr.strip().splitlines()[-1] == (
        "error: ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=gui_agent_trainer.regster: no function "
        "regster")


@pytest.mark.slow
def test_miniwob_rows_play_in_the_browser_through_the_agent_loop(tmp_path: Path, processor, browser) -> None:
    """`--create_demo --env miniwob`: online rows the agent loop plays in MiniWoB++ (Chromium) through the same
    episode session as the simulated phone; the fake generation server answers the row's expected calls."""
    import pyarrow.parquet as pq

    proc = prepare("--output_dir", str(tmp_path / "wob"), "--create_demo", "--env", "miniwob", "--demo_samples", "2",
                   "--suite", "click-button,click-test-2")
    assert proc.returncode == 0, proc.stderr
    rows = pq.read_table(tmp_path / "wob" / "train.parquet").to_pylist()
    assert [(r["extra_info"]["env"], r["extra_info"]["task_id"]) for r in rows] == [
        ("miniwob", "click-button"), ("miniwob", "click-test-2")]
    test_row = pq.read_table(tmp_path / "wob" / "test.parquet").to_pylist()[0]
    assert test_row["extra_info"]["seed"] >= 1_000_000  # held-out seeds: other utterances and layouts
    ds = load_rlhf(tmp_path / "wob" / "train.parquet", processor)
    item = ds[0]
    expected = mut.plain(rows[0]["extra_info"]["expected_actions"])
    loop = agent.make_loop(processor)
    answers = iter(expected)
    server = agent.ScriptedServer(processor.tokenizer,
                                  lambda: f"Thought: t\nAction: a\n{mut.tool_call_text(next(answers))}")
    out = agent.run_episode(loop, server, {k: item[k] for k in ("raw_prompt", "extra_info", "agent_name")})
    episode = out.extra_fields["episode"]
    assert out.extra_fields["error"] is None and episode["app"] == "miniwob"
    assert episode["instruction"] == rows[0]["extra_info"]["instruction"]  # the same seed: the prompt's episode
    assert episode["success"] and len(server.calls) == len(expected)
    assert out.reward_score == pytest.approx(2.0)


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
