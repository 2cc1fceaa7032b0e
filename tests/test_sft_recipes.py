"""The shipped SFT recipes compose: LLaMA-Factory YAMLs parse with LLaMA-Factory's own argument parser, their
pixel bounds equal the export's, their dataset names resolve in an exported ``dataset_info.json``, DeepSpeed
paths exist, the ms-swift scripts pass only flags ``swift sft`` knows, and the make targets call the right env.

LLaMA-Factory lives in its own environment, so its checks run in a ``.venvs/llamafactory`` subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from core.geometry import GUIR1_TRAIN_MAX_PIXELS, GUIR1_TRAIN_MIN_PIXELS

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
LF_PYTHON = ROOT / ".venvs" / "llamafactory" / "bin" / "python"
LF_EXAMPLES = ROOT / "LLaMA-Factory" / "examples"
LF_YAMLS = sorted(LF_EXAMPLES.glob("train_*/*.yaml"))
SWIFT_SCRIPTS = {"lora": ROOT / "ms-swift" / "examples" / "sft_lora.sh",
                 "full": ROOT / "ms-swift" / "examples" / "sft_full.sh"}
DEEPSPEED = ROOT / "configs" / "deepspeed"
OFFLINE_ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}

needs_lf_env = pytest.mark.skipif(not LF_PYTHON.exists(), reason="needs .venvs/llamafactory (make setup)")


def _recipe(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_recipes_present():
    names = {p.relative_to(LF_EXAMPLES).as_posix() for p in LF_YAMLS}
    assert {"train_lora/qwen2_5_vl_3b_gui_lora_sft.yaml", "train_lora/qwen2_5_vl_7b_gui_lora_sft.yaml",
            "train_full/qwen2_5_vl_full_sft.yaml", "train_lora/qwen2_5_vl_3b_gui_lora_sft_tuned.yaml"} <= names
    assert any("qwen3_vl" in n for n in names)
    assert not list((ROOT / "LLaMA-Factory").rglob("__init__.py"))
    assert not list((ROOT / "ms-swift").rglob("__init__.py"))


@pytest.mark.parametrize("path", LF_YAMLS, ids=lambda p: p.name)
def test_llamafactory_recipe_defaults(path):
    r = _recipe(path)
    # Gold coordinates are exported in the frame of smart_resize within these bounds.
    assert r["image_max_pixels"] == GUIR1_TRAIN_MAX_PIXELS
    assert r["image_min_pixels"] == GUIR1_TRAIN_MIN_PIXELS
    assert r["stage"] == "sft" and r["do_train"] is True
    assert r["bf16"] is True and r["disable_gradient_checkpointing"] is False
    assert r["per_device_train_batch_size"] == 1 and 4 <= r["gradient_accumulation_steps"] <= 8
    assert 1 <= r["num_train_epochs"] <= 3
    # Relative to LLaMA-Factory/, where the seed (and make sft-llamafactory) runs llamafactory-cli.
    assert r["dataset_dir"] == "data" and r["output_dir"].startswith("../saves/")
    qwen3 = "Qwen3-VL" in r["model_name_or_path"]
    assert r["template"] == ("qwen3_vl_nothink" if qwen3 else "qwen2_vl")
    if path.name == "qwen2_5_vl_3b_gui_lora_sft.yaml":  # the seed monorepo README's YAML, value for value
        seed = {"model_name_or_path": "Qwen/Qwen2.5-VL-3B-Instruct", "stage": "sft", "finetuning_type": "lora",
                "lora_rank": 8, "lora_alpha": 16, "dataset": "gui-r1-3k", "learning_rate": 1.0e-6,
                "num_train_epochs": 1.0, "per_device_train_batch_size": 1, "gradient_accumulation_steps": 4}
        assert {k: r[k] for k in seed} == seed
        assert all("# seed" in line for line in path.read_text().splitlines() if line.split(":")[0] in seed)
    elif r["finetuning_type"] == "lora":
        assert (r["lora_rank"], r["lora_alpha"], r["learning_rate"]) == (8, 16, 1.0e-4)
        assert "this project's choice" in path.read_text()
    if r["finetuning_type"] == "lora":
        assert path.parent.name == "train_lora" and "deepspeed" not in r
    else:
        assert r["finetuning_type"] == "full" and r["learning_rate"] == 1.0e-5
        assert path.parent.name == "train_full"
        ds = ROOT / "LLaMA-Factory" / r["deepspeed"]
        assert ds.is_file() and json.loads(ds.read_text())["zero_optimization"]["stage"] == 3
    if path.name == "qwen2_5_vl_full_sft.yaml":
        assert r["model_name_or_path"] == "Qwen/Qwen2.5-VL-7B-Instruct"


def test_deepspeed_configs():
    stages = {}
    for name in ("ds_z2_config.json", "ds_z3_config.json", "ds_z3_offload_config.json"):
        cfg = json.loads((DEEPSPEED / name).read_text())
        # "auto" lets the HF Trainer (LLaMA-Factory, ms-swift, trl) fill batch sizes and precision.
        for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
            assert cfg[key] == "auto", (name, key)
        assert cfg["bf16"]["enabled"] == "auto"
        stages[name] = cfg["zero_optimization"]
    assert stages["ds_z2_config.json"]["stage"] == 2
    assert stages["ds_z3_config.json"]["stage"] == 3 and "offload_param" not in stages["ds_z3_config.json"]
    off = stages["ds_z3_offload_config.json"]
    assert off["stage"] == 3 and off["offload_param"]["device"] == off["offload_optimizer"]["device"] == "cpu"
    for z3 in (stages["ds_z3_config.json"], off):
        assert z3["stage3_gather_16bit_weights_on_model_save"] is True  # saves a loadable full checkpoint


_LF_PARSE = r"""
import json, sys
from llamafactory.data.parser import get_dataset_list
from llamafactory.hparams import get_train_args

out = {}
for spec in json.loads(sys.argv[1]):
    model_args, data_args, training_args, finetuning_args, _ = get_train_args(spec["args"])
    datasets = get_dataset_list(data_args.dataset, spec["dataset_dir"])
    out[spec["path"]] = {
        "image_max_pixels": model_args.image_max_pixels, "image_min_pixels": model_args.image_min_pixels,
        "finetuning_type": finetuning_args.finetuning_type, "lora_rank": finetuning_args.lora_rank,
        "lora_target": finetuning_args.lora_target, "freeze_vision_tower": finetuning_args.freeze_vision_tower,
        "template": data_args.template, "learning_rate": training_args.learning_rate,
        "gradient_checkpointing": not model_args.disable_gradient_checkpointing,
        "datasets": [(d.dataset_name, d.load_from, d.formatting, d.images) for d in datasets],
    }
try:
    get_train_args({**json.loads(sys.argv[1])[0]["args"], "not_an_argument": 1})
    out["unknown_key_rejected"] = False
except ValueError as e:
    out["unknown_key_rejected"] = "not_an_argument" in str(e)
print("RESULT " + json.dumps(out))
"""


@needs_lf_env
def test_llamafactory_parses_recipes_and_finds_exported_dataset(tmp_path):
    """Every key of every YAML is one LLaMA-Factory knows (its own ``get_train_args``, unknown keys raise), and
    the dataset names resolve in the dataset_info.json the exporter writes from real screenshots."""
    from core.data.cli import run_convert

    data_dir = tmp_path / "data"
    names = sorted({_recipe(p)["dataset"] for p in LF_YAMLS})
    for name in names:
        written, summary = run_convert("aitw", "llamafactory", SHARED / "aitz", data_dir / name, name=name,
                                       max_pixels=GUIR1_TRAIN_MAX_PIXELS, min_pixels=GUIR1_TRAIN_MIN_PIXELS)
        assert summary.written >= 1 and written.is_file()
    specs = []
    for path in LF_YAMLS:
        args = _recipe(path)
        # CPU-only machine: no bf16 and no DeepSpeed launcher; everything else exactly as shipped.
        args.update(bf16=False, output_dir=str(tmp_path / "out"), dataset_dir=str(data_dir))
        args.pop("deepspeed", None)
        specs.append({"path": path.name, "args": args, "dataset_dir": str(data_dir)})
    proc = subprocess.run([str(LF_PYTHON), "-c", _LF_PARSE, json.dumps(specs)], check=False, capture_output=True,
                          text=True, env=OFFLINE_ENV, cwd=ROOT)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result.pop("unknown_key_rejected") is True
    for path in LF_YAMLS:
        got, shipped = result[path.name], _recipe(path)
        assert got["image_max_pixels"] == GUIR1_TRAIN_MAX_PIXELS
        assert got["image_min_pixels"] == GUIR1_TRAIN_MIN_PIXELS
        assert got["finetuning_type"] == shipped["finetuning_type"]
        assert got["template"] == shipped["template"] and got["gradient_checkpointing"] is True
        assert got["freeze_vision_tower"] is True
        assert got["learning_rate"] == pytest.approx(shipped["learning_rate"])
        # LLaMA-Factory resolved the name to the exported JSONL (dataset_attr.dataset_name is its file name).
        [(file_name, load_from, formatting, images_column)] = got["datasets"]
        assert (load_from, formatting, images_column) == ("file", "sharegpt", "images")
        assert (data_dir / file_name).resolve() == (data_dir / shipped["dataset"] / f"{shipped['dataset']}.jsonl")


def _swift_invocation(tmp_path: Path, script: Path, extra_env: dict[str, str], *args: str) -> tuple[list, dict]:
    """Run ``script`` with a stand-in ``$SWIFT`` that records its argv and pixel env instead of training."""
    record = tmp_path / "argv.json"
    shim = tmp_path / "fake_swift"
    shim.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                    f"json.dump({{'argv': sys.argv[1:], 'env': {{k: os.environ.get(k) for k in "
                    f"('MAX_PIXELS', 'MIN_PIXELS')}}}}, open({str(record)!r}, 'w'))\n")
    shim.chmod(0o755)
    env = {k: v for k, v in OFFLINE_ENV.items() if k not in ("MAX_PIXELS", "MIN_PIXELS")}
    env.update(SWIFT=str(shim), DATASET="data/x.jsonl", **extra_env)
    subprocess.run(["bash", str(script), *args], check=True, env=env, cwd=ROOT)
    rec = json.loads(record.read_text())
    return rec["argv"], rec["env"]


def _flags(argv: list[str]) -> dict[str, str]:
    assert argv[0] == "sft"
    flags, i = {}, 1
    while i < len(argv):
        assert argv[i].startswith("--"), argv[i]
        flags[argv[i][2:]] = argv[i + 1]  # later occurrences win, as in argparse
        i += 2
    return flags


@pytest.mark.parametrize("kind", ["lora", "full"])
def test_swift_scripts_pass_known_flags_and_export_pixels(tmp_path, kind):
    pytest.importorskip("swift")
    import dataclasses

    from swift.arguments import SftArguments

    known = {f.name for f in dataclasses.fields(SftArguments)}
    argv, env = _swift_invocation(tmp_path, SWIFT_SCRIPTS[kind], {}, "--num_train_epochs", "1")
    flags = _flags(argv)
    assert set(flags) <= known, set(flags) - known
    assert env == {"MAX_PIXELS": str(GUIR1_TRAIN_MAX_PIXELS), "MIN_PIXELS": str(GUIR1_TRAIN_MIN_PIXELS)}
    assert flags["dataset"] == "data/x.jsonl" and flags["template"] == "qwen2_5_vl"
    assert flags["tuner_type"] == kind and flags["torch_dtype"] == "bfloat16"
    assert flags["gradient_checkpointing"] == "true" and flags["per_device_train_batch_size"] == "1"
    assert flags["num_train_epochs"] == "1"  # arguments after the script name override the defaults
    if kind == "lora":
        assert (flags["lora_rank"], flags["lora_alpha"], flags["learning_rate"]) == ("8", "16", "1e-4")
    else:
        assert flags["learning_rate"] == "1e-5"
        ds = ROOT / flags["deepspeed"]
        assert ds.is_file() and json.loads(ds.read_text())["zero_optimization"]["stage"] == 3


def test_swift_script_requires_dataset(tmp_path):
    env = {k: v for k, v in OFFLINE_ENV.items() if k != "DATASET"}
    proc = subprocess.run(["bash", str(SWIFT_SCRIPTS["lora"])], env={**env, "SWIFT": "false"}, cwd=ROOT, check=False,
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "DATASET" in proc.stderr


def _make_dry_run(*args: str) -> str:
    # -o: treat the env markers as up to date, so only the target's own command is printed.
    proc = subprocess.run(["make", "-n", "-o", ".venvs/llamafactory/.ready", "-o", ".venvs/rl/.ready", *args],
                          cwd=ROOT, check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_make_sft_llamafactory_calls_llamafactory_env():
    out = _make_dry_run("sft-llamafactory", "MODEL=Qwen/Qwen2.5-VL-7B-Instruct", "DATASET=gui-r1-3k", "HAS_CUDA=1")
    # The 7B model gets the 7B LoRA YAML and a run named after it.
    assert f"cd LLaMA-Factory && TENSORBOARD_LOGGING_DIR={ROOT}/runs/qwen2_5_vl_7b_gui_lora_sft" in out
    assert (f"{ROOT}/.venvs/llamafactory/bin/llamafactory-cli train {LF_EXAMPLES}/train_lora/"
            "qwen2_5_vl_7b_gui_lora_sft.yaml") in out
    assert "model_name_or_path=Qwen/Qwen2.5-VL-7B-Instruct" in out and "dataset=gui-r1-3k" in out
    assert "template=qwen2_vl" in out and f"dataset_dir={ROOT}/LLaMA-Factory/data" in out
    assert "report_to=none" in out and "bf16=false" not in out
    out = _make_dry_run("sft-llamafactory", "MODEL=Qwen/Qwen3-VL-4B-Instruct", "HAS_CUDA=", "LOGGER=tensorboard")
    assert "template=qwen3_vl_nothink" in out and "report_to=tensorboard" in out
    # No CUDA: CPU-safe settings, said in one line.
    assert "bf16=false deepspeed=null dataloader_num_workers=0 preprocessing_num_workers=1" in out
    assert "no CUDA GPU found: CPU-safe settings" in out


def test_make_sft_swift_calls_rl_env():
    out = _make_dry_run("sft-swift", "MODEL=Qwen/Qwen2.5-VL-3B-Instruct", "SWIFT_DATA=d.jsonl", "SWIFT_TUNER=full",
                        "HAS_CUDA=1")
    assert "SWIFT=.venvs/rl/bin/swift bash ms-swift/examples/sft_full.sh --use_hf true" in out
    assert "MODEL=Qwen/Qwen2.5-VL-3B-Instruct" in out and "DATASET=d.jsonl" in out and "DEEPSPEED=" not in out
    out = _make_dry_run("sft-swift", "SWIFT_DATA=d.jsonl", "SWIFT_TUNER=full", "HAS_CUDA=")
    assert "DEEPSPEED= MODEL=" in out and "--torch_dtype float32 --bf16 false --dataloader_num_workers 0" in out
    assert "DATASET=Data/swift/gui-r1-3k.jsonl" in _make_dry_run("sft-swift")


def test_swift_full_script_without_deepspeed_when_empty(tmp_path):
    argv, _ = _swift_invocation(tmp_path, SWIFT_SCRIPTS["full"], {"DEEPSPEED": ""})
    assert "--deepspeed" not in argv
    argv, _ = _swift_invocation(tmp_path, SWIFT_SCRIPTS["full"], {})
    assert argv[argv.index("--deepspeed") + 1] == "configs/deepspeed/ds_z3_config.json"


@needs_lf_env
@pytest.mark.slow
@pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared data folder {SHARED} is absent")
def test_seed_command_trains_from_inside_the_llamafactory_folder(tmp_path):
    """`cd LLaMA-Factory && llamafactory-cli train examples/train_lora/qwen2_5_vl_3b_gui_lora_sft.yaml`, as the seed
    README writes it, on a copy of the folder layout (the YAML as shipped, the export in LLaMA-Factory/data) with the
    tiny model and CPU overrides: the YAML's relative dataset_dir / output_dir resolve from inside that folder."""
    import shutil

    from core.data.cli import run_convert
    from core.testing import tiny_qwen25vl_path

    lf = tmp_path / "LLaMA-Factory"
    shutil.copytree(LF_EXAMPLES, lf / "examples")
    written, summary = run_convert("aitw", "llamafactory", SHARED / "aitz", lf / "data" / "gui-r1-3k", name="gui-r1-3k",
                                   max_pixels=GUIR1_TRAIN_MAX_PIXELS, min_pixels=GUIR1_TRAIN_MIN_PIXELS)
    assert summary.written == 4 and (lf / "data" / "dataset_info.json").is_file()
    cpu = ["bf16=false", "max_steps=1", "save_steps=1", "dataloader_num_workers=0", "preprocessing_num_workers=1",
           f"model_name_or_path={tiny_qwen25vl_path()}", "image_max_pixels=200704", "cutoff_len=1024", "report_to=none"]
    proc = subprocess.run([str(LF_PYTHON.parent / "llamafactory-cli"), "train",
                           "examples/train_lora/qwen2_5_vl_3b_gui_lora_sft.yaml", *cpu], cwd=lf, env=OFFLINE_ENV,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    out = tmp_path / "saves" / "qwen2_5_vl-3b" / "lora" / "gui-sft"  # ../saves/... from inside LLaMA-Factory/
    assert (out / "adapter_config.json").is_file()
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["global_step"] == 1
