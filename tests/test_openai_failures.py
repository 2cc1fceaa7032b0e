"""Issue 12, OpenAI backend: every failure of a real HTTP server on loopback (a scripted ``http.server``) is a
named error, the timeout bounds the whole request, retries back off exponentially with jitter, and
``gui-agent infer`` exits 2 with one line when no server runs or every row failed for one reason, and non-zero
when rows failed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from core.data.ingest import READERS  # noqa: E402
from core.data.summary import ConversionSummary  # noqa: E402
from core.inference.backends.openai import MAX_BACKOFF_S, OpenAIBackend, ServerError  # noqa: E402
from core.inference.bench import write_guir1_benchmark  # noqa: E402
from core.inference.requests import ResizePolicy, build_request  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Script:
    """What the fake server answers: ``models`` (status, body) for GET /v1/models; ``chat`` a list of
    (status, body, trickle_s) consumed one per POST (the last one repeats)."""

    def __init__(self, models=(200, {"data": [{"id": "m"}]}), chat=((200, {"choices": [{"message": {
            "content": "<answer>[]</answer>"}}]}, 0.0),)):
        self.models, self.chat, self.posts = models, list(chat), 0


@pytest.fixture
def server():
    scripts: list[Script] = [Script()]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status, body, trickle_s=0.0):
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            for i in range(len(raw)):
                self.wfile.write(raw[i:i + 1])
                self.wfile.flush()
                if trickle_s:
                    time.sleep(trickle_s)

        def do_GET(self):
            self._send(*scripts[0].models)

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            script = scripts[0]
            script.posts += 1
            self._send(*script.chat[min(script.posts, len(script.chat)) - 1])

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", scripts
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def request_():
    step = next(iter(READERS["aitw"](DATA / "aitz", summary=ConversionSummary())))
    return build_request(step, template=None, policy=ResizePolicy())


def test_closed_port_without_served_model_name_is_one_named_error():
    with pytest.raises(ServerError, match=r"cannot reach http://127.0.0.1:\d+/v1/models .*is the server running"):
        OpenAIBackend(f"http://127.0.0.1:{free_port()}")


@pytest.mark.parametrize("models,needle", [
    ((500, {"detail": "boom"}), "answered HTTP 500"),
    ((200, [{"id": "m"}]), "is not an OpenAI model list"),
    ((200, {"data": []}), "is not an OpenAI model list"),
])
def test_models_endpoint_failures_are_named(server, models, needle):
    url, scripts = server
    scripts[0] = Script(models=models)
    with pytest.raises(ServerError, match=needle):
        OpenAIBackend(url)


@pytest.mark.parametrize("content", [None, ["text", "parts"]])
def test_null_or_list_content_is_the_rows_error(server, request_, content):
    url, scripts = server
    scripts[0] = Script(chat=[(200, {"choices": [{"message": {"content": content}}]}, 0.0)])
    backend = OpenAIBackend(url, retries=0)
    (gen,) = backend.generate([request_])
    backend.close()
    assert gen.text is None and f"content is {type(content).__name__}, not text" in gen.error


def test_timeout_bounds_the_whole_request_against_a_trickling_server(server, request_):
    url, scripts = server
    answer = {"choices": [{"message": {"content": "x" * 200}}]}
    scripts[0] = Script(chat=[(200, answer, 0.05)])  # one byte every 50 ms: ~12 s in all, never idle 1 s
    backend = OpenAIBackend(url, served_model_name="m", timeout_s=1.0, retries=0)
    start = time.monotonic()
    (gen,) = backend.generate([request_])
    elapsed = time.monotonic() - start
    backend.close()
    assert gen.text is None and gen.error.startswith("timeout: no complete answer within 1 s")
    # It gave up while the server was still sending (the sleeps alone take this long, however busy the machine).
    assert elapsed < 0.05 * len(json.dumps(answer)) / 2


def test_retryable_statuses_back_off_then_succeed(server, request_):
    url, scripts = server
    ok = (200, {"choices": [{"message": {"content": "<answer>[]</answer>"}}]}, 0.0)
    scripts[0] = Script(chat=[(503, {"e": 1}, 0.0), (429, {"e": 2}, 0.0), ok])
    backend = OpenAIBackend(url, retries=2, backoff_s=0.01)
    (gen,) = backend.generate([request_])
    assert gen.text == "<answer>[]</answer>" and scripts[0].posts == 3
    scripts[0] = Script(chat=[(503, {"e": 1}, 0.0)])
    (gen,) = backend.generate([request_])
    assert gen.error.startswith("HTTP 503") and gen.error.endswith("(after 3 attempts)") and scripts[0].posts == 3
    scripts[0] = Script(chat=[(400, {"e": "bad request"}, 0.0)])  # not retryable: one attempt
    (gen,) = backend.generate([request_])
    assert gen.error.startswith("HTTP 400") and scripts[0].posts == 1
    backend.close()


def test_backoff_is_exponential_with_full_jitter(server):
    url, _ = server
    backend = OpenAIBackend(url, backoff_s=1.0)
    for attempt in range(8):
        waits = [backend.backoff(attempt) for _ in range(400)]
        cap = min(MAX_BACKOFF_S, 2.0 ** attempt)
        assert all(0 <= w < cap for w in waits)
        assert max(waits) > 0.8 * cap and min(waits) < 0.2 * cap  # spread over the whole range
    backend.close()


def infer_cli(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-m", "core", "infer", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=False)


def test_infer_without_a_server_is_one_line_exit_2_and_failed_rows_exit_non_zero(tmp_path):
    steps = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    bench = tmp_path / "androidcontrol_high_test.parquet"
    write_guir1_benchmark(steps, bench)
    url = f"http://127.0.0.1:{free_port()}"
    out = tmp_path / "pred.jsonl"
    r = infer_cli("--backend", "openai", "--model", url, "--input", bench, "--output", out)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(errors) == 1, r.stderr
    assert "is the server running" in errors[0] and not out.exists()
    r = infer_cli("--backend", "openai", "--model", url, "--served-model-name", "m", "--timeout", 2,
                  "--input", bench, "--output", out)
    # every row failed for the same reason (no server): an error naming it, exit 2, never a 0% result
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(errors) == 1, r.stderr
    assert errors[0].startswith("error: every row failed for one reason") and "ConnectError" in errors[0]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4 and all("ConnectError" in row["error"] for row in rows)


def test_huge_image_and_string_gt_bbox_are_row_errors_not_a_stopped_run(server, tmp_path, png_bomb):
    """The probe's benchmark: a 20000x20000 PNG bomb and a gt_bbox stored as a non-box string between two good
    rows. Every row is written; the bad ones carry their reason; a rerun does not stop at them either."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.inference.bench import iter_benchmark
    from core.inference.runner import run_inference

    shot = (DATA / "aitz" / "GOOGLE_APPS-523638528775825151" / "GOOGLE_APPS-523638528775825151_2.png").read_bytes()
    schema = pa.schema([("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
                        ("instruction", pa.string()), ("history", pa.string()), ("task_type", pa.string()),
                        ("gt_action", pa.string()), ("gt_bbox", pa.string()), ("gt_input_text", pa.string()),
                        ("group", pa.string()), ("ui_type", pa.string()), ("id", pa.int64())])
    cases = [(shot, "[10, 20, 100, 200]"), (png_bomb, "[10, 20, 100, 200]"), (shot, "not a box"),
             (shot, "[30, 40, 60, 80]")]
    rows = [{"image": {"bytes": img, "path": None}, "instruction": "tap it", "history": "None", "task_type": "low",
             "gt_action": "click", "gt_bbox": box, "gt_input_text": "no input text", "group": "mobile",
             "ui_type": "text", "id": i} for i, (img, box) in enumerate(cases)]
    bench = tmp_path / "androidcontrol_low_test.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), bench)
    url, _ = server
    backend = OpenAIBackend(url, retries=0)
    out = tmp_path / "pred.jsonl"
    summary = run_inference(iter_benchmark(bench), backend, out, progress=False)
    assert (summary.written, summary.failed) == (4, 2)
    errors = {r["id"]: r["error"] for r in map(json.loads, out.read_text().splitlines())}
    assert errors == {"androidcontrol_low_test:0": None, "androidcontrol_low_test:1": "image too large",
                      "androidcontrol_low_test:2": "invalid gt_bbox", "androidcontrol_low_test:3": None}
    summary = run_inference(iter_benchmark(bench), backend, out, retry_failed=True, progress=False)
    backend.close()
    assert summary.written == 2 and len(out.read_text().splitlines()) == 4


def test_infer_pixel_limit_is_a_flag(server, tmp_path):
    """``--max-image-pixels`` below the AitZ screenshots' 270 x 600 makes every row 'image too large'."""
    steps = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    bench = tmp_path / "androidcontrol_high_test.parquet"
    write_guir1_benchmark(steps, bench)
    url, _ = server
    r = infer_cli("--backend", "openai", "--model", url, "--input", bench, "--output", tmp_path / "p.jsonl",
                  "--max-image-pixels", 100_000)
    assert r.returncode == 2 and "error: every row failed for one reason, so this is no result: image too large" \
        in r.stderr, r.stderr
    rows = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [row["error"] for row in rows] == ["image too large"] * 4


def test_two_infer_runs_on_one_output_and_lone_surrogates(server, tmp_path):
    """A second writer of a prediction file fails at once (one line, exit 2); model text with a lone surrogate is
    stored losslessly, never stopping the run; eval then scores each id once and refuses duplicates."""
    from core.eval.io import PredictionFileError, iter_records
    from core.inference.bench import iter_benchmark
    from core.inference.runner import run_inference
    from core.io import output_lock

    steps = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    bench = tmp_path / "androidcontrol_high_test.parquet"
    write_guir1_benchmark(steps, bench)
    url, scripts = server
    out = tmp_path / "pred.jsonl"
    with output_lock(out):
        r = infer_cli("--backend", "openai", "--model", url, "--input", bench, "--output", out)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1 and "being written by another run" in errors[0], r.stderr
    assert not out.exists()
    scripts[0] = Script(chat=[(200, {"choices": [{"message": {"content": "<answer>\ud800</answer>"}}]}, 0.0)])
    backend = OpenAIBackend(url, retries=0)
    summary = run_inference(iter_benchmark(bench), backend, out, progress=False)
    backend.close()
    assert (summary.written, summary.failed) == (4, 0)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["pred"] for row in rows] == ["<answer>\ud800</answer>"] * 4  # read back exactly
    assert len(list(iter_records(out))) == 4
    out.write_text(out.read_text() + out.read_text().splitlines()[0] + "\n")  # a second run appended a row
    with pytest.raises(PredictionFileError, match=r"pred.jsonl:5: field 'id': duplicate id .* \(first at .*:1\)"):
        list(iter_records(out))


def test_infer_resume_refuses_changed_options_and_overwrite_starts_over(server, tmp_path):
    from core.inference.bench import iter_benchmark
    from core.inference.runner import run_inference

    steps = list(READERS["aitw"](DATA / "aitz", summary=ConversionSummary()))
    bench = tmp_path / "androidcontrol_high_test.parquet"
    write_guir1_benchmark(steps, bench)
    url, _ = server
    out = tmp_path / "pred.jsonl"
    backend = OpenAIBackend(url, retries=0)
    run_inference(iter_benchmark(bench), backend, out, limit=2, progress=False)  # "killed" after 2 rows
    with pytest.raises(ValueError) as e:
        run_inference(iter_benchmark(bench), backend, out, template="guir1-inference", progress=False,
                      policy=ResizePolicy(max_pixels=200_704))
    backend.close()
    assert "resize.max_pixels 1258291 -> 200704" in str(e.value) and "template 'train' -> 'guir1-inference'" in \
        str(e.value) and "--overwrite to start over" in str(e.value)
    assert len(out.read_text().splitlines()) == 2  # nothing appended
    r = infer_cli("--backend", "openai", "--model", url, "--input", bench, "--output", out, "--max-pixels", 200_704,
                  "--overwrite")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4 and {row["resize"]["max_pixels"] for row in rows} == {200_704}
