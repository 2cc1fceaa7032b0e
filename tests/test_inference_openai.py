"""The OpenAI-compatible HTTP backend against a REAL server on loopback: ``llamafactory-cli api`` (from
``.venvs/llamafactory``) serving the tiny Qwen2.5-VL on CPU, started by the test and always killed."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from core.data.ingest import READERS
from core.data.summary import ConversionSummary
from core.inference.backends import GenerationConfig
from core.inference.backends.openai import OpenAIBackend
from core.inference.bench import iter_benchmark, write_guir1_benchmark
from core.inference.requests import ResizePolicy, build_request
from core.inference.runner import run_inference

pytest.importorskip("httpx")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
LF_CLI = REPO / ".venvs" / "llamafactory" / "bin" / "llamafactory-cli"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def aitz_steps(shared_data):
    return list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))


@pytest.fixture(scope="module")
def lf_server(tmp_path_factory):
    """``llamafactory-cli api`` bound to 127.0.0.1 on a free port; yields the base URL, then kills it."""
    import httpx

    if not LF_CLI.exists():
        pytest.skip(f"{LF_CLI} is absent (make setup creates .venvs/llamafactory)")
    from core.testing import tiny_qwen25vl_path

    port = _free_port()
    log = tmp_path_factory.mktemp("lf-api") / "server.log"
    env = {**os.environ, "API_HOST": "127.0.0.1", "API_PORT": str(port), "API_VERBOSE": "0",
           "API_MODEL_NAME": "tiny-qwen2.5-vl", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "CUDA_VISIBLE_DEVICES": "", "DISABLE_VERSION_CHECK": "1"}
    cmd = [str(LF_CLI), "api", "--model_name_or_path", str(tiny_qwen25vl_path()), "--template", "qwen2_vl",
           "--infer_backend", "huggingface", "--image_max_pixels", "1258291"]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, cwd=log.parent, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        while True:  # until it answers, or exits (no clock: loading is slower on a busy machine, not wrong)
            if proc.poll() is not None:
                pytest.fail(f"llamafactory-cli api exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if httpx.get(url + "/models", timeout=30).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(1)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.mark.slow
@pytest.mark.llamafactory_env
def test_llamafactory_api_serves_predictions(lf_server, aitz_steps, tmp_path):
    backend = OpenAIBackend(lf_server, gen=GenerationConfig(max_new_tokens=8), batch_size=2)
    assert backend.served_model_name == "tiny-qwen2.5-vl"  # from GET /v1/models
    body = backend.payload(build_request(aitz_steps[0], template=None, policy=ResizePolicy()))
    assert body["messages"][0]["content"][1]["type"] == "image_url" and body["temperature"] == 0.0
    bench = tmp_path / "androidcontrol_high_test.parquet"
    write_guir1_benchmark(aitz_steps, bench)
    out = tmp_path / "androidcontrol_high_test.json"
    summary = run_inference(iter_benchmark(bench), backend, out, limit=3, progress=False)
    assert (summary.written, summary.failed) == (3, 0)
    summary = run_inference(iter_benchmark(bench), backend, out, progress=False)
    assert (summary.resumed, summary.written, summary.failed) == (3, 1, 0)
    backend.close()
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["gt_action"] for r in rows] == ["press_home", "scroll", "click", "complete"]
    for r in rows:
        assert r["error"] is None and isinstance(r["pred"], str)
        assert r["backend"] == "openai" and r["model"] == lf_server


def test_unreachable_server_is_a_row_error(aitz_steps):
    port = _free_port()  # nothing listens there
    backend = OpenAIBackend(f"http://127.0.0.1:{port}", served_model_name="m", retries=1, timeout_s=5)
    assert backend.base_url.endswith("/v1")
    (gen,) = backend.generate([build_request(aitz_steps[0], template=None, policy=ResizePolicy())])
    backend.close()
    assert gen.text is None and "ConnectError" in gen.error
    with pytest.raises(ValueError, match="server URL"):
        OpenAIBackend("/some/model/folder")
