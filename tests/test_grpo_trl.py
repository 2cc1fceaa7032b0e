"""VLM-R1 / trl GRPO recipe (``VLM-R1/grpo.py``) on real screenshots from ``../shared/data``.

The AitZ episode (home, scroll, click, complete) and the ScreenSpot web rows are exported with
``core.data.export`` (``--to vlmr1``, images resized to the tiny model's 200,704-pixel bound), then:

* the script's reward plumbing gives the gold answers full format and accuracy marks, and other rows' answers or
  prose fewer, so the ground truth reaching ``core.rewards`` is each row's own;
* the presets (``recipes/qwen2_5_vl_3b/grpo/config_*_trl.yaml``) parse into ``GRPOConfig`` with GUI-R1's / VLM-R1's
  values and batch arithmetic for the GPU count they state; flags win over a recipe;
* ``make grpo-trl`` with the GUI-R1 preset trains the tiny random Qwen2.5-VL for 2 GRPO steps on CPU (picking the
  CPU-safe settings itself): trl logged both reward parts and the KL at every step, ``LOGGER=tensorboard`` wrote
  event files with those scalars under the run name, and the model and its processor load back.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.data.export import EXPORTERS, ExportOptions
from core.data.ingest import READERS
from core.data.summary import ConversionSummary

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
SCRIPT = REPO / "VLM-R1" / "grpo.py"
TINY_MAX_PIXELS = 200_704
REWARDS = ["r1gui_format", "r1gui_accuracy"]

pytestmark = [pytest.mark.rl_env,
              pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data folder {DATA} is absent")]


@pytest.fixture(scope="module")
def grpo():
    """``VLM-R1/grpo.py`` as a module (VLM-R1/ is not a package)."""
    pytest.importorskip("trl")
    spec = importlib.util.spec_from_file_location("vlmr1_grpo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve the script's annotations through sys.modules
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    """The vlmr1 export of the AitZ episode + ScreenSpot web rows; returns the ``.hf`` folder."""
    pytest.importorskip("datasets")
    steps = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    steps += READERS["screenspot"](DATA / "screenspot" / "screenspot_v1_annotations.jsonl",
                                   images_dir=DATA / "screenspot" / "images", skip_missing=True,
                                   summary=ConversionSummary())
    summary = ConversionSummary()
    out = tmp_path_factory.mktemp("vlmr1")
    EXPORTERS["vlmr1"](iter(steps), out, options=ExportOptions(name="gui", max_pixels=TINY_MAX_PIXELS),
                       summary=summary)
    assert summary.written == len(steps) == 8 and summary.n_skipped == 0
    return out / "gui.hf"


def _score(funcs, ds, completions) -> dict[str, list[float]]:
    """Call the reward functions the way trl's GRPOTrainer does: every non-prompt column as a keyword list."""
    columns = {c: ds[c] for c in ds.column_names if c not in ("prompt", "image")}
    return {f.__name__: f(prompts=ds["prompt"], completions=completions, **columns) for f in funcs}


def test_reward_plumbing_scores_each_rows_own_ground_truth(grpo, export):
    ds = grpo.load_split(str(export), "--dataset")
    funcs = grpo.load_reward_funcs(REWARDS)
    gold = [[{"role": "assistant", "content": s}] for s in ds["solution"]]
    assert _score(funcs, ds, gold) == {"r1gui_format": [1.0] * len(ds), "r1gui_accuracy": [1.0] * len(ds)}

    shifted = _score(funcs, ds, [[{"role": "assistant", "content": s}] for s in ds["solution"][1:] + ds["solution"][:1]])
    assert shifted["r1gui_format"] == [1.0] * len(ds)
    assert sum(shifted["r1gui_accuracy"]) < len(ds) - 2  # the episode's actions differ step to step
    prose = _score(funcs, ds, ["I would click the clock app."] * len(ds))
    assert prose == {"r1gui_format": [0.0] * len(ds), "r1gui_accuracy": [0.0] * len(ds)}


TOKEN_REWARD = f"{REPO / 'tests' / 'grpo_token_rewards.py'}:even_token_share"
MEAN_ID_REWARD = f"{REPO / 'tests' / 'grpo_token_rewards.py'}:mean_token_id"


def test_reward_shuffle_permutes_each_batchs_real_values_among_its_completions(grpo, export, tmp_path):
    """``--reward_shuffle true``: the same values per batch (multiset kept), assigned to other completions; every
    reward function of a batch gets the same permutation; each batch a new one; the same seed, the same run."""
    ds = grpo.load_split(str(export), "--dataset")
    argv = ["--model_name_or_path", "m", "--dataset", str(export), "--output_dir", str(tmp_path), "--seed", "3",
            "--reward_funcs", *REWARDS, TOKEN_REWARD]
    script, config = grpo.parse([*argv, "--reward_shuffle", "true"])
    assert script.reward_shuffle and config.seed == 3
    completions = [[{"role": "assistant", "content": s}] for s in ds["solution"][:4] + ["I click."] * 4]
    ids = [[0] * i + [1] * (len(ds) - i) for i in range(len(ds))]  # even-token shares 0, 1/8, ..., 7/8: all distinct
    columns = {c: ds[c] for c in ds.column_names if c not in ("prompt", "image")}

    def batch(funcs) -> list[list[float]]:
        return [f(prompts=ds["prompt"], completions=completions, completion_ids=ids, **columns) for f in funcs]

    real = batch(grpo.load_reward_funcs(script.reward_funcs))
    shuffled_funcs = grpo.reward_functions(script, config.seed)
    assert [f.__name__ for f in shuffled_funcs] == [*REWARDS, "even_token_share"]  # trl logs the same names
    first, second = batch(shuffled_funcs), batch(shuffled_funcs)
    for got in (first, second):
        assert [sorted(v) for v in got] == [sorted(v) for v in real]  # the same values
        assert got[2] != real[2]  # ... on other completions
        order = [real[2].index(v) for v in got[2]]  # the permutation, read off the distinct token shares
        assert [[values[i] for i in order] for values in real] == got  # one permutation for every function
    assert first[2] != second[2]  # a new permutation per batch
    assert batch(grpo.reward_functions(script, config.seed)) == first  # seeded: repeatable
    unshuffled, _ = grpo.parse(argv)
    assert batch(grpo.reward_functions(unshuffled, 3)) == real


def test_bad_inputs_are_named(grpo, export, tmp_path):
    import datasets

    with pytest.raises(SystemExit, match="nope.*known"):
        grpo.load_reward_funcs(["r1gui_format", "nope"])
    with pytest.raises(SystemExit, match="no file"):
        grpo.load_reward_funcs([str(tmp_path / "missing.py:f")])
    with pytest.raises(SystemExit, match="has no function 'nope'"):
        grpo.load_reward_funcs([TOKEN_REWARD.replace("even_token_share", "nope")])
    with pytest.raises(SystemExit, match="not a saved dataset"):
        grpo.load_split(str(tmp_path / "missing.hf"), "--dataset")
    datasets.Dataset.from_dict({"prompt": [[{"role": "user", "content": "x"}]]}).save_to_disk(str(tmp_path / "p.hf"))
    with pytest.raises(SystemExit, match=r"--dataset .*p\.hf: missing column\(s\) \['image', 'ground_truth', 'extra_info'\]"):
        grpo.load_split(str(tmp_path / "p.hf"), "--dataset")



@pytest.mark.parametrize("recipe, env_options, message", [
    ("bogus_key: 3\n", "", "error: --config: unknown key(s) bogus_key"),
    ("learning_rate: abc\n", "", "error: argument --learning_rate/--learning-rate: invalid float value: 'abc'"),
    ("num_generations: 3\nper_device_train_batch_size: 2\n", "",
     "error: generation_batch_size (2) must be divisible by num_generations (3)"),
    ("learning_rate: 1.0e-6\n", '{"fromat_weight": 0.1}',
     "error: $GUI_REWARD_OPTIONS: reward 'r1gui_format': option 'fromat_weight': unknown option"),
], ids=["unknown key", "bad value", "config check", "option typo"])
def test_recipe_errors_are_one_line_naming_the_key_exit_2(grpo, tmp_path, monkeypatch, capsys, recipe, env_options,
                                                          message):
    """The script's ``run`` (what ``python grpo.py`` calls) in this process: the checks run before any model or data
    (``test_the_script_itself_prints_one_error_line_exit_2`` starts the script once, as a user does)."""
    config = tmp_path / "recipe.yaml"
    config.write_text(recipe)
    monkeypatch.setenv("GUI_REWARD_OPTIONS", env_options)
    code = grpo.run(["--config", str(config), "--model_name_or_path", "x", "--dataset", str(tmp_path / "none.hf"),
                     "--output_dir", str(tmp_path / "out")])
    stderr = capsys.readouterr().err
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert code == 2 and len(errors) == 1 and errors[0].startswith(message), stderr[-2000:]
    assert "usage:" not in stderr  # (a traceback would have failed the test: run() only turns ScriptError into a line)


def test_the_script_itself_prints_one_error_line_exit_2(tmp_path):
    """``python VLM-R1/grpo.py`` as typed (torch + trl imports, about 20 s): a bad recipe value and a reward file
    that does not import are each one ``error:`` line on stderr, exit status 2, no traceback."""
    pytest.importorskip("trl")
    config = tmp_path / "recipe.yaml"
    config.write_text("learning_rate: abc\n")
    (tmp_path / "my_reward.py").write_text("raise RuntimeError('no GPU here')\n")
    env = {"PATH": os.environ["PATH"], "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    for args, message in ((["--config", str(config)], "error: argument --learning_rate/--learning-rate: invalid float"),
                          (["--reward_funcs", f"{tmp_path / 'my_reward.py'}:f"], "raised RuntimeError: no GPU here")):
        proc = subprocess.run([sys.executable, str(SCRIPT), *args, "--model_name_or_path", "x", "--dataset",
                               str(tmp_path / "none.hf"), "--output_dir", str(tmp_path / "out")],
                              capture_output=True, text=True, env=env)
        errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
        assert proc.returncode == 2 and len(errors) == 1 and message in errors[0], proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr and "usage:" not in proc.stderr


RECIPES = REPO / "recipes" / "qwen2_5_vl_3b" / "grpo"
TB_SCALARS = ["train/reward", "train/reward_std", "train/rewards/r1gui_format/mean", "train/rewards/r1gui_accuracy/mean",
              "train/kl", "train/loss", "train/completions/mean_length", "train/learning_rate"]


def _without_deepspeed(path: Path, tmp_path: Path) -> tuple[Path, dict]:
    """The recipe minus its ``deepspeed`` key (deepspeed is a GPU extra, absent here) and that key's value."""
    import yaml

    recipe = yaml.safe_load(path.read_text())
    ds = recipe.pop("deepspeed", None)
    out = tmp_path / path.name
    out.write_text(yaml.safe_dump(recipe))
    return out, ds


def no_reward_options(monkeypatch):
    """Unset GUI_REWARD_OPTIONS for this test and undo what the recipe's ``env:`` block writes into os.environ.

    ``monkeypatch.delenv`` of an unset variable records nothing, so it would not remove the value the recipe sets.
    """
    monkeypatch.setenv("GUI_REWARD_OPTIONS", "")
    monkeypatch.delenv("GUI_REWARD_OPTIONS")


@pytest.mark.parametrize("name, gpus", [("config_guir1_trl", 8), ("config_guir1_trl_1gpu", 1), ("config_vlmr1_trl", 8)])
def test_trl_presets_parse_into_grpo_config_with_their_sources(grpo, tmp_path, monkeypatch, name, gpus):
    """Each preset is a trl --config file GRPOConfig accepts; GUI-R1's batch sizes hold for the GPU count it states;
    the DeepSpeed config it names exists (ZeRO-3; CPU offload for the one-GPU preset)."""
    no_reward_options(monkeypatch)
    path = RECIPES / f"{name}.yaml"
    assert all("#" in line for line in path.read_text().splitlines() if line and not line.startswith(("#", "env:")))
    assert f"{gpus} x 80 GB" in path.read_text() or (gpus == 1 and "1 x 80 GB GPU" in path.read_text())
    parsed, ds = _without_deepspeed(path, tmp_path)
    script, config = grpo.parse(["--config", str(parsed), "--output_dir", str(tmp_path / "out")])
    assert script.model_name_or_path == "Qwen/Qwen2.5-VL-3B-Instruct" and script.dataset == "Data/vlmr1/gui-r1-3k.hf"
    grpo.load_reward_funcs(script.reward_funcs)  # every named reward exists
    if "guir1" in name:
        assert (config.num_generations, config.beta, config.max_completion_length) == (5, 0.01, 1024)
        assert (config.temperature, config.learning_rate, config.weight_decay) == (1.0, 1e-6, 0.01)
        assert (script.min_pixels, script.max_pixels) == (262144, 1258291)
        assert config.reward_weights == [0.2, 0.8] and json.loads(os.environ["GUI_REWARD_OPTIONS"]) == {"mode": "guir1"}
        per_update = gpus * config.per_device_train_batch_size * config.gradient_accumulation_steps
        assert per_update == 128 * 5  # GUI-R1: global batch 128 prompts x n 5
        rollout = gpus * config.per_device_train_batch_size * config.steps_per_generation
        # GUI-R1 rolls out 512 prompts x n 5 per 4 updates; one GPU generates one group per micro-step (on-policy).
        assert rollout == (512 * 5 if gpus == 8 else config.num_generations)
    else:  # VLM-R1 run_grpo_rec.sh
        assert (config.num_generations, config.beta, config.max_completion_length) == (8, 0.04, 2048)
        assert (config.per_device_train_batch_size, config.gradient_accumulation_steps) == (8, 2)
    if gpus == 1:
        assert ds == "configs/deepspeed/ds_z3_offload_config.json"
    if ds:
        zero = json.loads((REPO / ds).read_text())["zero_optimization"]
        assert zero["stage"] == 3
        if gpus == 1:
            assert zero["offload_param"]["device"] == zero["offload_optimizer"]["device"] == "cpu"


def test_flags_win_over_the_recipe(grpo, tmp_path, monkeypatch):
    no_reward_options(monkeypatch)
    script, config = grpo.parse(["--config", str(RECIPES / "config_guir1_trl.yaml"), "--output_dir", str(tmp_path),
                                 "--num_generations", "2", "--max_pixels", "200704", "--use_vllm", "false"])
    assert config.num_generations == 2 and script.max_pixels == 200704 and config.beta == 0.01
    assert config.use_vllm is False


@pytest.mark.slow
def test_make_grpo_trl_trains_two_steps_on_cpu_and_logs_tensorboard_scalars(export, tmp_path):
    """The README's CPU smoke command: make picks the CPU-safe settings itself; LOGGER=tensorboard writes event
    files holding the reward parts, KL, loss and completion length under the run name."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from core.testing import max_weight_change, tiny_qwen25vl_path

    out, logs = tmp_path / "grpo", tmp_path / "runs"
    # The random model scores 0 on both r1gui parts, so every advantage would be 0 and nothing could move: a token
    # reward that differs between any two completions gives the update a gradient, and the weights must change.
    smoke = (f"--max_steps 2 --num_generations 2 --per_device_train_batch_size 2 --gradient_accumulation_steps 1 "
             f"--steps_per_generation 1 --max_completion_length 16 --min_pixels 3136 --max_pixels {TINY_MAX_PIXELS} "
             f"--save_steps 2 --num_train_epochs 1 --reward_funcs {' '.join(REWARDS)} {MEAN_ID_REWARD} "
             "--reward_weights 0.2 0.8 1.0")
    cmd = ["make", "-o", ".venvs/rl/.ready", "grpo-trl", f"MODEL={tiny_qwen25vl_path()}",
           f"TRL_RECIPE={RECIPES / 'config_guir1_trl.yaml'}", f"TRL_DATA={export}", f"TRL_OUTPUT={out}",
           "LOGGER=tensorboard", f"LOG_ROOT={logs}", f"ARGS={smoke}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    if "no CUDA GPU found" not in proc.stdout:
        pytest.skip("machine has a CUDA GPU: the CPU-safe path is not taken")
    assert "--bf16 false --use_cpu true --use_vllm false --dataloader_num_workers 0" in proc.stdout

    state = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    steps = [log for log in state["log_history"] if "loss" in log]
    assert [log["step"] for log in steps] == [1, 2]
    for log in steps:
        for name in REWARDS:
            assert 0.0 <= log[f"rewards/{name}/mean"] <= 1.0
        assert math.isfinite(log["kl"]) and log["completions/mean_length"] > 0
    # AdamW moves every weight with a gradient by about the learning rate (1e-6) at step 1; all-zero gradients: ~0
    assert max_weight_change(tiny_qwen25vl_path(), out) > 0.5 * steps[0]["learning_rate"]

    [run_dir] = [p for p in logs.iterdir() if p.is_dir()]
    assert run_dir.name.endswith("_guir1_trl")
    events = EventAccumulator(str(run_dir))
    events.Reload()
    tags = events.Tags()["scalars"]
    missing = [t for t in TB_SCALARS if t not in tags]
    assert not missing, (missing, tags)
    for tag in TB_SCALARS:
        assert [e.step for e in events.Scalars(tag)] == [1, 2], tag
        assert all(math.isfinite(e.value) for e in events.Scalars(tag))

    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(out)
    assert model.config.model_type == "qwen2_5_vl"
    assert AutoProcessor.from_pretrained(out).image_processor.size["longest_edge"] == TINY_MAX_PIXELS


def _run_script(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """``VLM-R1/run_scripts/run_grpo_gui.sh`` with a stand-in ``$PYTHON`` that records its argv."""
    shim = tmp_path / "python"
    shim.write_text(f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(tmp_path / 'argv.json')!r}, 'w'))\n")
    shim.chmod(0o755)
    return subprocess.run(["bash", str(REPO / "VLM-R1" / "run_scripts" / "run_grpo_gui.sh"), "--max_steps", "3"],
                          env={**os.environ, "PYTHON": str(shim), **env}, cwd=tmp_path, capture_output=True,
                          text=True, check=False)


def test_run_grpo_gui_script_launches_grpo_py_with_the_recipe(tmp_path):
    proc = _run_script(tmp_path, NPROC_PER_NODE="8", TUNER="lora", DEEPSPEED="configs/deepspeed/ds_z3_offload_config.json",
                       model_path="/models/qwen", data_paths="a.hf:b.hf")
    assert proc.returncode == 0, proc.stderr
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[:4] == ["-m", "torch.distributed.run", "--nproc_per_node", "8"] and argv[4] == "VLM-R1/grpo.py"
    flags = " ".join(argv[5:])
    assert "--config recipes/qwen2_5_vl_3b/grpo/config_guir1_trl.yaml --model_name_or_path /models/qwen" in flags
    assert "--dataset a.hf:b.hf" in flags and "--lora_r 64 --lora_alpha 128" in flags
    assert "--deepspeed configs/deepspeed/ds_z3_offload_config.json" in flags and flags.endswith("--max_steps 3")

    proc = _run_script(tmp_path, NPROC_PER_NODE="0")
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert proc.returncode == 0 and "no CUDA GPU found" in proc.stdout and argv[0] == "VLM-R1/grpo.py"
    assert "--bf16 false --use_cpu true --use_vllm false --dataloader_num_workers 0 --max_steps 3" in " ".join(argv)

    proc = _run_script(tmp_path, image_folders="/data/images")
    assert proc.returncode == 2 and "image_folders" in proc.stderr
    proc = _run_script(tmp_path, TUNER="qlora")
    assert proc.returncode == 2 and "TUNER must be full or lora" in proc.stderr


@pytest.fixture(scope="module")
def pair_run(export, tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """One GRPO step of ``VLM-R1/grpo.py`` on two prompts of different lengths in one batch (a phone and a web
    screenshot: different image token counts), rewarded by an ``async`` reward loaded by path with
    ``--reward_shuffle true`` and negative samples on (``--nsr_lambda 0.1``, success = GUI-R1's accuracy at weight 0,
    which the random model never earns): the run three tests below read (one start of the script instead of three)."""
    from datasets import load_from_disk

    from core.testing import tiny_qwen25vl_path

    root = tmp_path_factory.mktemp("pair")
    ds = load_from_disk(str(export))
    sizes = [tuple(img.size) for img in ds["image"]]
    pair = [0, next(i for i, s in enumerate(sizes) if s != sizes[0])]
    ds.select(pair).save_to_disk(str(root / "pair.hf"))
    reward = root / "async_reward.py"
    reward.write_text(ASYNC_REWARD)
    cmd = [sys.executable, str(SCRIPT), "--config", str(RECIPES / "config_guir1_trl.yaml"), "--model_name_or_path",
           str(tiny_qwen25vl_path()), "--dataset", str(root / "pair.hf"), "--output_dir", str(root / "out"),
           "--reward_funcs", f"{reward}:length_reward", "r1gui_accuracy", "--reward_weights", "1.0", "0.0",
           "--reward_shuffle", "true", "--nsr_lambda", "0.1", "--success_reward", "r1gui_accuracy",
           "--max_steps", "1", "--num_generations", "2", "--per_device_train_batch_size", "4",
           "--gradient_accumulation_steps", "1", "--steps_per_generation", "1", "--max_completion_length", "8",
           "--min_pixels", "3136", "--max_pixels", str(TINY_MAX_PIXELS), "--bf16", "false", "--use_cpu", "true",
           "--use_vllm", "false", "--gradient_checkpointing", "false", "--save_strategy", "no", "--report_to", "none",
           "--dataloader_num_workers", "0"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    return root, reward, proc


def test_one_batch_of_prompts_with_different_lengths_trains(grpo, export, pair_run):
    """Two prompts of different lengths (a phone and a web screenshot: different image token counts) in one batch:
    the processor must pad on the left like trl does, or generation fails in Qwen2.5-VL's ``get_rope_index``."""
    from datasets import load_from_disk

    from core.testing import tiny_qwen25vl_path

    root, _, proc = pair_run
    images = load_from_disk(str(root / "pair.hf"))["image"]
    assert len(images) == 2 and images[0].size != images[1].size
    script, _ = grpo.parse(["--config", str(RECIPES / "config_guir1_trl.yaml"), "--model_name_or_path",
                            str(tiny_qwen25vl_path()), "--output_dir", str(root / "unused")])
    assert grpo.load_processor(script).tokenizer.padding_side == "left"
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert (root / "out" / "config.json").is_file()


def test_negative_samples_push_down_groups_that_all_failed(pair_run):
    """``--nsr_lambda``: the random model fails GUI-R1's accuracy on every completion, so every group is all-fail
    and the step logs it (trl's own metrics line); the step trains (its loss reads the -lambda advantages)."""
    _, _, proc = pair_run
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    fractions = [float(v) for v in re.findall(r"'nsr/all_fail_frac': '?([0-9.]+)", output)]
    assert fractions == [1.0], output[-4000:]


def test_difficulty_filter_passes_over_prompts_that_always_fail(pair_run, tmp_path):
    """``--difficulty_window 2``: each prompt's group of 2 fails GUI-R1's accuracy (a random model), so it is set aside
    after its first step; by the third step the sampler has passed over set-aside prompts (both prompts set aside:
    after one pass over the data it takes them anyway)."""
    from core.testing import tiny_qwen25vl_path

    root, _, _ = pair_run
    cmd = [sys.executable, str(SCRIPT), "--config", str(RECIPES / "config_guir1_trl.yaml"), "--model_name_or_path",
           str(tiny_qwen25vl_path()), "--dataset", str(root / "pair.hf"), "--output_dir", str(tmp_path / "out"),
           "--reward_funcs", "r1gui_format", "r1gui_accuracy", "--difficulty_window", "2",
           "--difficulty_skip_steps", "2", "--max_steps", "3", "--num_generations", "2",
           "--per_device_train_batch_size", "2", "--gradient_accumulation_steps", "1", "--steps_per_generation", "1",
           "--max_completion_length", "8", "--min_pixels", "3136", "--max_pixels", str(TINY_MAX_PIXELS), "--bf16",
           "false", "--use_cpu", "true", "--use_vllm", "false", "--gradient_checkpointing", "false",
           "--save_strategy", "no", "--report_to", "none", "--dataloader_num_workers", "0"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    aside = [float(v) for v in re.findall(r"'difficulty/tasks_set_aside': '?([0-9.]+)", output)]
    skipped = [float(v) for v in re.findall(r"'difficulty/skipped_prompts': '?([0-9.]+)", output)]
    assert len(aside) == len(skipped) == 3, output[-4000:]
    assert aside[0] >= 1 and skipped[-1] >= 1, (aside, skipped)


def test_rl_method_flags_refuse_bad_values_and_are_off_unless_named(grpo):
    script, _ = grpo.parse(["--model_name_or_path", "m", "--dataset", "d", "--output_dir", "o",
                            "--nsr_lambda", "-0.5"])
    with pytest.raises(grpo.ScriptError, match="--nsr_lambda"):
        grpo.trainer_class(script)
    script, _ = grpo.parse(["--model_name_or_path", "m", "--dataset", "d", "--output_dir", "o",
                            "--difficulty_window", "4", "--difficulty_skip_steps", "0"])
    with pytest.raises(grpo.ScriptError, match="--difficulty_skip_steps"):
        grpo.trainer_class(script)
    script, _ = grpo.parse(["--model_name_or_path", "m", "--dataset", "d", "--output_dir", "o"])
    from trl import GRPOTrainer

    assert grpo.trainer_class(script) is GRPOTrainer  # off unless named


# GRPO correctness: a reward on the sampled token ids differs inside a group from the first step. The tiny random
# model's logits are small (std ~0.1): at temperature 1 it samples almost uniformly over 151,936 tokens, which a few
# steps cannot move; at 0.03 a group of 8 still disagrees and a few AdamW steps at lr 3e-3 concentrate the policy
# on the rewarded tokens. Tuned over seeds 0-2 on CPU (docs/grpo-checks.md).
CHECK_FLAGS = ["--num_generations", "8", "--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "1",
               "--steps_per_generation", "1", "--max_completion_length", "16", "--temperature", "0.03",
               "--learning_rate", "3e-3", "--lr_scheduler_type", "constant", "--warmup_steps", "0", "--beta", "0",
               "--min_pixels", "3136", "--max_pixels", "3136"]
#: Share of the distance from the first step's mean reward to the best possible one (1 rewarded, 0 negated) that
#: the mean over the later steps must have covered.
CHECK_GAIN = 0.5


CHECK_STEPS = 3


@pytest.fixture(scope="module")
def token_reward_runs(export, tmp_path_factory) -> dict[int, list[dict]]:
    """``VLM-R1/grpo.py`` with the even-token reward (sign +1) and the same reward negated (reward weight -1), both
    runs at once (the tiny model is bound by Python, one core each); the log of every step, by sign."""
    from core.testing import tiny_qwen25vl_path

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    root = tmp_path_factory.mktemp("token_reward")
    procs = {}
    for sign in (1, -1):
        cmd = [sys.executable, str(SCRIPT), "--model_name_or_path", str(tiny_qwen25vl_path()), "--dataset",
               str(export), "--output_dir", str(root / str(sign)), "--reward_funcs", TOKEN_REWARD,
               "--reward_weights", str(float(sign)), *CHECK_FLAGS, "--max_steps", str(CHECK_STEPS), "--seed", "0",
               "--bf16", "false", "--use_cpu", "true", "--use_vllm", "false", "--gradient_checkpointing", "false",
               "--save_strategy", "steps", "--save_steps", str(CHECK_STEPS), "--report_to", "none",
               "--dataloader_num_workers", "0"]
        procs[sign] = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True)
    logs = {}
    for sign, proc in procs.items():
        output, _ = proc.communicate()
        assert proc.returncode == 0, output[-4000:]
        state = json.loads((root / str(sign) / f"checkpoint-{CHECK_STEPS}" / "trainer_state.json").read_text())
        logs[sign] = [log for log in state["log_history"] if "loss" in log]
    return logs


@pytest.mark.parametrize("sign", [1, -1], ids=["reward", "negated"])
def test_grpo_moves_the_mean_reward_the_way_the_reward_says(token_reward_runs, sign):
    """Rewarding even token ids raises their share within 3 steps; the same reward negated (reward weight -1)
    lowers it. Guards the sign of the advantages, the completion masks and the reward plumbing of grpo.py."""
    logs = token_reward_runs[sign]
    means = [log["rewards/even_token_share/mean"] for log in logs]
    assert len(means) == CHECK_STEPS and logs[0]["frac_reward_zero_std"] == 0.0  # the first group already disagrees
    best, later = (1.0 if sign > 0 else 0.0), sum(means[1:]) / len(means[1:])
    assert abs(best - later) <= (1 - CHECK_GAIN) * abs(best - means[0]), means


@pytest.mark.parametrize("source, message", [
    ("def f(:\n", "line 1: invalid syntax"),
    ("raise RuntimeError('no GPU here')\n", "raised RuntimeError: no GPU here"),
    ("import sys\nsys.exit(3)\n", "raised SystemExit: 3"),
], ids=["syntax error", "raises", "exits"])
def test_a_reward_file_that_does_not_import_is_one_error_line(grpo, tmp_path, capsys, source, message):
    """Round 4, item 17: the script's promise (one ``error:`` line, exit 2) holds for the reward file's own errors,
    before any model or data loads (its ``run`` in this process; the script itself: the test above)."""
    (tmp_path / "my_reward.py").write_text(source)
    code = grpo.run(["--reward_funcs", f"{tmp_path / 'my_reward.py'}:f", "--model_name_or_path", "x", "--dataset",
                     str(tmp_path / "none.hf"), "--output_dir", str(tmp_path / "out")])
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error:")]
    assert code == 2 and len(errors) == 1, errors
    assert errors[0].startswith(f"error: --reward_funcs {tmp_path / 'my_reward.py'}:f: ") and message in errors[0]


ASYNC_REWARD = '''
import asyncio


async def length_reward(completions, **kwargs):
    await asyncio.sleep(0)
    return [float(len(str(c))) for c in completions]
'''


def test_reward_shuffle_keeps_an_async_reward_async_and_trains(grpo, pair_run, tmp_path):
    """Round 4, item 10: ``--reward_shuffle true`` with an async reward loaded by path: the wrapper is async too
    (trl awaits it), permutes the awaited values, and a GRPO step runs through the command (``pair_run``)."""
    import asyncio
    import inspect

    _, reward, proc = pair_run
    script, _ = grpo.parse(["--model_name_or_path", "x", "--dataset", "d", "--output_dir", str(tmp_path / "o"),
                            "--reward_funcs", f"{reward}:length_reward", "--reward_shuffle", "true"])
    (wrapped,) = grpo.reward_functions(script, seed=0)
    assert inspect.iscoroutinefunction(wrapped) and wrapped.__name__ == "length_reward"
    values = asyncio.run(wrapped(completions=["a", "bb", "ccc", "dddd", "eeeee"]))
    assert sorted(values) == [1.0, 2.0, 3.0, 4.0, 5.0] and values != sorted(values)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
