"""``gui-agent rollout``: whole episodes of a model (or the scripted / random policy) in an environment."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from core.inference.cli import BackendName


class PolicyName(str, Enum):
    model = "model"
    scripted = "scripted"
    random = "random"
    centre = "centre"


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
    env: Annotated[str, typer.Option(
        help="Environment: sim-phone or miniwob (MiniWoB++ in Chromium; make setup-web).")] = "sim-phone",
    tasks: Annotated[str | None, typer.Option(
        help="A split (sim-phone: train, val_seed, test_seed, test_family, test, curriculum_train, curriculum_val, "
             "curriculum_test; miniwob: the suite click-type) or "
             "comma-separated task ids (default: the held-out split / the suite).")] = None,
    policy: Annotated[PolicyName, typer.Option(
        help="model (--backend/--model), scripted (gold actions as model text), random, or centre (always tap "
             "the screen centre).")] = PolicyName.model,
    backend: Annotated[BackendName | None, typer.Option(help="hf, vllm or openai (with --policy model).")] = None,
    model: Annotated[str | None, typer.Option(help="Model folder / hub id (hf, vllm) or server URL (openai).")] = None,
    template: Annotated[str, typer.Option(
        help="core.prompts template: its prompt, answer format and frame (guir1-high: GUI-R1 JSON; "
             "qwen3vl-mobile-use: mobile_use tool calls).")] = "guir1-high",
    level: Annotated[str, typer.Option(help="high: prompt with the goal; low: with each step's instruction.")] = "high",
    episodes: Annotated[int | None, typer.Option(help="Episodes to run (default: each task once).")] = None,
    max_steps: Annotated[int, typer.Option(help="Turns per episode, invalid answers included.")] = 20,
    max_screenshots: Annotated[int, typer.Option(
        help="Screenshots kept in context (1 = the template's single-image training prompt).")] = 1,
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
) -> None:
    """Run whole episodes and report task success rate, mean steps, invalid-action rate, per-family success."""
    from core.geometry import GUIR1_TRAIN_MAX_PIXELS, GUIR1_TRAIN_MIN_PIXELS
    from core.inference.requests import ResizePolicy, model_image_factor
    from core.io import OutputLockedError, atomic_write_json
    from core.prompts import get_template
    from core.rollout.envs import get_env
    from core.rollout.policies import BackendPolicy, CentrePolicy, RandomPolicy, ScriptedPolicy
    from core.rollout.runner import episode_specs, run_rollouts

    def bad(msg: str, hint: str) -> typer.Exit:
        """One plain line and exit 2 (no wrapped error box: its width depends on the terminal)."""
        typer.echo(f"error: {hint}: {msg}", err=True)
        return typer.Exit(2)

    try:
        entry, tmpl = get_env(env), get_template(template)
    except ValueError as e:
        raise bad(str(e), "--env/--template") from None
    for name, value in (("--max-steps", max_steps), ("--max-screenshots", max_screenshots), ("--workers", workers)):
        if value < 1:
            raise bad("must be >= 1", name)
    if level not in ("high", "low"):
        raise bad("must be high or low", "--level")
    if policy is PolicyName.model and (backend is None or model is None):
        raise bad("--policy model needs --backend and --model", "--backend/--model")
    split = tasks or entry.default_split
    try:
        task_list = entry.tasks(split) if split in entry.splits else [t for t in split.split(",") if t.strip()]
        specs = episode_specs(task_list, episodes, seed=seed)
    except ValueError as e:
        raise bad(str(e), "--tasks/--episodes") from None
    try:
        resize = ResizePolicy(min_pixels=min_pixels or GUIR1_TRAIN_MIN_PIXELS,
                              max_pixels=max_pixels or GUIR1_TRAIN_MAX_PIXELS,
                              factor=factor or (model_image_factor(model, tmpl.factor) if model else tmpl.factor))
    except ValueError as e:
        raise bad(str(e), "--max-pixels/--min-pixels/--factor") from None

    runner_backend = None
    if policy is PolicyName.model:
        from core.inference.backends import GenerationConfig, make_backend

        gen = GenerationConfig(max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
        options: dict = ({"device": device, "dtype": dtype} if backend is BackendName.hf else
                         {"tensor_parallel_size": tensor_parallel_size, "dtype": dtype,
                          "limit_mm_per_prompt": {"image": max_screenshots}}
                         if backend is BackendName.vllm else {"served_model_name": served_model_name,
                                                              "api_key": api_key})
        try:
            runner_backend = make_backend(backend.value, model, gen=gen, batch_size=workers, **options)
        except (RuntimeError, ValueError, OSError) as e:
            typer.echo(f"error: cannot start the {backend.value} backend: {e}", err=True)
            raise typer.Exit(2) from None
        chosen = BackendPolicy(runner_backend)
    else:
        chosen = {PolicyName.scripted: ScriptedPolicy, PolicyName.centre: CentrePolicy,
                  PolicyName.random: lambda: RandomPolicy(seed)}[policy]()
    typer.echo(f"rollout: {len(specs)} episodes of {env} {split} -> {output}; policy {policy.value}, template "
               f"{tmpl.name}, level {level}, max {max_steps} steps, {workers} worker(s)", err=True)
    info = {"env": env, "tasks": split, "policy": policy.value, "backend": backend.value if backend else None,
            "model": model, "template": tmpl.name, "level": level, "max_steps": max_steps}
    try:
        summary = run_rollouts(lambda: entry.make(), specs, chosen, output, workers=workers, gallery=gallery,
                               run_info=info, session_options={"template": tmpl.name, "resize": resize,
                                                               "level": level, "max_steps": max_steps,
                                                               "max_screenshots": max_screenshots})
    except (OutputLockedError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    finally:
        if runner_backend is not None:
            runner_backend.close()
    if json_path is not None:
        atomic_write_json(json_path, summary)
    typer.echo(render_summary(summary))


def register(app: typer.Typer) -> None:
    app.command("rollout")(rollout)


__all__ = ["register", "render_summary", "rollout"]
