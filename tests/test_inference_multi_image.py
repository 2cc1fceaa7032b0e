"""Prompts with several screenshots (``gui-agent rollout --max-screenshots K``) through every inference backend:
the OpenAI request body, the vLLM engine input and the HF backend's prompt ids carry one image per placeholder,
in order, on real simulated-phone episodes."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image
from typer.testing import CliRunner

from core.inference.backends.openai import OpenAIBackend
from core.rollout.envs import get_env
from core.rollout.session import EpisodeSession

pytestmark = pytest.mark.rl_env

SIM = get_env("sim-phone")
VISION = "<|vision_start|><|image_pad|><|vision_end|>"


@pytest.fixture(scope="module")
def session_after_two_turns() -> EpisodeSession:
    """A held-out sim-phone task two gold turns in, three screenshots in context (the two seen + the current)."""
    for task in SIM.tasks("test"):
        session = EpisodeSession(SIM.make(), task, max_screenshots=3)
        for _ in range(2):
            session.act(session.gold_text())
        if not session.done:
            return session
    raise AssertionError("no held-out task takes more than two gold steps")


def _pixels(im: Image.Image) -> bytes:
    return im.convert("RGB").tobytes()


def test_openai_body_has_one_image_part_per_screenshot_in_order(session_after_two_turns):
    req = session_after_two_turns.request()
    assert len(req.images) == 3 and _pixels(req.images[0]) != _pixels(req.images[2])  # the screen changed
    backend = OpenAIBackend("http://127.0.0.1:9/v1", served_model_name="m", retries=0)  # never contacted
    try:
        body = json.loads(json.dumps(backend.payload(req)))  # what goes on the wire
    finally:
        backend.close()
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    parts = [p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"]
             if p["type"] == "image_url"]
    assert len(parts) == 3
    for part, sent in zip(parts, req.images, strict=True):
        data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
        assert _pixels(Image.open(io.BytesIO(data))) == _pixels(sent)
    req.images = req.images[:2]
    with pytest.raises(ValueError, match="3 <image> placeholders but 2 images"):
        backend.payload(req)


def test_vllm_engine_input_carries_every_screenshot_and_respects_the_limit(session_after_two_turns):
    pytest.importorskip("transformers")
    from core.inference.backends.vllm import VLLMBackend
    from core.testing import tiny_qwen25vl_path

    def engine(engine_args, sampling):
        return lambda inputs: ["<answer>[{'action': 'press_back'}]</answer>"] * len(inputs)

    req = session_after_two_turns.request()
    wide = VLLMBackend(str(tiny_qwen25vl_path()), engine_factory=engine, limit_mm_per_prompt={"image": 3})
    (x,) = wide.engine_inputs([req])
    assert x["prompt"].count(VISION) == 3 and x["multi_modal_data"]["image"] == req.images
    assert wide.generate([req])[0].text is not None
    narrow = VLLMBackend(str(tiny_qwen25vl_path()), engine_factory=engine)  # default: one image per prompt
    (gen,) = narrow.generate([req])
    assert gen.text is None and "3 images, but limit_mm_per_prompt allows 1" in gen.error


@pytest.mark.slow
def test_tiny_model_episode_with_three_screenshots_through_the_hf_backend(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    from transformers import Qwen2_5_VLForConditionalGeneration

    from core.cli import app
    from core.testing import IMAGE_PAD_ID, VISION_START_ID, tiny_qwen25vl_path

    seen: list[list[tuple[int, int]]] = []  # per generate call, per row: (image spans, image pad tokens)
    original = Qwen2_5_VLForConditionalGeneration.generate

    def recording_generate(self, *args, **kwargs):
        ids = kwargs["input_ids"]
        seen.append([(int((row == VISION_START_ID).sum()), int((row == IMAGE_PAD_ID).sum())) for row in ids])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Qwen2_5_VLForConditionalGeneration, "generate", recording_generate)
    max_pixels = 256 * 28 * 28  # the tiny model's processor cap
    res = CliRunner(env={"COLUMNS": "400"}).invoke(app, [
        "rollout", "--env", "sim-phone", "--backend", "hf", "--model", str(tiny_qwen25vl_path()), "--device", "cpu",
        "--episodes", "2", "--workers", "2", "--max-steps", "4", "--max-screenshots", "3", "--max-new-tokens", "16",
        "--max-pixels", str(max_pixels), "--output", str(tmp_path), "--gallery", "0"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["error"] is None and r["n_steps"] == 4 for r in rows)
    # two episodes per batch; the window grows to 3 screenshots and stays there
    assert [[spans for spans, _ in call] for call in seen] == [[1, 1], [2, 2], [3, 3], [3, 3]]
    for call in seen:
        for spans, pads in call:  # every span holds one whole screenshot at the model's resize
            assert pads % spans == 0 and 0 < pads // spans <= max_pixels // (28 * 28)
