"""OpenAI-compatible HTTP backend: ``POST {base_url}/chat/completions`` with each screenshot as a base64 PNG
``image_url`` part (in prompt order), for models served by ``vllm serve`` (``--limit-mm-per-prompt`` at least the
screenshots per prompt), ``llamafactory-cli api`` or ``swift deploy``.

The screenshot is sent already resized to the training size; the server's own resize is the identity on it
as long as its pixel bounds contain that size (start LLaMA-Factory with ``--image_max_pixels`` at least the
training ``max_pixels``; vLLM / ms-swift default to the processor's 12.8 MP cap).

Failures are named, never tracebacks: a server that cannot be reached, or whose ``GET /models`` fails or is not
an OpenAI model list, stops the backend at start (:class:`ServerError`) unless ``served_model_name`` is given;
per request, ``timeout_s`` bounds the WHOLE request (connect, upload and every byte of the answer, so a
trickling server cannot hold a row forever), transport errors and HTTP 408/429/5xx are retried ``retries``
times after an exponential backoff with full jitter (``backoff_s * 2**attempt``, capped at ``MAX_BACKOFF_S``,
times a uniform draw in [0, 1)), and an answer whose ``content`` is not a string (null, a list) is the row's
error, never an empty answer.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.inference.backends.base import DEFAULT_GENERATION, Generation, GenerationConfig, describe
from core.inference.requests import InferenceRequest, openai_messages

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
#: Longest wait between two attempts of one request (seconds).
MAX_BACKOFF_S = 30.0
#: Largest response body read (bytes); a bigger one is the row's error.
MAX_RESPONSE_BYTES = 64 << 20


class ServerError(RuntimeError):
    """The server cannot serve this run (unreachable, or its model list is unusable); the message says why."""


class _Failure(Exception):
    """One attempt failed; ``retry`` says whether another attempt may succeed."""

    def __init__(self, message: str, *, retry: bool):
        super().__init__(message)
        self.retry = retry


class OpenAIBackend:
    name = "openai"

    def __init__(self, model: str, *, gen: GenerationConfig = DEFAULT_GENERATION, batch_size: int = 8,
                 served_model_name: str | None = None, api_key: str | None = None, timeout_s: float = 600.0,
                 retries: int = 2, backoff_s: float = 1.0):
        """``model``: the server's base URL (``http://127.0.0.1:8000/v1``; ``/v1`` is added when missing).
        ``served_model_name``: the ``model`` field of requests (default: the first id of ``GET /models``).
        ``batch_size`` requests are in flight at once. ``timeout_s``: the most one HTTP request may take in all
        (seconds); ``retries`` more attempts after a retryable failure, ``backoff_s`` the first backoff."""
        import httpx

        base = str(model).rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"--model must be the server URL for the openai backend (http://host:port/v1), "
                             f"got {model!r}")
        if timeout_s <= 0 or retries < 0 or backoff_s < 0:
            raise ValueError(f"timeout must be > 0 s, retries and backoff >= 0 (got {timeout_s}, {retries}, "
                             f"{backoff_s})")
        self.base_url = base if base.endswith("/v1") else base + "/v1"
        self.model, self.gen, self.batch_rows = self.base_url, gen, max(1, batch_size)
        self.timeout_s, self.retries, self.backoff_s = float(timeout_s), int(retries), float(backoff_s)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=self.base_url, headers=headers, timeout=self.timeout_s)
        self._httpx = httpx
        self.served_model_name = served_model_name or self._first_model()
        self._pool = ThreadPoolExecutor(max_workers=self.batch_rows, thread_name_prefix="openai-infer")

    def _first_model(self) -> str:
        try:
            return self._listed_model()
        except ServerError:
            self._client.close()
            raise

    def _listed_model(self) -> str:
        """The first model id of ``GET /models``; :class:`ServerError` saying what is wrong otherwise."""
        url = f"{self.base_url}/models"
        try:
            status, raw = self._request("GET", "/models", None)
        except _Failure as exc:
            raise ServerError(f"cannot reach {url} ({exc}); is the server running? Start it, or point --model at "
                              "its URL (--served-model-name skips this check)") from None
        if status != 200:
            raise ServerError(f"GET {url} answered HTTP {status}: {_clip(raw)}; pass --served-model-name")
        try:
            data = json.loads(raw)
        except ValueError:
            raise ServerError(f"GET {url} did not answer JSON: {_clip(raw)}; pass --served-model-name") from None
        models = data.get("data") if isinstance(data, dict) else None
        if not isinstance(models, list) or not models or not isinstance(models[0], dict) \
                or not isinstance(models[0].get("id"), str):
            raise ServerError(f"GET {url} is not an OpenAI model list ({{\"data\": [{{\"id\": ...}}]}}): "
                              f"{_clip(raw)}; pass --served-model-name")
        return models[0]["id"]

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, bytes]:
        """(status, body bytes) of one HTTP request that takes at most ``timeout_s`` in all."""
        deadline = time.monotonic() + self.timeout_s
        try:
            with self._client.stream(method, path, json=body) as resp:
                chunks, size = [], 0
                for chunk in resp.iter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > MAX_RESPONSE_BYTES:
                        raise _Failure(f"response larger than {MAX_RESPONSE_BYTES} bytes", retry=False)
                    if time.monotonic() > deadline:
                        raise _Failure(f"timeout: no complete answer within {self.timeout_s:g} s", retry=True)
                return resp.status_code, b"".join(chunks)
        except self._httpx.TimeoutException:
            raise _Failure(f"timeout: no complete answer within {self.timeout_s:g} s", retry=True) from None
        except self._httpx.TransportError as exc:
            raise _Failure(describe(exc), retry=True) from None

    def payload(self, request: InferenceRequest) -> dict[str, Any]:
        """The JSON body of the chat completion call for ``request``."""
        body: dict[str, Any] = {
            "model": self.served_model_name,
            "messages": openai_messages(request.messages, request.images),
            "max_tokens": self.gen.max_new_tokens,
            "temperature": max(self.gen.temperature, 0.0),
            "seed": self.gen.seed,
        }
        if request.tools:
            body["tools"] = request.tools  # the server's chat template renders them (vLLM / ms-swift)
        if not self.gen.greedy:
            body["top_p"] = self.gen.top_p
        if self.gen.repetition_penalty != 1.0:
            body["repetition_penalty"] = self.gen.repetition_penalty  # vLLM / ms-swift extension
        return body

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry ``attempt`` (0-based): full jitter over an exponential cap."""
        return min(MAX_BACKOFF_S, self.backoff_s * 2 ** attempt) * random.random()

    def _attempt(self, body: dict[str, Any]) -> str:
        status, raw = self._request("POST", "/chat/completions", body)
        if status != 200:
            raise _Failure(f"HTTP {status}: {_clip(raw)}", retry=status in RETRY_STATUS)
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _Failure(f"malformed response ({describe(exc)}): {_clip(raw)}", retry=False) from None
        if not isinstance(content, str):
            raise _Failure(f"response content is {type(content).__name__}, not text: {_clip(raw)}", retry=False)
        return content

    def _one(self, request: InferenceRequest) -> Generation:
        try:
            body = self.payload(request)
        except Exception as exc:  # noqa: BLE001 - the row's error, never the run's
            return Generation(error=describe(exc))
        attempt = 0
        while True:
            try:
                return Generation(text=self._attempt(body))
            except _Failure as exc:
                if not exc.retry or attempt >= self.retries:
                    return Generation(error=f"{exc}" + (f" (after {attempt + 1} attempts)" if attempt else ""))
            time.sleep(self.backoff(attempt))
            attempt += 1

    def generate(self, requests: Sequence[InferenceRequest]) -> list[Generation]:
        return list(self._pool.map(self._one, requests))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._client.close()


def _clip(raw: bytes) -> str:
    return raw[:500].decode("utf-8", "replace")
