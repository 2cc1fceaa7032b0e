"""Exporters: real shared data -> every backend format, loaded back by the backends' own loaders.

Steps come from the ingest readers over ``../shared/data`` (ScreenSpot web screenshots with boxes, the
GUIOdyssey step, the Android-in-the-Zoo episode); prompts and gold answers from ``core.prompts``; answers are
parsed back with ``core.parsers``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image

from core.data.export import EXPORTERS, ExportOptions
from core.data.export import sinks as export_sinks
from core.data.export.llamafactory import update_dataset_info
from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.geometry import GUIR1_TRAIN_MAX_PIXELS, Frame, ImageGeometry, smart_resize
from core.parsers import parse_action
from core.prompts import default_template_for, get_template
from core.schema import Step, StepValidationError

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
RL_PY = REPO / ".venvs" / "rl" / "bin" / "python"
LF_PY = REPO / ".venvs" / "llamafactory" / "bin" / "python"

pytestmark = pytest.mark.skipif(not DATA.exists(), reason=f"shared data folder {DATA} is absent")


# --------------------------------------------------------------------------------------------- data


def _read(source: str, path: Path, **kw) -> list[Step]:
    return list(READERS[source](path, summary=ConversionSummary(), **kw))


@pytest.fixture(scope="module")
def grounding_steps() -> list[Step]:
    """ScreenSpot rows whose screenshots ship (2560x1440 RGBA) + the GUIOdyssey step (720x1280)."""
    steps = _read("screenspot", DATA / "screenspot" / "screenspot_v1_annotations.jsonl",
                  images_dir=DATA / "screenspot" / "images", skip_missing=True)
    steps += _read("guiodyssey", DATA / "guiodyssey" / "navigation_meta_format.json", images_dir=DATA / "guiodyssey")
    assert len(steps) == 5 and all(s.bbox is not None for s in steps)
    return steps


@pytest.fixture(scope="module")
def episode_steps() -> list[Step]:
    steps = _read("aitw", DATA / "aitz")
    assert [s.action.type for s in steps] == ["press_home", "scroll", "click", "complete"]
    return steps


def _export(target: str, steps, out: Path, **opts) -> tuple[Path, ConversionSummary]:
    summary = ConversionSummary()
    options = ExportOptions(name=opts.pop("name", "test-set"), **opts)
    return EXPORTERS[target](iter(steps), out, options=options, summary=summary), summary


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _template(step: Step, name: str | None = None):
    return get_template(name or default_template_for(step))


def _geometry(step: Step, max_pixels: int | None, template) -> ImageGeometry:
    """The model's view of the step's image: the template's resize, ``max_pixels`` overriding its bound."""
    return ImageGeometry.for_model(*step.image_size, factor=template.factor, min_pixels=template.min_pixels,
                                   max_pixels=max_pixels or template.max_pixels)


def _assert_answer_round_trips(answer: str, step: Step, geometry: ImageGeometry, frame: Frame) -> None:
    """Parse the gold answer back with core.parsers: same action, point within 1 px (or half a model unit)."""
    result = parse_action(answer)
    assert result.ok, (answer, result.error)
    action = result.action.to_action(geometry, frame)
    assert action.type == step.action.type
    if step.action.point is not None:
        sx, sy = geometry.scale(frame)
        tol_x, tol_y = max(1.0, 0.5 / sx + 1e-6), max(1.0, 0.5 / sy + 1e-6)
        assert abs(action.point[0] - step.action.point[0]) <= tol_x
        assert abs(action.point[1] - step.action.point[1]) <= tol_y


# --------------------------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("max_pixels", [None, GUIR1_TRAIN_MAX_PIXELS])
@pytest.mark.parametrize("target", ["llamafactory", "swift", "vlmr1"])
def test_jsonl_targets_round_trip_answers_boxes_and_images(tmp_path, grounding_steps, target, max_pixels):
    path, summary = _export(target, grounding_steps, tmp_path / target, max_pixels=max_pixels)
    rows = _jsonl(path)
    assert summary.written == len(rows) == len(grounding_steps) and summary.n_skipped == 0
    for row, step in zip(rows, grounding_steps, strict=False):
        if target == "llamafactory":
            answer, image_ref = row["messages"][-1]["content"], row["images"][0]
            assert [m["role"] for m in row["messages"]][-2:] == ["user", "assistant"]
            image_path = (tmp_path / image_ref) if not os.path.isabs(image_ref) else Path(image_ref)
        elif target == "swift":
            answer, image_path = row["solution"], Path(row["images"][0])
            assert row["messages"][-1] == {"role": "assistant", "content": answer}
        else:
            answer, image_path = row["conversations"][1]["value"], tmp_path / target / row["image"]
            assert row["conversations"][0]["value"].count("<image>") == 1 and row["solution"] == answer
        template = _template(step)
        frame = template.frame
        geometry = _geometry(step, max_pixels, template)
        if target != "llamafactory":
            assert row["frame"] == frame.value
        _assert_answer_round_trips(answer, step, geometry, frame)
        data = image_path.read_bytes()
        if max_pixels is None:  # pass-through: byte-identical to the source screenshot
            assert hashlib.sha1(data).digest() == hashlib.sha1(step.image_bytes()).digest()
        else:  # stored at the smart_resize size, which a processor with the same max_pixels keeps as is
            with Image.open(io.BytesIO(data)) as im:
                assert im.size == (geometry.resized_width, geometry.resized_height)
                assert smart_resize(im.height, im.width, max_pixels=max_pixels) == (im.height, im.width)
        if target != "llamafactory":  # reward columns: gt_bbox in the model frame maps back to the box
            back = geometry.box(row["gt_bbox"], frame, Frame.ORIGINAL)
            assert max(abs(a - b) for a, b in zip(back, step.bbox, strict=False)) <= 1.0
            assert row["image_size"] == list(step.image_size)
            assert row["resized_size"] == [geometry.resized_width, geometry.resized_height]


def test_verl_rows_carry_guir1_ground_truth_in_the_model_frame(tmp_path, grounding_steps, episode_steps):
    steps = grounding_steps + episode_steps
    path, summary = _export("verl", steps, tmp_path, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    table = pq.read_table(path)
    assert table.num_rows == summary.written == len(steps)
    for row, step in zip(table.to_pylist(), steps, strict=False):
        info, gt = row["extra_info"], json.loads(row["reward_model"]["ground_truth"])
        assert row["reward_model"]["style"] == "rule" and row["ability"] == f"gui_{step.task_type}"
        assert sum(m["content"].count("<image>") for m in row["prompt"]) == 1 and len(row["images"]) == 1
        template = _template(step, info["template"])
        frame = template.frame
        assert info["frame"] == frame.value and info["template"] == default_template_for(step)
        geometry = _geometry(step, GUIR1_TRAIN_MAX_PIXELS, template)
        assert info["image_size"] == list(step.image_size)
        assert info["resized_size"] == [geometry.resized_width, geometry.resized_height]
        with Image.open(io.BytesIO(row["images"][0]["bytes"])) as im:
            assert im.size == tuple(info["resized_size"])
        assert gt["action"] == step.action.type and gt["input_text"] == step.action.guir1_input_text()
        if step.bbox is not None:
            assert gt["gt_bbox"] == info["bbox"]
            back = geometry.box(gt["gt_bbox"], frame, Frame.ORIGINAL)
            assert max(abs(a - b) for a, b in zip(back, step.bbox, strict=False)) <= 1.0
            assert info["bbox_original"] == list(step.bbox)
        elif step.action.point is not None:
            assert len(gt["gt_bbox"]) == 2
        else:
            assert gt["gt_bbox"] == [-100.0, -100.0]
        _assert_answer_round_trips(info["answer"], step, geometry, frame)


# --------------------------------------------------------------------------------------------- backends' loaders


def _verl_config(train_file: Path):
    from omegaconf import OmegaConf

    import verl

    cfg = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    data = cfg.data
    data.train_files = str(train_file)
    data.max_prompt_length = 8192
    data.filter_overlong_prompts = True
    data.filter_overlong_prompts_workers = None  # in-process (no fork of a torch-threaded parent)
    data.cache_dir = str(train_file.parent / "verl-cache")
    return cfg


@pytest.mark.rl_env
@pytest.mark.parametrize("target", ["verl", "mobile_use"])
def test_verl_rlhf_dataset_loads_the_export(tmp_path, grounding_steps, episode_steps, target):
    pytest.importorskip("verl")
    from transformers import AutoProcessor, AutoTokenizer
    from verl.trainer.ppo.utils import create_rl_dataset
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from core.testing import tiny_qwen25vl_path

    steps = grounding_steps if target == "verl" else episode_steps
    opts = {"max_pixels": 200_000} if target == "verl" else {}
    path, summary = _export(target, steps, tmp_path, **opts)
    model = tiny_qwen25vl_path()
    tokenizer, processor = AutoTokenizer.from_pretrained(model), AutoProcessor.from_pretrained(model)
    cfg = _verl_config(path)
    ds = create_rl_dataset(cfg.data.train_files, cfg.data, tokenizer, processor, is_train=True)
    assert isinstance(ds, RLHFDataset) and len(ds) == summary.written  # none filtered out as broken
    item = ds[0]
    blocks = [b for m in item["raw_prompt"] for b in m["content"] if isinstance(m["content"], list)]
    assert sum(b["type"] == "image" for b in blocks) == 1
    images, _, _ = RLHFDataset._process_multi_modal_info(item["raw_prompt"], 14, cfg.data)
    assert len(images) == 1
    text = processor.apply_chat_template(item["raw_prompt"], add_generation_prompt=True, tokenize=False)
    inputs = processor(text=[text], images=images, return_tensors="pt")
    if target == "verl":
        # the stored image is already at the smart_resize size: the processor's grid is exactly it / 14
        rw, rh = item["extra_info"]["resized_size"]
        assert inputs["image_grid_thw"][0].tolist() == [1, rh // 14, rw // 14]
        assert json.loads(item["reward_model"]["ground_truth"])["action"] == "click"
    else:
        info = item["extra_info"]
        assert info["episode_id"] == "523638528775825151" and len(info["screenshots"]) == 4
        acts = info["expected_actions"]
        assert [a["action"] for a in acts] == ["system_button", "swipe", "click", "terminate"]
        click, step = acts[2], episode_steps[2]
        w, h = step.image_size
        assert click["coordinate"] == [round(step.action.point[0] / w * 1000), round(step.action.point[1] / h * 1000)]
        assert acts[1]["coordinate"][1] > acts[1]["coordinate2"][1]  # scroll down = finger moves up
        assert json.loads(item["ground_truth"]) == {k: v for k, v in acts[0].items() if v is not None}


def test_mobile_use_groups_episodes_and_skips_desktop_only_actions(tmp_path, episode_steps, grounding_steps):
    desktop = episode_steps[2].model_copy(update={"action": episode_steps[2].action.model_copy(
        update={"type": "doubleclick"}), "id": "dbl", "extra": {"episode_id": "desk", "step_index": 0}})
    path, summary = _export("mobile_use", [*episode_steps, desktop, grounding_steps[0]], tmp_path)
    rows = pq.read_table(path).to_pylist()
    assert [len(r["extra_info"]["expected_actions"]) for r in rows] == [4, 1]
    assert sum(summary.skipped.values()) == 1
    reason = next(iter(summary.skipped))
    assert "doubleclick" in reason and summary.examples[reason][0].startswith("dbl")
    assert rows[0]["extra_info"]["screen_width"] == 270 and rows[0]["extra_info"]["frame"] == "grid1000"
    raw = rows[0]["raw_prompt"]
    assert [b["type"] for m in raw for b in m["content"]].count("image") == 1


@pytest.mark.rl_env
def test_swift_load_dataset_reads_the_export(tmp_path, grounding_steps):
    pytest.importorskip("swift")
    from swift.dataset import load_dataset

    path, _ = _export("swift", grounding_steps, tmp_path, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    train, _ = load_dataset([str(path)], remove_unused_columns=False, num_proc=1, load_from_cache_file=False)
    assert len(train) == len(grounding_steps)
    row = train[0]
    assert row["messages"][-1]["role"] == "assistant" and "<image>" in row["messages"][-2]["content"]
    assert Path(row["images"][0]["path"]).is_file()
    assert row["solution"] == row["messages"][-1]["content"]
    assert row["gt_action"] == "click" and len(row["gt_bbox"]) == 4 and row["image_size"] == [2560, 1440]



@pytest.mark.rl_env
def test_swift_export_scores_through_the_ms_swift_reward_plugin(tmp_path, grounding_steps, episode_steps):
    """The columns ms-swift hands its ORM plugins carry what core.rewards needs: gold answers score 1."""
    pytest.importorskip("swift")
    from swift.dataset import load_dataset
    from swift.utils import import_external_file

    path, _ = _export("swift", grounding_steps + episode_steps, tmp_path, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    train, _ = load_dataset([str(path)], remove_unused_columns=False, num_proc=1, load_from_cache_file=False)
    plugin = import_external_file(str(REPO / "ms-swift" / "plugin" / "gui_rewards.py"))
    orm = plugin.orms["r1gui_accuracy"]()  # the registry the plugin registered into
    columns = {k: train[k] for k in train.column_names if k not in ("messages", "images")}
    gold = [row["solution"] for row in train]
    assert orm(gold, **columns) == [1.0] * len(gold)
    shifted = gold[1:] + gold[:1]
    assert sum(orm(shifted, **columns)) < len(gold)


@pytest.mark.rl_env
def test_vlmr1_hf_dataset_feeds_trl(tmp_path, grounding_steps):
    datasets = pytest.importorskip("datasets")
    from transformers import AutoProcessor
    from trl.data_utils import prepare_multimodal_messages

    from core.testing import tiny_qwen25vl_path

    path, _ = _export("vlmr1", grounding_steps, tmp_path, name="vl")
    ds = datasets.load_from_disk(str(tmp_path / "vl.hf"))
    assert {"prompt", "image", "solution", "gt_bbox"} <= set(ds.column_names) and len(ds) == len(grounding_steps)
    row = ds[0]
    assert row["image"].size == grounding_steps[0].image_size and "<image>" not in row["prompt"][0]["content"]
    messages = prepare_multimodal_messages(row["prompt"], [row["image"]])
    processor = AutoProcessor.from_pretrained(tiny_qwen25vl_path())
    text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text.count("<|vision_start|><|image_pad|><|vision_end|>") == 1
    assert row["solution"] == _jsonl(path)[0]["conversations"][1]["value"]


@pytest.mark.llamafactory_env
def test_llamafactory_loader_reads_the_export(tmp_path, grounding_steps):
    if not LF_PY.exists():
        pytest.skip("the llamafactory environment is not built")
    data_dir = tmp_path / "data"
    (data_dir).mkdir()
    (data_dir / "dataset_info.json").write_text(json.dumps({"other": {"file_name": "other.json"}}))
    path, _ = _export("llamafactory", grounding_steps, data_dir / "gui-r1-3k", name="gui-r1-3k",
                      max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    info = json.loads((data_dir / "dataset_info.json").read_text())
    assert set(info) == {"other", "gui-r1-3k"} and info["gui-r1-3k"]["file_name"] == "gui-r1-3k/gui-r1-3k.jsonl"
    answer = _jsonl(path)[0]["messages"][-1]["content"]
    script = textwrap.dedent(f"""
        import json, os
        from llamafactory.data.loader import _load_single_dataset
        from llamafactory.data.parser import get_dataset_list
        from llamafactory.hparams import get_train_args
        model_args, data_args, training_args, _, _ = get_train_args(dict(
            model_name_or_path={str(_tiny_model())!r}, stage="sft", do_train=True, finetuning_type="lora",
            dataset="gui-r1-3k", dataset_dir={str(data_dir)!r}, template="qwen2_vl", cutoff_len=4096,
            output_dir={str(tmp_path / 'lf-out')!r}, overwrite_cache=True, report_to="none"))
        attr = get_dataset_list(["gui-r1-3k"], data_args.dataset_dir)[0]
        ds = _load_single_dataset(attr, model_args, data_args, training_args)
        row = ds[0]
        print(json.dumps({{"n": len(ds), "images": row["_images"], "response": row["_response"],
                          "prompt": row["_prompt"]}}))
    """)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DISABLE_VERSION_CHECK": "1"}
    proc = subprocess.run([str(LF_PY), "-c", script], check=False, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["n"] == len(grounding_steps)
    assert len(out["images"]) == 1 and Path(out["images"][0]).is_file()  # resolved through dataset_dir
    assert out["response"] == [{"role": "assistant", "content": answer}]
    assert out["prompt"][-1]["content"].count("<image>") == 1


def _tiny_model() -> Path:
    from core.testing import tiny_qwen25vl_path

    return tiny_qwen25vl_path()


# --------------------------------------------------------------------------------------------- robustness


def test_dataset_info_update_merges_and_rejects_garbage(tmp_path):
    info = tmp_path / "dataset_info.json"
    update_dataset_info(info, "a", {"file_name": "a.jsonl"})
    update_dataset_info(info, "b", {"file_name": "b.jsonl"})
    update_dataset_info(info, "a", {"file_name": "a.jsonl", "formatting": "sharegpt"})  # the same dataset again
    with pytest.raises(ValueError, match=r"already has a dataset 'a' \(file_name 'a.jsonl'\).*'a2.jsonl'"):
        update_dataset_info(info, "a", {"file_name": "a2.jsonl"})  # another file: a name clash, never replaced
    assert json.loads(info.read_text()) == {"a": {"file_name": "a.jsonl", "formatting": "sharegpt"},
                                            "b": {"file_name": "b.jsonl"}}
    info.write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        update_dataset_info(info, "c", {})


def test_bad_images_are_skipped_with_a_reason(tmp_path, grounding_steps):
    good = grounding_steps[-1]
    not_an_image = good.model_copy(update={"id": "garbage", "image": b"definitely not an image"})
    wrong_size = good.model_copy(update={"id": "wrong-size", "image_size": (1000, 2000), "bbox": None})
    with pytest.raises(StepValidationError, match="record garbage: field 'image': bad image"):  # issue 12
        _export("llamafactory", [good, not_an_image], tmp_path / "strict", max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    path, summary = _export("llamafactory", [good, not_an_image, wrong_size], tmp_path / "lf",
                            max_pixels=GUIR1_TRAIN_MAX_PIXELS, skip_missing=True)
    assert summary.written == 1 and len(_jsonl(path)) == 1
    reasons = {r: summary.examples[r] for r in summary.skipped}
    assert any("unrecognised image format" in r and ex == ["garbage"] for r, ex in reasons.items())
    assert any("differs from image_size" in r and ex == ["wrong-size"] for r, ex in reasons.items())


class _Killed(Exception):
    pass


def _dying(steps, after: int):
    for i, s in enumerate(steps):
        if i == after:
            raise _Killed
        yield s


@pytest.mark.parametrize("target", ["llamafactory", "verl"])
def test_interrupted_export_resumes_without_redoing_work(tmp_path, monkeypatch, grounding_steps, episode_steps,
                                                         target):
    monkeypatch.setattr(export_sinks, "CHECKPOINT_ROWS", 2)
    monkeypatch.setattr(export_sinks, "PART_BYTES", 1)  # close a parquet part after every row
    steps = grounding_steps + episode_steps  # 9 steps
    clean, _ = _export(target, steps, tmp_path / "ref" / "clean", workers=2)  # its own dataset_info.json
    out = tmp_path / "resumed"
    with pytest.raises(_Killed):
        _export(target, _dying(steps, 7), out, workers=2)
    final = out / ("test-set.jsonl" if target == "llamafactory" else "test-set.parquet")
    assert not final.exists()  # nothing that looks complete
    images_before = {p: p.stat().st_mtime_ns for p in (out / "images").rglob("*.*")} if target == "llamafactory" \
        else {}
    path, summary = _export(target, steps, out, workers=2)
    assert path == final and summary.written == len(steps)
    if target == "llamafactory":
        rows = [dict(r, images=[Path(i).name for i in r["images"]]) for r in _jsonl(path)]
        ref = [dict(r, images=[Path(i).name for i in r["images"]]) for r in _jsonl(clean)]
        assert rows == ref
        assert images_before and all(p.stat().st_mtime_ns == t for p, t in images_before.items())
        assert not list(out.glob("*.tmp")) and not list(out.glob("*.progress.json"))
    else:
        assert pq.read_table(path).to_pylist() == pq.read_table(clean).to_pylist()
        assert not (out / "test-set.parquet.parts").exists()


def test_unified_export_round_trips_steps(tmp_path, grounding_steps):
    from core.data.unified import iter_steps

    path, summary = _export("unified", grounding_steps, tmp_path)
    back = list(iter_steps(path))
    assert summary.written == len(back) == len(grounding_steps)
    assert [(s.id, s.bbox, s.action, s.image_sha1()) for s in back] == \
        [(s.id, s.bbox, s.action, s.image_sha1()) for s in grounding_steps]


def test_options_reject_bad_values():
    with pytest.raises(ValueError, match="workers"):
        ExportOptions(name="x", workers=0)
    with pytest.raises(ValueError, match="min_pixels"):
        ExportOptions(name="x", min_pixels=10, max_pixels=5)
    with pytest.raises(ValueError, match="name"):
        ExportOptions(name="a/b")


def test_vlmr1_export_of_an_empty_selection_writes_an_empty_dataset(tmp_path):
    import datasets

    summary = ConversionSummary()
    out = EXPORTERS["vlmr1"](iter(()), tmp_path, options=ExportOptions(name="empty"), summary=summary)
    assert out.read_text() == "" and summary.written == 0
    assert len(datasets.load_from_disk(str(tmp_path / "empty.hf"))) == 0


def test_desktop_sessions_export_every_action_with_the_default_template(tmp_path):
    """ScreenAgent steps (rightclick, doubleclick, moveto, hotkey, ...) get the desktop template by default."""
    from core.data.ingest import READERS

    summary = ConversionSummary()
    steps = READERS["screenagent"](DATA / "screenagent", summary=summary)
    out = EXPORTERS["llamafactory"](steps, tmp_path / "sa", options=ExportOptions(name="sa"), summary=summary)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary.written == len(rows) == 33
    assert not [r for r in summary.skipped if "cannot express" in r]
    answers = " ".join(r["messages"][-1]["content"] for r in rows)
    for action in ("rightclick", "doubleclick", "moveto", "hotkey"):
        assert f"'action': '{action}'" in answers
