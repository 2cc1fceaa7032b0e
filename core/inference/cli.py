"""``gui-agent infer``: one benchmark file -> one prediction file (JSON lines, resumable)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from core.console import print_error
from core.eval.registry import BENCHMARKS
from core.inference.options import TRAINING_TEMPLATE, BackendName
from core.presets import PRESETS

if TYPE_CHECKING:
    from core.inference.bench import InputBenchmark


def infer(
    backend: Annotated[BackendName, typer.Option(help="hf (transformers, CPU/1 GPU), vllm (GPUs), openai (HTTP), baseline (no model: --model random, centre or gold).")],
    model: Annotated[str, typer.Option(help="Model folder / hub id (hf, vllm), server URL (openai), or random / centre / "
                                            "gold (baseline).")],
    input: Annotated[list[Path], typer.Option("--input", help="Benchmark parquet: GUI-R1 layout or unified. "
                                               "Repeat with --output to run several files on one loaded model.")],
    output: Annotated[list[Path], typer.Option(help="Prediction file (JSON lines) of the --input at the same "
                                                    "position; an existing one is resumed.")],
    prompt: Annotated[list[str] | None, typer.Option(
        help=f"core.prompts template name (e.g. guir1-inference), or {TRAINING_TEMPLATE!r}: each step's training "
             "template (default). Once for every input, or once per --input.")] = None,
    recipe: Annotated[Path | None, typer.Option(help=(
        "Take --min-pixels/--max-pixels from this training recipe (recipes/<model>/<method>/config_*.yaml), so "
        "screenshots are resized as `gui-agent data convert --recipe` exported the training data; explicit flags "
        "win."))] = None,
    max_pixels: Annotated[int | None, typer.Option(
        help="smart_resize max pixels [default: the --recipe's, else GUI-R1 training 1258291].")] = None,
    min_pixels: Annotated[int | None, typer.Option(
        help="smart_resize min pixels [default: the --recipe's, else 3136].")] = None,
    factor: Annotated[int | None, typer.Option(
        help="Resize factor (patch x merge) [default: from the model's preprocessor_config.json, else 28].")] = None,
    batch_size: Annotated[int | None, typer.Option(min=1, help=(
        "Rows per generate call (per GPU worker for vllm) [default: 8; hf on CUDA: from the free GPU memory "
        "after loading, up to 64]."))] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N rows of the input.")] = None,
    images: Annotated[Path | None, typer.Option(help="Folder that relative image paths are resolved in.")] = None,
    max_new_tokens: Annotated[int | None, typer.Option(help="New tokens per answer [default: the --preset's, else "
                                                           "1024].")] = None,
    temperature: Annotated[float | None, typer.Option(help="0 = greedy [default: the --preset's, else 0].")] = None,
    top_p: Annotated[float | None, typer.Option(help="Nucleus sampling (only when temperature > 0) [default: the "
                                                     "--preset's, else 1].")] = None,
    repetition_penalty: Annotated[float | None, typer.Option(help="[default: the --preset's (GUI-R1's scripts: "
                                                                  "1.05), else 1.0].")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    device: Annotated[str | None, typer.Option(help="hf: cpu, cuda, cuda:1 ...")] = None,
    dtype: Annotated[str, typer.Option(help="hf/vllm dtype: auto, bfloat16, float16, float32.")] = "auto",
    tensor_parallel_size: Annotated[int, typer.Option(help="vllm: GPUs per engine.")] = 1,
    data_parallel_size: Annotated[int, typer.Option(help="vllm: engines (Ray actors), one per GPU group.")] = 1,
    gpu_memory_utilization: Annotated[float, typer.Option(help="vllm: fraction of GPU memory.")] = 0.9,
    max_model_len: Annotated[int | None, typer.Option(help="vllm: context length cap.")] = None,
    served_model_name: Annotated[str | None, typer.Option(
        help="openai: model name in requests [default: first of GET /v1/models].")] = None,
    api_key: Annotated[str | None, typer.Option(envvar="GUI_AGENT_API_KEY", help="openai: bearer token.")] = None,
    timeout: Annotated[float, typer.Option(min=0.001, help=(
        "openai: most seconds one request may take in all (connect, upload, the whole answer); "
        "failed requests are retried twice with exponential backoff."))] = 600.0,
    retry_failed: Annotated[bool, typer.Option(help="Re-run rows of the output that have an error.")] = False,
    overwrite: Annotated[bool, typer.Option(help=(
        "Start an existing --output over (needed when an option that changes the predictions differs from "
        "the run that wrote it: input, model, prompt, resize, generation settings, --images)."))] = False,
    max_image_pixels: Annotated[int | None, typer.Option(min=1, help=(
        "Largest screenshot (width x height) accepted; larger ones are row errors [default: Pillow's 89478485]."
    ))] = None,
    preset: Annotated[str | None, typer.Option(help=(
        f"Model preset (core.presets: {', '.join(PRESETS)}): the authors' prompt for each input's benchmark, answer parser, coordinate frame, generation "
        "settings and pixel bounds; explicit flags win."))] = None,
    benchmark: Annotated[list[str] | None, typer.Option(help=(
        f"With --preset: the benchmark of the input (core.eval.registry name: {', '.join(BENCHMARKS)}), once or "
        "once per --input "
        "[default: read from the file: its rows' benchmark field, a <benchmark>_test file name or the rows' "
        "source, and the kind of task from its rows; a file that does not decide the prompt is an error]."))] = None,
    zoom: Annotated[float | None, typer.Option(metavar="SHARE", help=(
        "Zoom (crop-then-ground): answer on the whole screenshot, then again on a crop of SHARE of its width and "
        "height (0 < SHARE < 1, e.g. 0.5) centred on the first point and kept inside the image, resized by the "
        "same pixel bounds; the second point is mapped back to original pixels. Grounding rows only: navigation "
        "rows, and rows whose first answer has no point, keep their one answer (each row's zoom field says so) "
        "[default: off]."))] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help=(
        "Print the requests as JSON lines (prompt text, image size after resize, generation settings) and exit "
        "without loading a model."))] = False,
) -> None:
    """Predict actions for every step of benchmark files (resumes an existing --output); the model is loaded once
    for all of them. Exit 0 when every row was answered, 1 when some rows failed (each is written with its
    error), 2 when the run could not start or every new row failed for one reason (one error line)."""
    from core.inference.backends import GenerationConfig, make_backend
    from core.inference.backends.hf import processor_source
    from core.inference.requests import ResizePolicy, model_image_factor
    from core.inference.runner import run_inference
    from functools import partial

    from core.inference.runner import OWN_FIELDS, first_row
    from core.outputs import refuse_foreign_output, user_errors
    from core.numbers import checked_numbers

    if limit is not None and limit < 0:
        raise typer.BadParameter("must be >= 0", param_hint="--limit")
    if max_image_pixels is not None:
        from core.data.ingest import set_image_pixel_limit

        set_image_pixel_limit(max_image_pixels)
    positive, fraction = {"above": 0}, {"above": 0, "maximum": 1}
    count = {"minimum": 1, "integer": True}
    with user_errors():  # every number before any file is read or model loaded
        if zoom is not None and not 0 < zoom < 1:  # NaN too
            raise ValueError(f"--zoom: must be a share of the screen between 0 and 1 (both excluded), got {zoom:g}")
        checked_numbers([("--max-new-tokens", max_new_tokens, count), ("--temperature", temperature, {"minimum": 0}),
                         ("--top-p", top_p, fraction), ("--repetition-penalty", repetition_penalty, positive),
                         ("--timeout", timeout, positive), ("--gpu-memory-utilization", gpu_memory_utilization, fraction),
                         ("--max-pixels", max_pixels, count), ("--min-pixels", min_pixels, count),
                         ("--factor", factor, count), ("--tensor-parallel-size", tensor_parallel_size, count),
                         ("--data-parallel-size", data_parallel_size, count), ("--max-model-len", max_model_len, count)])
    chosen = _preset(preset)
    if benchmark and chosen is None:
        raise typer.BadParameter("only with --preset (it picks the preset's prompt and pixel bounds)",
                                 param_hint="--benchmark")
    jobs = _jobs(input, output, prompt or [TRAINING_TEMPLATE], limit, chosen, explicit_prompt=prompt is not None,
                 benchmarks=benchmark or [])
    try:
        processor_folder = processor_source(model)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--model") from None
    if factor is None:
        factor = chosen.factor if chosen is not None else model_image_factor(processor_folder)
    try:
        policies = [ResizePolicy.from_options(
            recipe=recipe, min_pixels=min_pixels, max_pixels=max_pixels, factor=factor,
            preset_bounds=None if chosen is None else chosen.pixel_bounds(job.benchmark),
            prescale_max_pixels=None if chosen is None else chosen.prescale_max_pixels,
            fetch_image_first=chosen is not None and chosen.fetches_image_first(job.benchmark)) for job in jobs]
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--recipe/--max-pixels/--min-pixels/--factor") from None
    policy = max(policies, key=lambda p: p.max_pixels)
    base = chosen.generation if chosen is not None else GenerationConfig()
    gen = GenerationConfig(
        max_new_tokens=base.max_new_tokens if max_new_tokens is None else max_new_tokens,
        temperature=base.temperature if temperature is None else temperature,
        top_p=base.top_p if top_p is None else top_p,
        repetition_penalty=base.repetition_penalty if repetition_penalty is None else repetition_penalty, seed=seed)
    if dry_run:
        import json

        from core.inference.runner import dry_run_rows

        for job, job_policy in zip(jobs, policies, strict=True):
            typer.echo(_job_line(job, job_policy, "none (--dry-run)", zoom), err=True)
            for row in dry_run_rows(job.input, job.layout, images, job.template, job_policy, gen, limit, zoom):
                typer.echo(json.dumps(row, ensure_ascii=False))
        return
    options: dict = {}
    if backend is BackendName.hf:
        from core.inference.backends.hf import max_prompt_tokens

        options = {"device": device, "dtype": dtype, "prompt_tokens": max_prompt_tokens(policy)}
    elif backend is BackendName.vllm:
        options = {"tensor_parallel_size": tensor_parallel_size, "data_parallel_size": data_parallel_size,
                   "gpu_memory_utilization": gpu_memory_utilization, "max_model_len": max_model_len,
                   "dtype": dtype}
    elif backend is BackendName.openai:
        options = {"served_model_name": served_model_name, "api_key": api_key, "timeout_s": timeout}
    run_options = {  # with model, backend, prompt and resize: the options a resumed file must share
        "images": str(images.resolve()) if images else None, "max_image_pixels": max_image_pixels,
        "max_new_tokens": gen.max_new_tokens, "temperature": gen.temperature, "top_p": gen.top_p,
        "repetition_penalty": gen.repetition_penalty, "seed": seed}  # the effective values (preset, then flags)
    with user_errors():  # a prediction file infer did not write: refused before any model is loaded
        for job in jobs:
            refuse_foreign_output(job.output, overwrite=overwrite, first_row=partial(first_row, job.output),
                                  own_fields=OWN_FIELDS)
    start = time.monotonic()
    try:
        runner_backend = make_backend(backend.value, model, gen=gen, batch_size=batch_size, **options)
    except ImportError as e:
        print_error(f"the {backend.value} backend needs {e.name or e}, which this environment lacks: run "
                   ".venvs/rl/bin/gui-agent (created by make setup; vllm: make setup-gpu)")
        raise typer.Exit(2) from None
    except (RuntimeError, ValueError, OSError) as e:
        print_error(f"cannot start the {backend.value} backend: {e}")
        raise typer.Exit(2) from None
    typer.echo(f"infer: {backend.value} backend ready for {len(jobs)} file(s) ({model}, loaded in "
               f"{time.monotonic() - start:.1f} s; batch {runner_backend.batch_rows}: "
               f"{getattr(runner_backend, 'batch_source', 'given')})", err=True)
    from core.inference.bench import iter_benchmark

    failed, written, reasons = 0, 0, Counter()
    try:
        for job, policy in zip(jobs, policies, strict=True):
            typer.echo(_job_line(job, policy, backend.value, zoom), err=True)
            with user_errors(prefix=f"{job.input}: "):
                summary = run_inference(iter_benchmark(job.input, images_dir=images, layout=job.layout),
                                        runner_backend, job.output, template=job.template, policy=policy,
                                        limit=limit, total=job.total, retry_failed=retry_failed,
                                        overwrite=overwrite, zoom=zoom,
                                        run_options={"input": str(job.input.resolve()), **run_options})
            typer.echo(summary.render())
            failed, written = failed + summary.failed, written + summary.written
            reasons.update(summary.error_reasons)
    finally:
        runner_backend.close()
    if failed and failed == written and len(reasons) == 1:  # e.g. the server is down: no result at all
        print_error(f"every row failed for one reason, so this is no result: {next(iter(reasons))} (fix it, then "
                    "rerun with --retry-failed)")
        raise typer.Exit(2)
    if failed:
        print_error(f"{failed} rows failed (written with their 'error'); rerun with --retry-failed")
        raise typer.Exit(1)


@dataclass(frozen=True)
class _Job:
    """One --input/--output pair: ``total`` rows to predict (after --limit), ``template`` None = training's."""

    input: Path
    output: Path
    layout: str
    total: int
    template: str | None
    benchmark: str | None = None
    #: with --preset: what the input holds and how that was read (:func:`core.inference.bench.input_benchmark`)
    found: InputBenchmark | None = None


def _job_line(job: _Job, policy, backend: str, zoom: float | None) -> str:
    """The ``infer:`` line of one input: rows, output, prompt, resize, zoom and (with --preset) its benchmark and
    where that was read."""
    return (f"infer: {job.input} ({job.layout}, {job.total} rows) -> {job.output}; backend "
            f"{backend}, prompt {job.template or 'training template per step'}, resize "
            f"{policy.min_pixels}..{policy.max_pixels} px (factor {policy.factor}"
            f"{f', from {policy.recipe}' if policy.recipe else ''})"
            f"{f'; zoom {zoom:g} (crop-then-ground, grounding rows)' if zoom is not None else ''}"
            f"{f'; {job.found.describe()}' if job.found else ''}")


def _preset(name: str | None):
    """The :class:`core.presets.Preset` called ``name`` (None when not given); a bad name is a usage error."""
    if name is None:
        return None
    from core.presets import get_preset

    try:
        return get_preset(name)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--preset") from None


def _check_template(name: str) -> None:
    """``--prompt NAME`` names a registered template (or is the training template's ``train``)."""
    from core import prompts as registry

    if name != TRAINING_TEMPLATE:
        try:
            registry.get_template(name)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--prompt") from None


def _once_or_per_input(values: list[str], n_inputs: int, flag: str) -> None:
    if len(values) not in (0, 1, n_inputs):
        raise typer.BadParameter(f"give {flag} once or once per --input ({n_inputs}), got {len(values)}",
                                 param_hint=flag)


def _jobs(inputs: list[Path], outputs: list[Path], prompts: list[str], limit: int | None, preset=None, *,
          explicit_prompt: bool = True, benchmarks: list[str] = ()) -> list[_Job]:
    """Validate every pair before any model is loaded; with a ``preset``, each input's benchmark is read from the
    file (or ``benchmarks``, the --benchmark values) and, without an explicit ``--prompt``, it gets the preset's
    template for that benchmark. A file that does not decide the template is one error line naming --benchmark."""
    from core.inference.bench import count_rows, detect_layout, input_benchmark
    from core.outputs import refuse_existing

    if len(inputs) != len(outputs):
        raise typer.BadParameter(f"{len(inputs)} --input but {len(outputs)} --output; give one --output per --input",
                                 param_hint="--output")
    _once_or_per_input(prompts, len(inputs), "--prompt")
    _once_or_per_input(list(benchmarks), len(inputs), "--benchmark")
    if len(set(outputs)) != len(outputs):
        raise typer.BadParameter("two inputs write the same --output", param_hint="--output")
    jobs = []
    for i, (inp, out) in enumerate(zip(inputs, outputs, strict=True)):
        name = prompts[i] if len(prompts) > 1 else prompts[0]
        if preset is None or explicit_prompt:
            _check_template(name)  # before any file is read
        try:
            refuse_existing(out, overwrite=True)  # a file (resumed), never a folder
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--output") from None
        try:
            layout, total = detect_layout(inp), count_rows(inp)
        except (FileNotFoundError, ValueError) as e:
            raise typer.BadParameter(str(e), param_hint="--input") from None
        found = None
        if preset is not None:
            given = (benchmarks[i] if len(benchmarks) > 1 else benchmarks[0]) if benchmarks else None
            try:
                found = input_benchmark(inp, layout, given=given)
                if not explicit_prompt:
                    name = preset.template_for_file(found.name, found.kind)
            except ValueError as e:  # AmbiguousBenchmark, a name that contradicts the rows, an unknown --benchmark
                print_error(f"--input {inp}: {e}")
                raise typer.Exit(2) from None
            _check_template(name)
        jobs.append(_Job(inp, out, layout, total if limit is None else min(total, limit),
                         None if name == TRAINING_TEMPLATE else name, found.name if found else None, found))
    return jobs


def register(app: typer.Typer) -> None:
    app.command("infer")(infer)


__all__ = ["TRAINING_TEMPLATE", "BackendName", "infer", "register"]
