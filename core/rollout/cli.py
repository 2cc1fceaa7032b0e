"""``gui-agent rollout``: whole episodes of a model (or the scripted / random policy) in an environment.

The command parses its flags into one :class:`~core.rollout.options.RolloutOptions` and calls
:func:`core.rollout.run.run_rollout`, which does the work; here are only the flags and how the result is shown."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from core.console import print_error
from core.inference.options import BackendName
from core.rollout.options import PolicyName, RolloutError, RolloutOptions


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def render_summary(summary: dict) -> str:
    """The lines ``gui-agent rollout`` prints."""
    lines = [f"{summary.get('policy')} on {summary.get('env')} {summary.get('tasks')}: success rate "
             f"{_percent(summary['success_rate'])} ({summary['successes']}/{summary['episodes']} episodes), "
             f"mean steps {summary['mean_steps']:.2f}, invalid-action rate {_percent(summary['invalid_rate'])}, "
             f"ignored-action rate {_percent(summary['ignored_rate'])}, env errors {summary['errors']}, mean reward "
             f"{summary.get('mean_reward', 0.0):.3f}"
             + "".join(f", {k} {v:.3f}" for k, v in summary.items()
                       if k.startswith("mean_") and k not in ("mean_steps", "mean_reward"))]
    lines += [f"  {fam}: {_percent(v['success_rate'])} ({v['successes']}/{v['episodes']})"
              for fam, v in summary["per_family"].items()]
    return "\n".join(lines)


def rollout(
    output: Annotated[Path, typer.Option(help="Folder for episodes.jsonl, summary.json and gallery/ (resumed).")],
    env: Annotated[str | None, typer.Option(
        help="Environment: sim-phone or miniwob (MiniWoB++ in Chromium; make setup-web). Default: sim-phone, or "
             "the --recipe file's env.")] = None,
    tasks: Annotated[str | None, typer.Option(
        help="A split (sim-phone: train, val_seed, test_seed, test_family, test, curriculum_train, curriculum_val, "
             "curriculum_test; miniwob: the suite click-type) or "
             "comma-separated task ids (default: the held-out split / the suite).")] = None,
    policy: Annotated[PolicyName, typer.Option(
        help="model (--backend/--model), scripted (gold actions as model text), random, or centre (always tap "
             "the screen centre).")] = PolicyName.model,
    backend: Annotated[BackendName | None, typer.Option(help="hf, vllm or openai (with --policy model).")] = None,
    model: Annotated[str | None, typer.Option(help="Model folder / hub id (hf, vllm) or server URL (openai).")] = None,
    template: Annotated[str | None, typer.Option(
        help="core.prompts template: its prompt, answer format and frame (guir1-high, the default: GUI-R1 JSON; "
             "qwen3vl-mobile-use: mobile_use tool calls).")] = None,
    recipe: Annotated[Path | None, typer.Option(
        help="The agent recipe file verl's GUI-agent training reads (verl/gui_agent/recipe.yaml): the request is "
             "built as its agent loop builds it (tool schema on its grid, its prompt, every capped screenshot in "
             "context) and its max_turns, max_screenshots, on_invalid and env apply. Replaces --template, "
             "--level, --max-steps, --max-screenshots and the resize options.")] = None,
    level: Annotated[str | None, typer.Option(
        help="high (default): prompt with the goal; low: with each step's instruction.")] = None,
    episodes: Annotated[int | None, typer.Option(help="Episodes to run (default: each task once).")] = None,
    max_steps: Annotated[int | None, typer.Option(
        help="Turns per episode, invalid answers included (default 20).")] = None,
    max_screenshots: Annotated[int | None, typer.Option(
        help="Screenshots kept in context (default 1 = the template's single-image training prompt).")] = None,
    workers: Annotated[int, typer.Option(help="Episodes run at once (one env each; one model batch).")] = 1,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the summary here.")] = None,
    gallery: Annotated[int, typer.Option(help="Episodes drawn step by step in gallery/index.html.")] = 20,
    seed: Annotated[int, typer.Option(help="Env reset seed (repetitions add 1) and random-policy seed.")] = 0,
    max_pixels: Annotated[int | None, typer.Option(help="smart_resize max pixels (default: 1258291).")] = None,
    min_pixels: Annotated[int | None, typer.Option(help="smart_resize min pixels (default: 3136).")] = None,
    factor: Annotated[int | None, typer.Option(
        help="Resize factor (default: from the model folder, else the template's).")] = None,
    max_new_tokens: Annotated[int, typer.Option(help="New tokens per answer.")] = 512,
    temperature: Annotated[float, typer.Option(help="0 = greedy.")] = 0.0,
    device: Annotated[str | None, typer.Option(help="hf: cpu, cuda, cuda:1 ...")] = None,
    dtype: Annotated[str, typer.Option(help="hf/vllm dtype.")] = "auto",
    tensor_parallel_size: Annotated[int, typer.Option(help="vllm: GPUs per engine.")] = 1,
    served_model_name: Annotated[str | None, typer.Option(help="openai: model name in requests.")] = None,
    api_key: Annotated[str | None, typer.Option(envvar="GUI_AGENT_API_KEY", help="openai: bearer token.")] = None,
    overwrite: Annotated[bool, typer.Option(help=(
        "Start an existing --output run over (needed when an option that changes its episodes differs: env, "
        "policy, model, template, level, steps, seed, resize, screenshots, generation settings): removes the "
        "episodes and the summary and gallery files rollout wrote there (its .rollout.files.json), no other file; "
        "also replaces an existing --json (a resumed run rewrites only the --json summary it wrote itself)."))] = False,
) -> None:
    """Run whole episodes and report task success rate, mean steps, invalid-action rate, per-family success.
    An env that cannot start here, or a run whose every episode failed for one reason, is an error (exit 2)."""
    from core.outputs import user_errors
    from core.rollout.run import no_result, run_rollout

    options = RolloutOptions(
        output=output, env=env, tasks=tasks, policy=policy, backend=backend, model=model, template=template,
        recipe=recipe, level=level, episodes=episodes, max_steps=max_steps, max_screenshots=max_screenshots,
        workers=workers, json_path=json_path, gallery=gallery, seed=seed, max_pixels=max_pixels, min_pixels=min_pixels,
        factor=factor, max_new_tokens=max_new_tokens, temperature=temperature, device=device, dtype=dtype,
        tensor_parallel_size=tensor_parallel_size, served_model_name=served_model_name, api_key=api_key,
        overwrite=overwrite)
    try:
        with user_errors():
            summary = run_rollout(options, announce=lambda line: typer.echo(line, err=True))
    except RolloutError as e:
        print_error(str(e))
        raise typer.Exit(2) from None
    typer.echo(render_summary(summary))
    reason = no_result(summary)
    if reason is not None:
        print_error(f"every episode failed for one reason, so this is no result: {reason}")
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("rollout")(rollout)


__all__ = ["PolicyName", "register", "render_summary", "rollout"]
