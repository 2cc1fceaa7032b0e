"""SFT backends end to end on CPU, with real screenshots from ``../shared/data`` exported through
``core.data.export`` and the tiny Qwen2.5-VL from ``core.testing``.

* Exported gold coordinates survive each backend's OWN preprocessing: LLaMA-Factory's template + mm_plugin +
  collator (in ``.venvs/llamafactory``) and ms-swift's template (qwen-vl-utils resize) give an image grid whose
  pixel size is exactly the ``smart_resize`` size the export used, and the supervised tokens are exactly the
  exported answer, whose point is the gold point in that frame.
* ``llamafactory-cli train`` on the shipped LoRA YAML and ``ms-swift/examples/sft_lora.sh`` (``swift sft``) train
  a few steps on one real sample (CPU overrides: fp32, constant lr): the logged loss is finite and goes down, the
  adapter loads back with peft, lowers the loss on that sample and generates, and the checkpoint (LLaMA-Factory
  output folder; ms-swift after ``swift export --merge_lora``) runs in ``core.inference``'s HF backend.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from core.data.export import EXPORTERS, ExportOptions
from core.data.ingest import read
from core.data.summary import ConversionSummary
from core.geometry import (
    GUIR1_TRAIN_MAX_PIXELS,
    GUIR1_TRAIN_MIN_PIXELS,
    QWEN25VL_MAX_PIXELS,
    QWEN25VL_MIN_PIXELS,
    Frame,
    ImageGeometry,
    smart_resize,
)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
LF_BIN = ROOT / ".venvs" / "llamafactory" / "bin"
RL_BIN = ROOT / ".venvs" / "rl" / "bin"
LORA_YAML = ROOT / "LLaMA-Factory" / "examples" / "train_lora" / "qwen2_5_vl_3b_gui_lora_sft.yaml"
SWIFT_LORA = ROOT / "ms-swift" / "examples" / "sft_lora.sh"
OFFLINE_ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false"}
#: One real screenshot per source: 270x600 phone, 720x1280 phone, 1024x768 desktop, 2560x1440 RGBA web page.
SOURCES = (("aitw", "aitz"), ("guiodyssey", "guiodyssey"), ("screenagent", "screenagent"),
           ("screenspot", "screenspot"))
#: Training overrides for a CPU smoke run; everything else comes from the shipped recipe.
STEPS, LR = 6, 5e-3

needs_lf_env = pytest.mark.skipif(not (LF_BIN / "llamafactory-cli").exists(),
                                  reason="needs .venvs/llamafactory (make setup)")
needs_swift = pytest.mark.skipif(not (RL_BIN / "swift").exists(), reason="needs .venvs/rl with ms-swift")


@pytest.fixture(scope="module")
def click_steps():
    """The first click step of each real source (screenshots present; ScreenSpot has 2 of its 1,272)."""
    steps = []
    for source, folder in SOURCES:
        found = next((s for s in read(source, SHARED / folder, skip_missing=True, summary=ConversionSummary())
                      if s.action.type == "click"), None)
        assert found is not None, f"no click step with an image in {folder}"
        steps.append(found)
    return steps


def _export(target: str, steps, out: Path, name: str, *, min_pixels: int, max_pixels: int) -> list[dict]:
    summary = ConversionSummary()
    path = EXPORTERS[target](steps, out / name, summary=summary,
                             options=ExportOptions(name=name, min_pixels=min_pixels, max_pixels=max_pixels))
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(steps), summary.render()
    return rows


def _probe(python: Path, code: str, spec: dict, env: dict | None = None) -> list[dict]:
    proc = subprocess.run([str(python), "-c", code, json.dumps(spec)], capture_output=True, text=True,
                          env={**OFFLINE_ENV, **(env or {})}, cwd=ROOT, check=False)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("PROBE_JSON ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    return json.loads(lines[-1][len("PROBE_JSON "):])


@pytest.fixture(scope="module")
def real_processor_model(tmp_path_factory):
    """The tiny model with the real Qwen2.5-VL processor bounds (3136 .. 12,845,056 px), so the processor's
    own resize is the one the released checkpoints apply (the tiny default caps images at 200,704 px)."""
    from core.testing import tiny_qwen25vl_path

    model = tmp_path_factory.mktemp("real-processor") / "model"
    shutil.copytree(tiny_qwen25vl_path(), model)
    cfg_path = model / "preprocessor_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg.update(min_pixels=QWEN25VL_MIN_PIXELS, max_pixels=QWEN25VL_MAX_PIXELS,
               size={"shortest_edge": QWEN25VL_MIN_PIXELS, "longest_edge": QWEN25VL_MAX_PIXELS})
    cfg_path.write_text(json.dumps(cfg))
    return model


def _check_frame_and_answer(steps, rows, probes, tokenizer) -> None:
    """Grid pixels == the export's smart_resize size; supervised tokens == the answer; answer point == gold."""
    from core.parsers import parse_guir1_answer
    from core.testing import IM_END_ID, IMAGE_PAD_ID, MERGE_SIZE, PATCH_SIZE

    assert len(probes) == len(rows) == len(steps)
    for step, row, probe in zip(steps, rows, probes, strict=False):
        width, height = step.image_size
        h, w = smart_resize(height, width, min_pixels=GUIR1_TRAIN_MIN_PIXELS, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
        [(t, gh, gw)] = probe["image_grid_thw"]
        assert (t, gh * PATCH_SIZE, gw * PATCH_SIZE) == (1, h, w), (step.id, step.image_size)
        assert probe["input_ids"].count(IMAGE_PAD_ID) == gh * gw // MERGE_SIZE**2, step.id

        answer = row["messages"][-1]["content"]
        supervised = [i for i in probe["labels"] if i != -100]
        expected = tokenizer(answer, add_special_tokens=False)["input_ids"] + [IM_END_ID]
        assert supervised[: len(expected)] == expected, step.id
        assert tokenizer.decode(supervised[len(expected):]).strip() == "", step.id

        parsed = parse_guir1_answer(answer, strict=True)
        assert parsed.ok and parsed.action.action == "click", (step.id, parsed.error)
        gold = ImageGeometry(width, height, w, h).point(step.action.point, Frame.ORIGINAL, Frame.RESIZED)
        assert parsed.action.point == (round(gold[0]), round(gold[1])), step.id
        assert 0 <= parsed.action.point[0] < w and 0 <= parsed.action.point[1] < h


_LF_PREPROCESS = r"""
import json, sys
from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
from llamafactory.data.collator import MultiModalDataCollatorForSeq2Seq
from llamafactory.hparams import get_train_args
from llamafactory.model import load_tokenizer

model_args, data_args, training_args, _, _ = get_train_args(json.loads(sys.argv[1]))
tm = load_tokenizer(model_args)
template = get_template_and_fix_tokenizer(tm["tokenizer"], data_args)
dataset = get_dataset(template, model_args, data_args, training_args, stage="sft", **tm)["train_dataset"]
collator = MultiModalDataCollatorForSeq2Seq(template=template, tokenizer=tm["tokenizer"], processor=tm["processor"],
                                            model=None, label_pad_token_id=-100)
out = []
for i in range(len(dataset)):
    example = dataset[i]
    batch = collator([example])
    out.append({"input_ids": example["input_ids"], "labels": example["labels"],
                "image_grid_thw": batch["image_grid_thw"].tolist()})
print("PROBE_JSON " + json.dumps(out))
"""


def _lf_args(recipe_overrides: dict) -> dict:
    import yaml

    args = yaml.safe_load(LORA_YAML.read_text(encoding="utf-8"))
    args.update(bf16=False, preprocessing_num_workers=1, dataloader_num_workers=0, **recipe_overrides)
    return args


@needs_lf_env
def test_llamafactory_preprocessing_keeps_exported_frame(tmp_path, click_steps, real_processor_model):
    from transformers import AutoTokenizer

    rows = _export("llamafactory", click_steps, tmp_path / "data", "gui-r1-3k",
                   min_pixels=GUIR1_TRAIN_MIN_PIXELS, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    # The shipped recipe's pixel bounds, template and cutoff; only the model and folders differ.
    args = _lf_args({"model_name_or_path": str(real_processor_model), "dataset_dir": str(tmp_path / "data"),
                     "output_dir": str(tmp_path / "out"), "overwrite_cache": True})
    probes = _probe(LF_BIN / "python", _LF_PREPROCESS, args)
    _check_frame_and_answer(click_steps, rows, probes, AutoTokenizer.from_pretrained(real_processor_model))


_SWIFT_PREPROCESS = r"""
import json, sys
from swift.model import get_processor
from swift.template import get_template

spec = json.loads(sys.argv[1])
template = get_template(get_processor(spec["model"], use_hf=True), template_type=spec["template"])
template.set_mode("train")
out = []
for line in open(spec["dataset"], encoding="utf-8"):
    row = json.loads(line)
    enc = template.encode({"messages": row["messages"], "images": row["images"]})
    out.append({"input_ids": list(enc["input_ids"]), "labels": list(enc["labels"]),
                "image_grid_thw": enc["image_grid_thw"].tolist()})
print("PROBE_JSON " + json.dumps(out))
"""


def _script_pixels(script: Path) -> dict[str, str]:
    """MAX_PIXELS / MIN_PIXELS defaults the shipped script (or the file it sources) exports."""
    env = {}
    for line in script.read_text().splitlines():
        for key in ("MAX_PIXELS", "MIN_PIXELS"):
            prefix = f"export {key}=${{{key}:-"
            if line.startswith(prefix):
                env[key] = line[len(prefix):].rstrip("}")
    return env


@needs_swift
def test_swift_preprocessing_keeps_exported_frame(tmp_path, click_steps, real_processor_model):
    from transformers import AutoTokenizer

    pixels = _script_pixels(SWIFT_LORA.with_name("sft_common.sh"))  # the scripts source it
    assert pixels == {"MAX_PIXELS": str(GUIR1_TRAIN_MAX_PIXELS), "MIN_PIXELS": str(GUIR1_TRAIN_MIN_PIXELS)}
    rows = _export("swift", click_steps, tmp_path, "gui-r1-3k",
                   min_pixels=GUIR1_TRAIN_MIN_PIXELS, max_pixels=GUIR1_TRAIN_MAX_PIXELS)
    spec = {"model": str(real_processor_model), "template": "qwen2_5_vl",
            "dataset": str(tmp_path / "gui-r1-3k" / "gui-r1-3k.jsonl")}
    probes = _probe(RL_BIN / "python", _SWIFT_PREPROCESS, spec, env=pixels)
    _check_frame_and_answer(click_steps, rows, probes, AutoTokenizer.from_pretrained(real_processor_model))


# ----------------------------------------------------------------------------------------------- training


def _assert_loss_goes_down(losses: list[float]) -> None:
    assert len(losses) == STEPS, losses
    assert all(math.isfinite(x) for x in losses), losses
    # Same batch every step: each step may not raise the loss by more than noise, and it drops overall.
    assert all(b <= a + 1e-3 for a, b in itertools.pairwise(losses)), losses
    assert losses[-1] < losses[0] - 0.03, losses


def _answer_loss(model, processor, row: dict) -> float:
    """Mean cross-entropy of the exported answer tokens given the exported prompt and (resized) screenshot."""
    import torch
    from PIL import Image

    from core.inference.requests import hf_messages

    prompt = processor.apply_chat_template(hf_messages(row["messages"][:-1]), tokenize=False,
                                           add_generation_prompt=True)
    image = Image.open(row["images"][0]).convert("RGB")
    n_prompt = processor(text=[prompt], images=[image], return_tensors="pt")["input_ids"].shape[1]
    inputs = processor(text=[prompt + row["messages"][-1]["content"] + "<|im_end|>"], images=[image],
                       return_tensors="pt")
    labels = inputs["input_ids"].clone()
    labels[:, :n_prompt] = -100
    with torch.no_grad():
        return float(model(**inputs, labels=labels).loss)


def _check_adapter(adapter_dir: Path, row: dict) -> None:
    """peft loads the adapter onto the tiny base model; it lowers the answer loss and generates."""
    import torch
    from peft import PeftModel
    from PIL import Image
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from core.inference.requests import hf_messages
    from core.testing import tiny_qwen25vl_path

    base_path = tiny_qwen25vl_path()
    processor = AutoProcessor.from_pretrained(base_path)
    base = AutoModelForImageTextToText.from_pretrained(base_path, dtype=torch.float32).eval()
    base_loss = _answer_loss(base, processor, row)
    tuned = PeftModel.from_pretrained(base, adapter_dir).eval()
    assert tuned.peft_config["default"].r == 8 and tuned.peft_config["default"].lora_alpha == 16
    tuned_loss = _answer_loss(tuned, processor, row)
    assert math.isfinite(tuned_loss) and tuned_loss < base_loss - 0.02, (base_loss, tuned_loss)

    prompt = processor.apply_chat_template(hf_messages(row["messages"][:-1]), tokenize=False,
                                           add_generation_prompt=True)
    inputs = processor(text=[prompt], images=[Image.open(row["images"][0]).convert("RGB")], return_tensors="pt")
    with torch.no_grad():
        out = tuned.generate(**inputs, max_new_tokens=4, do_sample=False)
    assert out.shape[1] > inputs["input_ids"].shape[1]


def _check_core_inference(model_dir: Path, step) -> None:
    """The checkpoint folder runs in this project's inference (HF backend, CPU)."""
    from core.inference.backends import GenerationConfig
    from core.inference.backends.hf import HFBackend
    from core.inference.requests import ResizePolicy, build_request
    from core.testing import TINY_MAX_PIXELS, TINY_MIN_PIXELS

    request = build_request(step, template=None,
                            policy=ResizePolicy(min_pixels=TINY_MIN_PIXELS, max_pixels=TINY_MAX_PIXELS))
    assert request.ok, request.error
    backend = HFBackend(str(model_dir), device="cpu", gen=GenerationConfig(max_new_tokens=4), batch_size=1)
    try:
        [generation] = backend.generate([request])
    finally:
        backend.close()
    assert generation.error is None and generation.text is not None


def _train_rows(click_steps, target: str, out: Path) -> list[dict]:
    """One real phone step, exported at the tiny model's pixel bounds (its processor caps at 200,704 px)."""
    from core.testing import TINY_MAX_PIXELS, TINY_MIN_PIXELS

    return _export(target, click_steps[:1], out, "gui-r1-3k", min_pixels=TINY_MIN_PIXELS,
                   max_pixels=TINY_MAX_PIXELS)


@needs_lf_env
def test_llamafactory_lora_sft_on_cpu(tmp_path, click_steps):
    from core.testing import TINY_MAX_PIXELS, TINY_MIN_PIXELS, tiny_qwen25vl_path

    rows = _train_rows(click_steps, "llamafactory", tmp_path / "data")
    out = tmp_path / "out"
    overrides = {
        "model_name_or_path": str(tiny_qwen25vl_path()), "dataset_dir": str(tmp_path / "data"),
        "output_dir": str(out), "image_max_pixels": TINY_MAX_PIXELS, "image_min_pixels": TINY_MIN_PIXELS,
        "bf16": False, "max_steps": STEPS, "learning_rate": LR, "lr_scheduler_type": "constant",
        "warmup_steps": 0, "gradient_accumulation_steps": 1, "lora_dropout": 0.0, "logging_steps": 1,
        "save_steps": 1000, "cutoff_len": 1024, "preprocessing_num_workers": 1, "dataloader_num_workers": 0,
        "plot_loss": False,
    }
    cmd = [str(LF_BIN / "llamafactory-cli"), "train", str(LORA_YAML), *(f"{k}={v}" for k, v in overrides.items())]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=OFFLINE_ENV, cwd=ROOT,
                          check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]

    state = json.loads((out / "trainer_state.json").read_text())
    _assert_loss_goes_down([e["loss"] for e in state["log_history"] if "loss" in e])
    assert state["global_step"] == STEPS
    # LLaMA-Factory image paths are relative to the dataset_info.json folder.
    _check_adapter(out, {**rows[0], "images": [str(tmp_path / "data" / rows[0]["images"][0])]})
    _check_core_inference(out, click_steps[0])


@needs_swift
def test_swift_lora_sft_on_cpu(tmp_path, click_steps):
    from core.testing import TINY_MAX_PIXELS, TINY_MIN_PIXELS, tiny_qwen25vl_path

    rows = _train_rows(click_steps, "swift", tmp_path)
    out = tmp_path / "out"
    env = {"MODEL": str(tiny_qwen25vl_path()), "DATASET": str(tmp_path / "gui-r1-3k" / "gui-r1-3k.jsonl"),
           "OUTPUT_DIR": str(out), "SWIFT": str(RL_BIN / "swift"),
           "MAX_PIXELS": str(TINY_MAX_PIXELS), "MIN_PIXELS": str(TINY_MIN_PIXELS)}
    # CPU overrides after the shipped flags (later flags win); --check_model false and --use_hf true keep
    # swift off the ModelScope hub, which it would otherwise retry offline.
    cpu = ["--torch_dtype", "float32", "--max_steps", str(STEPS), "--learning_rate", str(LR),
           "--lr_scheduler_type", "constant", "--warmup_ratio", "0", "--gradient_accumulation_steps", "1",
           "--lora_dropout", "0", "--logging_steps", "1", "--save_steps", "1000", "--max_length", "1024",
           "--dataset_num_proc", "1", "--dataloader_num_workers", "0", "--check_model", "false",
           "--use_hf", "true", "--add_version", "false"]
    proc = subprocess.run(["bash", str(SWIFT_LORA), *cpu], capture_output=True, text=True,
                          env={**OFFLINE_ENV, **env}, cwd=ROOT, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]

    checkpoint = out / f"checkpoint-{STEPS}"
    state = json.loads((checkpoint / "trainer_state.json").read_text())
    _assert_loss_goes_down([e["loss"] for e in state["log_history"] if "loss" in e])
    _check_adapter(checkpoint, rows[0])

    merged = tmp_path / "merged"
    proc = subprocess.run([str(RL_BIN / "swift"), "export", "--adapters", str(checkpoint), "--merge_lora", "true",
                           "--use_hf", "true", "--output_dir", str(merged)], capture_output=True, text=True,
                          env=OFFLINE_ENV, cwd=ROOT, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    _check_core_inference(merged, click_steps[0])
