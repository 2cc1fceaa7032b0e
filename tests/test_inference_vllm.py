"""The vLLM backend up to the engine call: request building with the real tiny model's chat template, sharding
over data-parallel workers and results back in input order, resume, and the step-by-step agent.

The ONLY thing replaced is :func:`core.inference.backends.vllm.create_engine` (the function that imports vLLM):
``fake_engine`` below reads each real prompt/image it is given and answers a click at the centre of the
resized image, with the instruction echoed as input text, so every row can be checked against its own input.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.inference.agent import Episode
from core.inference.backends import GenerationConfig
from core.inference.backends.vllm import VLLMBackend, merge_shards, sampling_args, shard_round_robin
from core.inference.bench import iter_benchmark, write_guir1_benchmark
from core.inference.requests import ResizePolicy
from core.inference.runner import run_inference
from core.prompts import get_template

pytestmark = pytest.mark.rl_env
pytest.importorskip("transformers")

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
VISION = "<|vision_start|><|image_pad|><|vision_end|>"
_COMMAND = re.compile(r"executing the command '([^']{0,200})'")


def fake_engine(engine_args: dict, sampling: dict):
    """Stands in for ``create_engine``: same signature, answers from the real inputs it receives."""
    calls: list[int] = []

    def generate(inputs: list[dict]) -> list[str]:
        calls.append(len(inputs))
        out = []
        for x in inputs:
            assert x["prompt"].count(VISION) == 1 and len(x["multi_modal_data"]["image"]) == 1
            w, h = x["multi_modal_data"]["image"][0].size
            command = _COMMAND.search(x["prompt"]).group(1)
            if "FAIL" in command:
                raise RuntimeError(f"engine rejected {command}")
            out.append(f"<think>ok</think> <answer>[{{'action': 'type', 'point': [{w / 2}, {h / 2}], "
                       f"'input_text': '{command}'}}]</answer>")
        return out

    generate.engine_args, generate.calls = engine_args, calls  # type: ignore[attr-defined]
    return generate


@pytest.fixture(scope="module")
def tiny_model() -> str:
    from core.testing import tiny_qwen25vl_path

    return str(tiny_qwen25vl_path())


@pytest.fixture(scope="module")
def steps(shared_data):
    aitz = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    spot = list(READERS["screenspot"](DATA / "screenspot" / "screenspot_v1_annotations.jsonl",
                                      images_dir=DATA / "screenspot" / "images", skip_missing=True,
                                      summary=ConversionSummary()))
    # distinct instructions so each answer can be traced back to its row
    return [s.model_copy(update={"instruction": f"task {i} {s.instruction[:40]}"})
            for i, s in enumerate(aitz + spot)]


@pytest.fixture()
def bench(steps, tmp_path) -> Path:
    path = tmp_path / "androidcontrol_high_test.parquet"
    write_guir1_benchmark(steps, path)
    return path


def test_sharding_and_merge_keep_input_order():
    shards = shard_round_robin(7, 3)
    assert shards == [[0, 3, 6], [1, 4], [2, 5]]
    results = [[f"r{i}" for i in idx] for idx in shards]
    assert merge_shards(shards, results, 7) == [f"r{i}" for i in range(7)]
    with pytest.raises(RuntimeError, match="returned 1 results for 2"):
        merge_shards(shards, [results[0], results[1][:1], results[2]], 7)
    assert sampling_args(GenerationConfig()) == {"max_tokens": 1024, "temperature": 0.0,
                                                 "repetition_penalty": 1.0, "seed": 0}


def test_engine_inputs_with_the_model_chat_template(tiny_model, steps):
    from core.inference.requests import build_request

    backend = VLLMBackend(tiny_model, engine_factory=fake_engine, tensor_parallel_size=2)
    engine = backend._workers[0]._generate
    assert engine.engine_args["tensor_parallel_size"] == 2
    assert engine.engine_args["limit_mm_per_prompt"] == {"image": 1}
    req = build_request(steps[1], template=None, policy=ResizePolicy())
    (x,) = backend.engine_inputs([req])
    assert x["prompt"].startswith("<|im_start|>system\n") and x["prompt"].endswith("<|im_start|>assistant\n")
    text = get_template("guir1-high").render(steps[1], req.geometry)[0]["content"]
    assert x["prompt"].count(VISION) == 1
    assert text.replace("<image>", VISION) in x["prompt"]  # image exactly where training puts it
    assert x["multi_modal_data"]["image"][0].size == (req.geometry.resized_width, req.geometry.resized_height)
    assert x["mm_processor_kwargs"] == {"min_pixels": 3136, "max_pixels": 1258291}


@pytest.mark.parametrize("dp,batch", [(1, 3), (3, 1), (3, 2)])
def test_data_parallel_rows_come_back_in_input_order(tiny_model, steps, bench, tmp_path, dp, batch):
    backend = VLLMBackend(tiny_model, engine_factory=fake_engine, data_parallel_size=dp, batch_size=batch,
                          use_ray=False)
    out = tmp_path / "pred.json"
    summary = run_inference(iter_benchmark(bench), backend, out, progress=False)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary.written == len(steps) == len(rows) and summary.failed == 0
    assert [r["id"] for r in rows] == [f"androidcontrol_high_test:{s.id}" for s in steps]
    for r, s in zip(rows, steps, strict=False):
        assert r["pred_input_text"] == s.instruction  # each answer belongs to its own row
        assert r["pred_coord"] == pytest.approx([s.image_size[0] / 2, s.image_size[1] / 2])  # ORIGINAL px
        assert r["backend"] == "vllm" and r["resize"]["max_pixels"] == 1258291
    calls = [w._generate.calls for w in backend._workers]
    assert len(calls) == dp and all(max(c) <= batch for c in calls)


def test_engine_failure_only_fails_its_row_and_resume_retries(tiny_model, steps, tmp_path):
    bad = [s.model_copy(update={"instruction": "FAIL " + s.instruction}) if i == 2 else s
           for i, s in enumerate(steps)]
    path = tmp_path / "b.parquet"
    write_guir1_benchmark(bad, path)
    backend = VLLMBackend(tiny_model, engine_factory=fake_engine, batch_size=4)
    out = tmp_path / "pred.json"
    first = run_inference(iter_benchmark(path), backend, out, limit=5, progress=False)
    assert (first.written, first.failed) == (5, 1)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert "engine rejected" in rows[2]["error"] and all(not r["error"] for i, r in enumerate(rows) if i != 2)
    second = run_inference(iter_benchmark(path), backend, out, progress=False)  # resume: only the rest
    assert (second.resumed, second.written) == (5, len(steps) - 5)
    write_guir1_benchmark(steps, path)  # the row is fixed; --retry-failed runs it again
    third = run_inference(iter_benchmark(path), backend, out, retry_failed=True, progress=False)
    assert (third.resumed, third.written, third.failed) == (len(steps) - 1, 1, 0)
    ids = [json.loads(x)["id"] for x in out.read_text().splitlines()]
    assert sorted(ids) == sorted(f"b:{s.id}" for s in steps) and len(ids) == len(set(ids))
    with pytest.raises(ValueError, match="max_pixels 1258291 -> 999999"):
        run_inference(iter_benchmark(path), backend, out, policy=ResizePolicy(max_pixels=999_999), progress=False)


def test_episode_renders_history_as_training_does(tiny_model, steps):
    backend = VLLMBackend(tiny_model, engine_factory=fake_engine)
    episode = Episode(backend, "task 0 open the clock app")
    aitz = [s for s in steps if s.image_size == (270, 600)]
    first = episode.step(aitz[0].image_bytes())
    assert first.action is not None and first.action.type == "type" and len(episode.history) == 1
    second = episode.step(aitz[1].image_bytes())
    prompt = second.request.messages[0]["content"]
    expected = get_template("guir1-high").render(second.request.step, second.request.geometry)[0]["content"]
    assert prompt == expected and "Step 1: Type 'task 0 open the clock app'" in prompt
    assert second.row["history"] == " \nStep 1: Type 'task 0 open the clock app'\n\n"
    # printing a turn or the episode shows the actions, never the screenshot bytes
    for text in (repr(second), repr(episode), str(second)):
        assert "PNG" not in text and "\\x" not in text and len(text) < 2000, text[:300]
    assert repr(second).startswith("AgentTurn(text=") and "action=Action(type=" in repr(second)
    assert "task 0 open the clock app" in repr(episode) and "type='type'" in repr(episode)


@pytest.mark.slow
def test_ray_actors_one_per_worker(tiny_model, steps, bench, tmp_path):
    """Real Ray actors (CPU, num_gpus=0): the fake engine is shipped by value, rows still come back in order."""
    ray = pytest.importorskip("ray")
    import sys

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        backend = VLLMBackend(tiny_model, engine_factory=fake_engine, data_parallel_size=2, batch_size=2,
                              gpus_per_worker=0)
        out = tmp_path / "pred.json"
        run_inference(iter_benchmark(bench), backend, out, progress=False)
        backend.close()
        rows = [json.loads(x) for x in out.read_text().splitlines()]
        assert [r["pred_input_text"] for r in rows] == [s.instruction for s in steps]
    finally:
        ray.shutdown()
