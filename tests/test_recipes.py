"""Recipe files (``recipes/``): the published values, the backends reading them, and the pixel bounds.

* GUI-R1 on verl: a table of GUI-R1's published EasyR1 values (public copy icey-zhang/GUI-R1 @ 0ec02be,
  ``examples/config.yaml`` + ``examples/qwen2_5_vl_{3b,7b}_gui_grpo.sh``; padding_free from commit 2cbd54b) fails on
  any drift of the recipe files; the recipes compose with verl 0.9.1's hydra config and pass its ``validate_config``.
* ``make grpo-verl`` and the ``experiments/guir1/examples`` scripts run the recipe file (dry run), the logger switch
  adds TensorBoard / W&B.
* Pixel bounds: the export and the trainer read the same bounds from the recipe; the Qwen2.5-VL image processor
  built with them (called as verl calls it) leaves every exported real screenshot at its stored size.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.recipes import RecipeError, load_recipe, main, pixel_bounds, recipe_pixel_bounds

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
VERL_RECIPES = {size: REPO / "recipes" / f"qwen2_5_vl_{size}" / "grpo" / "config_guir1_verl.yaml"
                for size in ("3b", "7b")}

#: GUI-R1's published values (EasyR1 key -> value) mapped onto verl 0.9.1 keys. 3B and 7B differ only in the
#: model and the vLLM tensor parallel size (the 3B script sets 1; the 7B script keeps config.yaml's 2).
GUIR1_PUBLISHED = {
    "data.train_batch_size": 512,                                   # data.rollout_batch_size
    "actor_rollout_ref.actor.ppo_mini_batch_size": 128,             # worker.actor.global_batch_size
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": 4,      # micro_batch_size_per_device_for_update
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": 16,  # ..._for_experience
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": 16,
    "actor_rollout_ref.rollout.n": 5,
    "actor_rollout_ref.rollout.temperature": 1.0,
    "actor_rollout_ref.actor.use_kl_loss": True,
    "actor_rollout_ref.actor.kl_loss_type": "low_var_kl",
    "actor_rollout_ref.actor.kl_loss_coef": 1e-2,
    "algorithm.use_kl_in_reward": False,
    "algorithm.adv_estimator": "grpo",
    "actor_rollout_ref.actor.optim.lr": 1e-6,
    "actor_rollout_ref.actor.optim.weight_decay": 1e-2,
    "actor_rollout_ref.actor.optim.lr_warmup_steps_ratio": 0.0,
    "actor_rollout_ref.actor.optim.clip_grad": 1.0,
    "actor_rollout_ref.actor.freeze_vision_tower": False,
    "data.mm_processor_kwargs.min_pixels": 262144,
    "data.mm_processor_kwargs.max_pixels": 1258291,
    "data.max_prompt_length": 2048,
    "data.max_response_length": 1024,
    "trainer.total_epochs": 15,
    "trainer.test_freq": 5,
    "actor_rollout_ref.rollout.val_kwargs.temperature": 0.5,
    "actor_rollout_ref.rollout.val_kwargs.n": 1,
    "trainer.val_before_train": True,
    "trainer.save_freq": 5,
    "trainer.max_actor_ckpt_to_keep": 3,
    "trainer.n_gpus_per_node": 8,
    "trainer.nnodes": 1,
    "actor_rollout_ref.actor.fsdp_config.param_offload": True,
    "actor_rollout_ref.actor.fsdp_config.optimizer_offload": True,
    "actor_rollout_ref.ref.fsdp_config.param_offload": True,
    "actor_rollout_ref.rollout.enable_chunked_prefill": False,
    "actor_rollout_ref.rollout.gpu_memory_utilization": 0.6,
    "reward.custom_reward_function.reward_kwargs.reward": "r1gui",
    "reward.custom_reward_function.reward_kwargs.mode": "guir1",
    "data.val_batch_size": 256,
    "actor_rollout_ref.model.use_remove_padding": False,           # worker.actor.padding_free=false
    "actor_rollout_ref.model.enable_gradient_checkpointing": True,
    "data.shuffle": True,
    "data.seed": 1,
}
GUIR1_PER_SIZE = {
    "3b": {"actor_rollout_ref.rollout.tensor_model_parallel_size": 1,
           "actor_rollout_ref.model.path": "Qwen/Qwen2.5-VL-3B-Instruct"},
    "7b": {"actor_rollout_ref.rollout.tensor_model_parallel_size": 2,
           "actor_rollout_ref.model.path": "Qwen/Qwen2.5-VL-7B-Instruct"},
}


def _get(tree: dict, dotted: str):
    for part in dotted.split("."):
        assert isinstance(tree, dict) and part in tree, f"missing key {dotted}"
        tree = tree[part]
    return tree


@pytest.mark.parametrize("size", sorted(VERL_RECIPES))
def test_guir1_verl_recipe_holds_the_published_values(size):
    recipe = load_recipe(VERL_RECIPES[size])
    expected = {**GUIR1_PUBLISHED, **GUIR1_PER_SIZE[size]}
    drift = {k: (_get(recipe, k), v) for k, v in expected.items() if _get(recipe, k) != v or
             type(_get(recipe, k)) is not type(v)}
    assert not drift, f"recipe drifted from GUI-R1's published values (recipe, published): {drift}"
    # Every value names its source: each key line carries a comment.
    lines = [ln for ln in VERL_RECIPES[size].read_text().splitlines()
             if ":" in ln and not ln.lstrip().startswith(("#", "-")) and not ln.rstrip().endswith(":")]
    assert [ln for ln in lines if "#" not in ln] == ["    path: verl/reward_fn.py", "    name: compute_score"]


@pytest.mark.rl_env
@pytest.mark.parametrize("size", sorted(VERL_RECIPES))
def test_guir1_verl_recipe_composes_and_passes_verls_validation(size):
    pytest.importorskip("verl")
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf
    from verl.trainer.main_ppo import validate_config
    from verl.trainer.ppo.utils import need_critic, need_reference_policy

    path = VERL_RECIPES[size]
    with initialize_config_dir(config_dir=str(path.parent), version_base=None):
        cfg = compose(config_name=path.stem)
    composed = OmegaConf.to_container(cfg, resolve=False)
    for key, value in {**GUIR1_PUBLISHED, **GUIR1_PER_SIZE[size]}.items():
        assert _get(composed, key) == value, key  # verl's defaults did not shadow a recipe value
    assert need_reference_policy(cfg) and not need_critic(cfg)
    validate_config(config=cfg, use_reference_policy=True, use_critic=False)


def _make_dry_run(*args: str, env: dict | None = None) -> str:
    proc = subprocess.run(["make", "-n", "-o", ".venvs/rl/.ready", *args], cwd=REPO, capture_output=True, text=True,
                          check=False, env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_make_grpo_verl_runs_the_models_recipe_with_the_logger_switch():
    out = _make_dry_run("grpo-verl", "MODEL=Qwen/Qwen2.5-VL-7B-Instruct")
    assert f"--config-path={REPO}/recipes/qwen2_5_vl_7b/grpo/" in out and "--config-name=config_guir1_verl" in out
    assert "'trainer.logger=[console]'" in out and "trainer.experiment_name=qwen2_5_vl_7b_guir1_verl" in out
    check = "-m core.recipes check-reward recipes/qwen2_5_vl_7b/grpo/config_guir1_verl.yaml"
    assert check in out and out.index(check) < out.index("verl/main_ppo.sh")  # reward options before training
    out = _make_dry_run("grpo-verl", "LOGGER=tensorboard")
    assert "recipes/qwen2_5_vl_3b/grpo/" in out and "'trainer.logger=[console,tensorboard]'" in out
    assert "TENSORBOARD_DIR=runs/qwen2_5_vl_3b_guir1_verl" in out
    assert "'trainer.logger=[console,wandb]'" in _make_dry_run("grpo-verl", "LOGGER=wandb")


@pytest.mark.parametrize("script, expected", [
    ("qwen2_5_vl_3b_gui_grpo.sh", ["recipes/qwen2_5_vl_3b/grpo/"]),
    ("baselines/qwen2_5_vl_7b_gui.sh", ["recipes/qwen2_5_vl_7b/grpo/", "trainer.experiment_name=qwen2_5_vl_7b_guir1 ",
                                        "actor_rollout_ref.rollout.tensor_model_parallel_size=1"]),
    ("reward_variants.sh gated-format", ["reward_kwargs={reward:r1gui,mode:guir1,gate_format:true}"]),
    ("reward_variants.sh gaussian", ["reward_kwargs={reward:gaussian,alpha:0.5}",
                                     "trainer.experiment_name=qwen2_5_vl_3b_guir1_reward_gaussian"]),
])
def test_guir1_example_scripts_run_make_grpo_verl(script, expected):
    name, *args = script.split()
    proc = subprocess.run(["bash", str(REPO / "experiments" / "guir1" / "examples" / name), *args, "data.seed=7"],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "MAKEFLAGS": "-n -o .venvs/rl/.ready"}, cwd="/")
    assert proc.returncode == 0, proc.stderr
    for text in [*expected, "data.seed=7"]:
        assert text in proc.stdout, (text, proc.stdout[-1500:])


def test_pixel_bounds_are_read_from_each_recipe_format(tmp_path, capsys):
    assert recipe_pixel_bounds(VERL_RECIPES["3b"]) == (262144, 1258291)
    assert pixel_bounds({"image_min_pixels": 3136, "image_max_pixels": 1258291}) == (3136, 1258291)
    assert pixel_bounds({"min_pixels": 262144, "max_pixels": 1258291}) == (262144, 1258291)
    with pytest.raises(RecipeError, match="r.yaml: min_pixels 9 / max_pixels 3"):
        pixel_bounds({"min_pixels": 9, "max_pixels": 3}, source="r.yaml")
    with pytest.raises(RecipeError, match="no pixel bounds"):
        pixel_bounds({"trainer": {}})
    with pytest.raises(RecipeError, match="not found"):
        load_recipe(tmp_path / "nope.yaml")
    assert main(["export-flags", str(VERL_RECIPES["7b"])]) == 0
    assert capsys.readouterr().out.strip() == "--min-pixels 262144 --max-pixels 1258291"
    assert main([]) == 2


def test_check_reward_rejects_a_verl_recipes_bad_reward_option_before_training(capsys, monkeypatch):
    from core.recipes import check_verl_reward

    recipe = load_recipe(VERL_RECIPES["3b"])
    monkeypatch.delenv("GUI_REWARD_OPTIONS", raising=False)
    assert check_verl_reward(recipe) == "r1gui" and main(["check-reward", str(VERL_RECIPES["3b"])]) == 0
    kwargs = recipe["reward"]["custom_reward_function"]["reward_kwargs"]
    for bad, message in (({"mdoe": "guir1"}, "option 'mdoe': unknown option"),
                         ({"format_weight": float("nan")}, "option 'format_weight': must be a finite number"),
                         ({"reward": "r1gui_typo"}, "reward_kwargs.reward: unknown reward 'r1gui_typo'")):
        broken = {"reward": {"custom_reward_function": {"name": "compute_score", "reward_kwargs": {**kwargs, **bad}}}}
        with pytest.raises(RecipeError, match=f"r.yaml: reward.custom_reward_function.*{message}"):
            check_verl_reward(broken, source="r.yaml")
    monkeypatch.setenv("GUI_REWARD_OPTIONS", '{"accuracy_weight": -1}')
    capsys.readouterr()
    assert main(["check-reward", str(VERL_RECIPES["3b"])]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: ") and "option 'accuracy_weight': must be >= 0, got -1" in line


def _real_steps():
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary

    steps = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))  # 270x600: below min_pixels
    steps += READERS["screenspot"](DATA / "screenspot" / "screenspot_v1_annotations.jsonl",
                                   images_dir=DATA / "screenspot" / "images", skip_missing=True,
                                   summary=ConversionSummary())  # 2560x1440: above max_pixels
    steps += READERS["guiodyssey"](DATA / "guiodyssey", summary=ConversionSummary())
    return steps


@pytest.mark.rl_env
@pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data folder {DATA} is absent")
def test_processor_leaves_images_exported_at_the_recipes_bounds_untouched(tmp_path):
    """Export with the recipe's bounds, then run the Qwen2.5-VL image processor with the same bounds, passed as
    verl passes ``data.mm_processor_kwargs``: the patch grid times 14 is the stored image size, for images that
    were below min_pixels, above max_pixels and in between."""
    pytest.importorskip("transformers")
    import io

    import pyarrow.parquet as pq
    from PIL import Image
    from transformers import AutoProcessor

    from core.data.export import EXPORTERS, ExportOptions
    from core.data.summary import ConversionSummary
    from core.testing import tiny_qwen25vl_path

    low, high = recipe_pixel_bounds(VERL_RECIPES["3b"])
    recipe = load_recipe(VERL_RECIPES["3b"])
    steps = _real_steps()
    sizes = {tuple(s.image_size) for s in steps}
    assert any(w * h < low for w, h in sizes) and any(w * h > high for w, h in sizes)
    path = EXPORTERS["verl"](iter(steps), tmp_path, options=ExportOptions(name="t", min_pixels=low, max_pixels=high),
                             summary=ConversionSummary())
    processor = AutoProcessor.from_pretrained(tiny_qwen25vl_path())  # real patch 14 / merge 2; tiny default bounds
    rows = pq.read_table(path).to_pylist()
    assert len(rows) == len(steps)
    for row in rows:
        image = Image.open(io.BytesIO(row["images"][0]["bytes"]))
        w, h = image.size
        assert low <= w * h <= high and w % 28 == 0 and h % 28 == 0
        grid = processor.image_processor(images=[image], **recipe["data"]["mm_processor_kwargs"])["image_grid_thw"]
        assert grid.tolist() == [[1, h // 14, w // 14]], (row["extra_info"]["index"], image.size)


@pytest.mark.rl_env
@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data folder {DATA} is absent")
def test_guir1_prompt_lengths_on_real_data_against_max_prompt_length(tmp_path):
    """The README's measurement: GUI-R1-style prompts (the verl export: template, history, one image at the recipe's
    bounds, Qwen2.5-VL chat template; the tiny model's tokenizer is the real one, patch 14 / merge 2) of every real
    screenshot in ../shared/data fit in max_prompt_length 2048, but the GUIOdyssey step would
    not with a 1080x2400 phone screenshot at 1.26 MP (its history text is the longest)."""
    pytest.importorskip("transformers")
    import io

    import pyarrow.parquet as pq
    from PIL import Image
    from transformers import AutoProcessor

    from core.data.export import EXPORTERS, ExportOptions
    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary
    from core.geometry import smart_resize
    from core.testing import tiny_qwen25vl_path

    recipe = load_recipe(VERL_RECIPES["3b"])
    low, high = pixel_bounds(recipe)
    limit = recipe["data"]["max_prompt_length"]
    steps = _real_steps() + list(READERS["screenagent"](DATA / "screenagent", summary=ConversionSummary(),
                                                        skip_missing=True))
    path = EXPORTERS["verl"](iter(steps), tmp_path, options=ExportOptions(name="m", min_pixels=low, max_pixels=high),
                             summary=ConversionSummary())
    processor = AutoProcessor.from_pretrained(tiny_qwen25vl_path(), min_pixels=low, max_pixels=high)
    lengths, text_tokens = [], {}
    for row in pq.read_table(path).to_pylist():
        chat = [{"role": m["role"], "content": m["content"].replace("<image>", "<|vision_start|><|image_pad|><|vision_end|>")}
                for m in row["prompt"]]
        text = processor.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        image = Image.open(io.BytesIO(row["images"][0]["bytes"]))
        n = len(processor(text=[text], images=[image])["input_ids"][0])
        lengths.append(n)
        text_tokens[row["data_source"]] = max(text_tokens.get(row["data_source"], 0), n - image.width * image.height // 784)
    print(f"{len(lengths)} prompts, {min(lengths)}..{max(lengths)} tokens, over {limit}: "
          f"{sum(n > limit for n in lengths)}; longest text part by source: {text_tokens}")
    assert len(lengths) == len(steps) >= 40 and max(lengths) <= limit
    h, w = smart_resize(2400, 1080, min_pixels=low, max_pixels=high)
    assert max(text_tokens.values()) + h * w // 784 > limit


@pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data folder {DATA} is absent")
def test_make_data_exports_at_the_recipes_bounds(tmp_path):
    """`make data` passes --recipe; `gui-agent data convert --recipe` reads the bounds from the file (flags win)."""
    import sys

    import pyarrow.parquet as pq

    out = _make_dry_run("data")
    assert "--recipe recipes/qwen2_5_vl_3b/grpo/config_guir1_verl.yaml" in out
    cmd = [sys.executable, "-m", "core", "data", "convert", "--from", "aitw", "--to", "verl", "--input",
           str(DATA / "aitz"), "--recipe", str(VERL_RECIPES["3b"])]
    proc = subprocess.run([*cmd, "--output", str(tmp_path / "a")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    [row] = pq.read_table(tmp_path / "a" / "aitz.parquet").slice(0, 1).to_pylist()
    # 270x600 (162,000 px) is below the recipe's min_pixels 262,144: stored at its smart_resize size 364x784.
    assert tuple(row["extra_info"]["resized_size"]) == (364, 784)
    proc = subprocess.run([*cmd, "--output", str(tmp_path / "b"), "--min-pixels", "3136"], capture_output=True,
                          text=True)
    [row] = pq.read_table(tmp_path / "b" / "aitz.parquet").slice(0, 1).to_pylist()
    assert tuple(row["extra_info"]["resized_size"]) == (280, 588)
    proc = subprocess.run([*cmd[:-1], str(tmp_path / "none.yaml"), "--output", str(tmp_path / "c")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "none.yaml: recipe file not found" in proc.stderr + proc.stdout


def test_make_grpo_verl_dry_run_uses_the_same_arguments():
    """DRY_RUN=1 hands verl/main_ppo.sh (the launcher) exactly the arguments of the real launch; the launcher then
    runs verl/dry_run.py instead of verl's trainer."""
    run = _make_dry_run("grpo-verl", "MODEL=Qwen/Qwen2.5-VL-7B-Instruct")
    dry = _make_dry_run("grpo-verl", "MODEL=Qwen/Qwen2.5-VL-7B-Instruct", "DRY_RUN=1")
    assert "DRY_RUN='' " in run and "DRY_RUN=1 " in dry
    assert "verl/main_ppo.sh --config-path=" in run and "verl/main_ppo.sh --config-path=" in dry
    assert run.split("--config-path=", 1)[1] == dry.split("--config-path=", 1)[1]  # the same recipe and overrides
