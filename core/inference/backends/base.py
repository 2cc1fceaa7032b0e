"""What every generation backend shares: :class:`GenerationConfig`, :class:`Generation`, the :class:`Backend`
protocol, :func:`checked_sampling` (vLLM's rules for sampling parameters) and :func:`generate_isolating_failures` (the bottom of :mod:`core.inference`: the backends, the runner
and the CLI import it; it imports none of them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from core.console import quoted
from core.numbers import NumberError, checked_number

BACKENDS: tuple[str, ...] = ("hf", "vllm", "openai", "baseline")
#: Rows per ``generate`` call when none is given (the hf backend on CUDA picks its own: ``hf.pick_batch_size``).
DEFAULT_BATCH_SIZE = 8

T = TypeVar("T")


@dataclass(frozen=True)
class GenerationConfig:
    """Decoding settings shared by every backend (greedy by default; GUI-R1's scripts use greedy with
    ``repetition_penalty=1.05`` and 1024 new tokens)."""

    max_new_tokens: int = 1024
    temperature: float = 0.0
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    seed: int = 0

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0


DEFAULT_GENERATION = GenerationConfig()


def checked_sampling(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A request's sampling parameters checked by vLLM's rules (``SamplingParams._verify_args``), NaN refused too:
    ``temperature`` >= 0 (0 = greedy), ``top_p`` in (0, 1], ``top_k`` -1 or 0 (off) or a whole number >= 1,
    ``max_tokens`` / ``max_new_tokens`` a whole number >= 1, ``repetition_penalty`` > 0, ``stop`` a string or a list
    of non-empty strings. Returns the numbers as numbers; a bad one is a ``ValueError`` naming ``<prefix><key>``
    (the hf rollout's requests, the verl dry run's rollout settings)."""
    rules: dict[str, dict[str, Any]] = {"temperature": {"minimum": 0}, "top_p": {"above": 0, "maximum": 1},
                                        "max_tokens": {"minimum": 1, "integer": True},
                                        "max_new_tokens": {"minimum": 1, "integer": True},
                                        "repetition_penalty": {"above": 0}}
    out = dict(params)
    try:
        for key, bounds in rules.items():
            if out.get(key) is not None:
                out[key] = checked_number(out[key], f"{prefix}{key}", **bounds)
        if out.get("top_k") is not None:
            out["top_k"] = checked_number(out["top_k"], f"{prefix}top_k", minimum=-1, integer=True)
    except NumberError as e:
        raise ValueError(str(e)) from None
    stop = out.get("stop")
    if stop is not None:
        stops = [stop] if isinstance(stop, str) else stop
        if not isinstance(stops, (list, tuple)) or not all(isinstance(s, str) and s for s in stops):
            raise ValueError(f"{prefix}stop: must be a string or a list of non-empty strings (an empty one would end "
                             f"every answer at once), got {quoted(stop)}")
    return out


@dataclass(frozen=True)
class Generation:
    """The raw model text of one request, or why there is none."""

    text: str | None = None
    error: str | None = None


class Backend(Protocol):
    name: str
    model: str
    #: rows the runner should hand over per ``generate`` call
    batch_rows: int

    def generate(self, requests: Sequence[Any]) -> list[Generation]: ...

    def close(self) -> None: ...


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


def generate_isolating_failures(fn: Callable[[list[T]], list[str]], items: list[T]) -> list[Generation]:
    """``fn`` over the whole batch; when the batch call fails, again one item at a time so one bad item only
    fails itself. ``fn`` must return one string per item, in order."""
    try:
        texts = fn(items)
        if len(texts) != len(items):
            raise RuntimeError(f"backend returned {len(texts)} outputs for {len(items)} inputs")
        return [Generation(text=t) for t in texts]
    except Exception as batch_exc:  # noqa: BLE001 - every failure is recorded, never raised
        if len(items) == 1:
            return [Generation(error=describe(batch_exc))]
    out = []
    for item in items:
        try:
            out.append(Generation(text=fn([item])[0]))
        except Exception as exc:  # noqa: BLE001
            out.append(Generation(error=describe(exc)))
    return out


__all__ = ["BACKENDS", "DEFAULT_BATCH_SIZE", "DEFAULT_GENERATION", "Backend", "Generation", "GenerationConfig", "describe",
           "generate_isolating_failures"]
