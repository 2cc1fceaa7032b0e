"""Reward adapters driven by each trainer's own machinery on CPU: verl's reward manager, trl's
``GRPOTrainer._calculate_rewards``, ms-swift's external-plugin loader and ORM call, EasyR1's convention,
and the ``gui-agent score`` CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.rl_env

GT = json.dumps({"action": "click", "gt_bbox": [10, 20, 30, 40], "input_text": "no input text"})
HIT = "<think>the button</think><answer>[{'action': 'click', 'point': [12, 30], 'input_text': 'no input text'}]</answer>"
MISS = "<think>the button</think><answer>[{'action': 'click', 'point': [90, 90], 'input_text': 'no input text'}]</answer>"
LOOSE = "\n<think>x</think>\n<answer>[{\"action\": \"click\", \"point\": [12.5, 30], \"input_text\": \"\"}]</answer>\n"
CASES = [(HIT, 1.0, 1.0), (MISS, 0.2, 0.2), (LOOSE, 1.0, 0.0)]  # completion, default overall, guir1 overall
# GUI-G2 Gaussian accuracy of each case: box centre (20, 30), sigma 0.5 x 20 = 10 on both axes
GAUSS_ACC = [math.exp(-0.5 * ((12 - 20) / 10) ** 2), math.exp(-0.5 * (7 ** 2 + 6 ** 2)),
             math.exp(-0.5 * ((12.5 - 20) / 10) ** 2)]
GAUSS = [0.8 * a + 0.2 for a in GAUSS_ACC]  # format 1 for all three (default mode)


def _load(path: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from core.testing import build_qwen25vl_tokenizer

    return AutoTokenizer.from_pretrained(build_qwen25vl_tokenizer(tmp_path_factory.mktemp("tok")))


# --------------------------------------------------------------------------------------------- verl


@pytest.mark.parametrize("reward_kwargs, col", [({}, 1), ({"mode": "guir1"}, 2), ({"reward": "gaussian"}, 3)])
def test_verl_reward_manager(tokenizer, reward_kwargs, col):
    torch = pytest.importorskip("torch")
    pytest.importorskip("verl")
    import numpy as np
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import load_reward_manager

    from verl import DataProto

    config = OmegaConf.create({"reward": {
        "custom_reward_function": {"path": str(ROOT / "verl" / "reward_fn.py"), "name": "compute_score",
                                   "reward_kwargs": reward_kwargs},
        "reward_manager": {"source": "register", "name": "naive"},
    }})
    manager = load_reward_manager(config, tokenizer)
    prompt = tokenizer("<|im_start|>user\nclick the button<|im_end|>\n<|im_start|>assistant\n",
                       return_tensors="pt")["input_ids"][0]
    width = 96
    keys = None
    for (completion, *expected), gauss in zip(CASES, GAUSS, strict=True):
        expected.append(gauss)
        ids = tokenizer(completion + "<|im_end|>", return_tensors="pt")["input_ids"][0]
        assert len(ids) <= width
        responses = torch.full((1, width), tokenizer.pad_token_id)
        responses[0, :len(ids)] = ids
        mask = torch.cat([torch.ones(len(prompt)), torch.zeros(width)]).long()[None]
        mask[0, len(prompt):len(prompt) + len(ids)] = 1
        data = DataProto.from_dict(
            tensors={"prompts": prompt[None], "responses": responses, "attention_mask": mask},
            non_tensors={"data_source": np.array(["gui_r1"], dtype=object),
                         "reward_model": np.array([{"ground_truth": GT, "style": "rule"}], dtype=object),
                         "extra_info": np.array([{"frame": "resized", "image_size": np.array([1080, 2400]),
                                                  "resized_size": np.array([532, 1204])}], dtype=object)})
        out = manager.loop.run_until_complete(manager.run_single(data))
        assert out["reward_score"] == pytest.approx(expected[col - 1])
        assert keys is None or set(out["reward_extra_info"]) == keys  # same keys for every sample
        keys = set(out["reward_extra_info"])
    assert {"score", "overall", "format", "accuracy"} <= keys


# --------------------------------------------------------------------------------------------- trl


def _trl_rewards(funcs, inputs, prompts, completions):
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    from accelerate import Accelerator
    from trl import GRPOTrainer

    fake = SimpleNamespace(accelerator=Accelerator(cpu=True), reward_funcs=funcs,
                           reward_processing_classes=[None] * len(funcs),
                           reward_func_names=[f.__name__ for f in funcs], environments=None,
                           state=SimpleNamespace(global_step=0), args=SimpleNamespace(report_to=[]),
                           control=None)
    fake._gather = None
    out = GRPOTrainer._calculate_rewards(fake, inputs, prompts, completions, [[1]] * len(completions))
    assert isinstance(out, torch.Tensor)
    return out


def test_trl_calling_convention_plain_and_conversational():
    rewards = _load(ROOT / "VLM-R1" / "rewards.py", "vlmr1_rewards")
    funcs = [rewards.r1gui, rewards.r1gui_guir1, rewards.r1gui_format, rewards.r1gui_accuracy]
    plain = [c for c, *_ in CASES]
    inputs = [{"prompt": "click", "solution": GT, "image": None} for _ in plain]
    out = _trl_rewards(funcs, inputs, ["click"] * len(plain), plain)
    assert out[:, 0].tolist() == pytest.approx([e for _, e, _ in CASES])
    assert out[:, 1].tolist() == pytest.approx([e for _, _, e in CASES])
    assert out[:, 2].tolist() == [1.0, 1.0, 1.0] and out[:, 3].tolist() == [1.0, 0.0, 1.0]
    conv = [[{"role": "assistant", "content": [{"type": "text", "text": c}]}] for c in plain]
    prompts = [[{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "click"}]}]] * len(plain)
    inputs = [{"prompt": p, "ground_truth": GT} for p in prompts]
    out2 = _trl_rewards(funcs, inputs, prompts, conv)
    assert out2.tolist() == out.tolist()
    gauss = _trl_rewards([rewards.gaussian, rewards.gaussian_accuracy], inputs, prompts, conv)
    assert gauss[:, 0].tolist() == pytest.approx(GAUSS) and gauss[:, 1].tolist() == pytest.approx(GAUSS_ACC)


def test_trl_factory_knobs():
    from core.rewards.adapters import trl_reward_func

    gated = trl_reward_func("r1gui", gate_format=True)
    assert gated(prompts=None, completions=[MISS, HIT], solution=[GT, GT]) == [0.0, 1.0]
    with pytest.raises(KeyError, match="solution"):
        gated(prompts=None, completions=[HIT], image=[None])


# --------------------------------------------------------------------------------------------- ms-swift


def test_ms_swift_external_plugin(monkeypatch):
    pytest.importorskip("swift")
    torch = pytest.importorskip("torch")
    from swift.dataset import RowPreprocessor
    from swift.rewards import orms
    from swift.utils import import_external_file

    import_external_file(str(ROOT / "ms-swift" / "plugin" / "gui_rewards.py"))
    for name in ("r1gui_format", "r1gui_accuracy", "r1gui", "r1gui_guir1", "gaussian", "gaussian_accuracy",
                 "gui_agent", "aitw"):
        assert name in orms
    rows = [{"messages": [{"role": "assistant", "content": c}], "solution": GT} for c, *_ in CASES]
    kwargs = {"trainer_state": None, **RowPreprocessor.rows_to_batched(rows)}
    completions = [c for c, *_ in CASES]
    # the way swift.rl_core.grpo_algorithm.compute_rewards_per_func calls an ORM
    assert orms["r1gui"](args=None)(completions, **kwargs) == pytest.approx([e for _, e, _ in CASES])
    assert orms["r1gui_format"]()(completions, **kwargs) == [1.0, 1.0, 1.0]
    assert orms["gaussian"]()(completions, **kwargs) == pytest.approx(GAUSS)
    monkeypatch.setenv("GUI_REWARD_OPTIONS", '{"alpha": 1.0}')
    assert orms["gaussian_accuracy"]()(completions, **kwargs)[0] == pytest.approx(math.exp(-0.5 * (8 / 20) ** 2))
    monkeypatch.setenv("GUI_REWARD_OPTIONS", '{"mode": "guir1"}')
    assert orms["r1gui"]()(completions, **kwargs) == pytest.approx([e for _, _, e in CASES])
    assert torch.tensor(orms["r1gui_accuracy"]()(completions, **kwargs)).tolist() == [1.0, 0.0, 0.0]
    # a bad option fails when swift builds the reward (the trainer's __init__), not at the first batch
    from core.rewards.registry import RewardOptionError

    monkeypatch.setenv("GUI_REWARD_OPTIONS", '{"format_weight": -1}')
    with pytest.raises(RewardOptionError, match="'format_weight': must be >= 0"):
        orms["r1gui"](args=None)
    monkeypatch.setenv("GUI_REWARD_OPTIONS", '{"mdoe": "guir1"}')
    with pytest.raises(RewardOptionError, match="'mdoe': unknown option"):
        orms["r1gui_format"]()


# --------------------------------------------------------------------------------------------- EasyR1


def test_easyr1_batch_and_sequential():
    mod = _load(ROOT / "verl" / "easyr1_reward.py", "easyr1_reward")
    inputs = [{"response": c, "response_length": len(c), "ground_truth": GT} for c, *_ in CASES]
    scores = mod.compute_score(inputs, format_weight=0.2)
    assert [s["overall"] for s in scores] == pytest.approx([e for _, e, _ in CASES])
    assert len({tuple(s) for s in scores}) == 1
    assert mod.r1gui_guir1(inputs[2])["overall"] == 0.0
    assert mod.compute_score(inputs[1], reward="r1gui", gate_format=True)["overall"] == 0.0
    assert [s["overall"] for s in mod.gaussian(inputs)] == pytest.approx(GAUSS)


# --------------------------------------------------------------------------------------------- CLI


def test_score_cli(tmp_path):
    src = tmp_path / "in.jsonl"
    rows = [{"completion": c, "ground_truth": GT, "extra_info": {"frame": "resized"}} for c, *_ in CASES]
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n"
                   + json.dumps({"completion": HIT, "ground_truth": "{bad"}) + "\n", encoding="utf-8")
    dst = tmp_path / "out" / "scored.jsonl"
    for mode, col in (("default", 1), ("guir1", 2)):
        proc = subprocess.run([sys.executable, "-m", "core", "score", "--reward", "r1gui", "--mode", mode,
                               "--input", str(src), "--output", str(dst), "--overwrite"],
                              check=False, capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        out = [json.loads(line) for line in dst.read_text().splitlines()]
        assert [r["reward/overall"] for r in out[:3]] == pytest.approx([case[col] for case in CASES])
        parts = {"reward/format", "reward/accuracy", "reward/overall", "reward/action_match", "completion"}
        assert all(parts <= set(r) for r in out)
        assert "invalid JSON line" in proc.stdout and "line 4" in proc.stdout
        if mode == "default":  # the corrected mode reports the broken ground truth; guir1 scores it 0
            assert len(out) == 3 and "'ground_truth'" in proc.stdout and "line 5" in proc.stdout
        else:
            assert len(out) == 4 and out[3]["reward/accuracy"] == 0.0


def test_score_cli_gaussian_and_its_alpha(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"completion": c, "ground_truth": GT}) + "\n" for c, *_ in CASES))
    dst = tmp_path / "scored.jsonl"

    def run(*flags: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "core", "score", "--input", str(src), "--output", str(dst),
                               "--overwrite", *flags], check=False, capture_output=True, text=True, cwd=ROOT)

    proc = run("--reward", "gaussian", "--alpha", "1")
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in dst.read_text().splitlines()]
    assert out[0]["reward/accuracy"] == pytest.approx(math.exp(-0.5 * (8 / 20) ** 2))
    before = dst.read_bytes()
    for flags, message in [(("--reward", "gaussian", "--alpha", "0"), "error: --alpha: must be > 0, got 0.0"),
                           (("--reward", "gaussian", "--alpha", "nan"), "error: --alpha: must be a finite number"),
                           (("--reward", "r1gui", "--alpha", "0.5"), "--reward r1gui takes no --alpha")]:
        proc = run(*flags)
        assert proc.returncode == 2 and message in proc.stderr, (flags, proc.stderr)
        assert dst.read_bytes() == before  # nothing already written is lost


# --------------------------------------------------------------------------------------------- finite rewards

HUGE = {"accuracy_weight": 1e308, "format_weight": 1e308}


@pytest.mark.parametrize("reward, options", [("r1gui", HUGE), ("gaussian", HUGE), ("r1gui_guir1", HUGE),
                                             ("gui_agent", {"weights": {"type": 1e308, "format": 1e308}})])
def test_weights_that_overflow_are_refused_before_any_sample(reward, options):
    """Weights of 1e308 each pass the per-option check, but no overall could be finite: the reward refuses them
    when a trainer builds it (verl's compute_score, trl) and on every call, naming the weights; never inf."""
    from core.rewards.adapters import trl_reward_func, verl_compute_score
    from core.rewards.registry import RewardOptionError, score

    with pytest.raises(RewardOptionError, match="add up beyond the float range"):
        verl_compute_score("gui", HIT, GT, {"frame": "resized"}, reward=reward, **options)
    with pytest.raises(RewardOptionError, match="add up beyond the float range"):
        trl_reward_func(reward, **options)
    with pytest.raises(RewardOptionError, match="add up beyond the float range"):
        score(reward, HIT, GT, None, **options)
    big = {k: ({p: 1e307 for p in v} if isinstance(v, dict) else 1e307) for k, v in options.items()}
    assert math.isfinite(score(reward, HIT, GT, {"frame": "resized"}, **big)["overall"])  # large but finite


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_a_reward_part_that_is_not_finite_fails_the_sample_with_its_reason(bad, monkeypatch):
    """Every number a reward returns passes core.numbers: inf or nan is a RewardValueError naming the part, in
    every trainer's call (verl's compute_score here) and in gui-agent score's per-row reasons."""
    from dataclasses import replace

    from core.rewards import registry
    from core.rewards.adapters import verl_compute_score
    from core.rewards.scoring import score_row

    registry.reward_options("r1gui")  # cached from the real reward's signature
    stub = replace(registry.REWARDS["r1gui"], fn=lambda *a, **k: {"format": 1.0, "overall": bad})
    monkeypatch.setitem(registry.REWARDS, "r1gui", stub)
    with pytest.raises(registry.RewardValueError, match="reward 'r1gui': part 'overall' must be a finite number"):
        verl_compute_score("gui", HIT, GT)
    with pytest.raises(ValueError, match="part 'overall' must be a finite number"):
        score_row({"completion": HIT, "ground_truth": GT}, "r1gui", {})


def test_score_cli_refuses_weights_that_overflow(tmp_path):
    """gui-agent score --accuracy-weight 1e308 --format-weight 1e308: one error line, exit 2, nothing written
    (it used to write "reward/overall": Infinity)."""
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"completion": HIT, "ground_truth": GT}) + "\n")
    dst = tmp_path / "scored.jsonl"
    proc = subprocess.run([sys.executable, "-m", "core", "score", "--input", str(src), "--output", str(dst),
                           "--accuracy-weight", "1e308", "--format-weight", "1e308"], check=False,
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "add up beyond the float range" in proc.stderr, proc.stderr
    assert not dst.exists() and "Infinity" not in proc.stdout + proc.stderr
