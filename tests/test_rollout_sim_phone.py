"""``gui-agent rollout`` on the simulated phone (core.world): the scripted policy writes the gold actions as model
text in each answer format and completes the held-out tasks through parser + frames + env; a uniformly random
policy completes almost none; the tiny model runs whole episodes through the HF backend."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from core.rollout.envs import get_env
from core.rollout.policies import RandomPolicy, ScriptedPolicy
from core.rollout.runner import episode_specs, run_rollouts
from core.rollout.session import EpisodeSession

SIM = get_env("sim-phone")
FORMATS = {"guir1-high": "<answer>", "qwen3vl-mobile-use": "<tool_call>"}


def held_out_sample() -> list:
    """Every 15th held-out task: every family of both held-out splits (by layout seed and by family); the slow
    test runs them all."""
    return SIM.tasks("test")[::15]


def invoke(*args: str):
    from core.cli import app

    return CliRunner(env={"COLUMNS": "400"}).invoke(app, ["rollout", "--env", "sim-phone", *args])


def test_held_out_sample_covers_every_held_out_family_and_both_splits():
    tasks, everything = held_out_sample(), SIM.tasks("test")
    assert {t.family for t in tasks} == {t.family for t in everything}
    assert {t.split for t in tasks} == {"test_seed", "test_family"}


@pytest.mark.parametrize("template", list(FORMATS))
def test_scripted_gold_text_completes_held_out_tasks(template, tmp_path):
    summary = run_rollouts(SIM.make, episode_specs(held_out_sample()), ScriptedPolicy(), tmp_path, progress=False,
                           gallery=0, session_options={"template": template})
    assert summary["success_rate"] >= 0.95, summary["per_family"]
    assert summary["invalid_rate"] == 0.0
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert all(FORMATS[template] in s["model_text"] for r in rows for s in r["steps"])


def test_random_policy_completes_almost_none(tmp_path):
    summary = run_rollouts(SIM.make, episode_specs(held_out_sample()), RandomPolicy(seed=0), tmp_path,
                           progress=False, gallery=0)
    assert summary["success_rate"] <= 0.05
    assert summary["mean_steps"] > 2 and summary["invalid_rate"] == 0.0  # it acts, validly, and achieves nothing


def test_scripted_taps_land_in_the_gold_widget_box_on_every_screen_size():
    sizes = {}
    for task in held_out_sample():
        session = EpisodeSession(SIM.make(), task, template="qwen3vl-mobile-use")
        while not session.done:
            rec = session.act(session.gold_text())
            if rec.action is not None and rec.action.point is not None and rec.gold_box is not None:
                x1, y1, x2, y2 = rec.gold_box
                assert x1 <= rec.action.point[0] <= x2 and y1 <= rec.action.point[1] <= y2
                sizes[session.episode.screen_size] = True
    assert len(sizes) >= 2


@pytest.mark.slow
def test_cli_prints_scripted_and_random_on_the_whole_held_out_split(tmp_path):
    results = {}
    for policy, template in (("scripted", "guir1-high"), ("scripted", "qwen3vl-mobile-use"), ("random", "guir1-high")):
        out = tmp_path / f"{policy}-{template}"
        res = invoke("--policy", policy, "--template", template, "--output", str(out), "--json", str(out / "s.json"),
                     "--gallery", "2")
        assert res.exit_code == 0, res.output
        summary = json.loads((out / "s.json").read_text())
        assert summary["episodes"] == len(SIM.tasks("test")) and summary["tasks"] == "test"
        assert f"{policy} on sim-phone test: success rate" in res.output
        assert (out / "gallery" / "index.html").is_file()
        results[policy, template] = summary["success_rate"]
    assert results["scripted", "guir1-high"] >= 0.95 and results["scripted", "qwen3vl-mobile-use"] >= 0.95
    assert results["random", "guir1-high"] <= 0.05


@pytest.mark.rl_env
@pytest.mark.slow
def test_tiny_model_runs_whole_sim_phone_episodes_through_the_hf_backend(tmp_path):
    pytest.importorskip("transformers")
    from core.testing import tiny_qwen25vl_path

    # the tiny model's processor caps images at 256 merged tokens: 256 * 28 * 28 pixels
    res = invoke("--backend", "hf", "--model", str(tiny_qwen25vl_path()), "--device", "cpu", "--episodes", "2",
                 "--max-steps", "2", "--workers", "2", "--max-new-tokens", "24", "--max-pixels", str(256 * 28 * 28),
                 "--output", str(tmp_path), "--gallery", "1")
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["error"] is None and r["n_steps"] == 2 for r in rows)
    assert all(isinstance(s["model_text"], str) for r in rows for s in r["steps"])
    assert sorted(p.name for p in (tmp_path / "gallery" / rows[0]["id"]).iterdir()) == ["000.png", "001.png"]


def test_resized_screenshots_are_cached_by_frame_key_with_the_pixels_of_a_fresh_resize():
    """Every screen of a group of replayed episodes: the frame key names exactly one frame, the session's model image
    is Pillow's bicubic resize of the screen to the bit, served from the cache on a revisit, and drawing on what a
    caller got never changes the cache."""
    import numpy as np
    from PIL import Image, ImageDraw

    from core.rollout.session import MODEL_IMAGES

    MODEL_IMAGES.clear()
    frames, served = {}, []
    for task in held_out_sample()[:6] * 2:  # every episode twice: the second pass revisits every screen
        session = EpisodeSession(SIM.make(), task)
        while not session.done:
            key, obs = session.info["frame_key"], session.obs
            assert key is not None and np.array_equal(frames.setdefault(key, obs.copy()), obs)
            size = (session.geometry.resized_width, session.geometry.resized_height)
            hits = MODEL_IMAGES.get((key, size)) is not None
            (image,) = session.images()
            fresh = Image.fromarray(obs).resize(size, Image.Resampling.BICUBIC)
            assert image.size == size and np.array_equal(np.asarray(image), np.asarray(fresh))
            served.append(hits)
            ImageDraw.Draw(image).rectangle((0, 0, 50, 50), fill=(255, 0, 255))  # the caller's copy only
            session.act(session.gold_text())
    half = len(served) // 2
    assert not any(served[:half]) and all(served[half:])  # first pass resizes, second pass only reads the cache
    assert len(frames) == len(set(frames)) > 6
