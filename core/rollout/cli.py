"""``gui-agent rollout``: whole episodes of a model (or the scripted / random policy) in an environment."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from core.console import print_error
from core.inference.options import BackendName


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
    from core.geometry import GUIR1_TRAIN_MAX_PIXELS, GUIR1_TRAIN_MIN_PIXELS
    from core.inference.requests import ResizePolicy, model_image_factor
    from core.io import atomic_write_json
    from core.outputs import user_errors
    from core.numbers import checked_numbers
    from core.prompts import get_template
    from core.rollout.envs import get_env
    from core.rollout.policies import BackendPolicy, CentrePolicy, RandomPolicy, ScriptedPolicy
    from core.rollout.runner import check_json_summary, check_rollout_folder, episode_specs, run_rollouts

    def bad(msg: str, hint: str) -> typer.Exit:
        """One plain line and exit 2 (no wrapped error box: its width depends on the terminal)."""
        print_error(f"{hint}: {msg}")
        return typer.Exit(2)

    agent_recipe = None
    if recipe is not None:
        from core.agent_recipe import AgentRecipe, AgentRecipeError

        given = [name for name, value in (("--template", template), ("--level", level), ("--max-steps", max_steps),
                                          ("--max-screenshots", max_screenshots), ("--max-pixels", max_pixels),
                                          ("--min-pixels", min_pixels), ("--factor", factor)) if value is not None]
        if given:
            raise bad(f"set by the recipe file {recipe}; drop it or edit the file", given[0])
        try:
            agent_recipe = AgentRecipe.load(recipe)
        except AgentRecipeError as e:
            raise bad(str(e), "--recipe") from None
        env = env or agent_recipe.env
        max_steps, max_screenshots = agent_recipe.max_turns, agent_recipe.max_screenshots
    env, level = env or "sim-phone", level or "high"
    max_steps, max_screenshots = max_steps or 20, max_screenshots or 1
    try:
        entry, tmpl = get_env(env), get_template("qwen3vl-mobile-use" if agent_recipe else template or "guir1-high")
    except ValueError as e:
        raise bad(str(e), "--env/--template") from None
    problem = entry.missing_setup()
    if problem:  # an env that cannot start is an error, never a run of failed episodes
        raise bad(problem, f"--env {env}")
    count = {"minimum": 1, "integer": True}
    with user_errors():  # every number before anything starts
        checked_numbers([("--max-steps", max_steps, count), ("--max-screenshots", max_screenshots, count),
                       ("--workers", workers, count), ("--episodes", episodes, count),
                       ("--gallery", gallery, {"minimum": 0, "integer": True}), ("--max-pixels", max_pixels, count),
                       ("--min-pixels", min_pixels, count), ("--factor", factor, count),
                       ("--max-new-tokens", max_new_tokens, count), ("--temperature", temperature, {"minimum": 0}),
                       ("--tensor-parallel-size", tensor_parallel_size, count)])
    if level not in ("high", "low"):
        raise bad("must be high or low", "--level")
    if policy is PolicyName.model and (backend is None or model is None):
        raise bad("--policy model needs --backend and --model", "--backend/--model")
    split = tasks or entry.default_split
    try:
        specs = episode_specs(entry.tasks(split), episodes, seed=seed)  # every task id checked before any runs
    except ValueError as e:
        raise bad(str(e), "--tasks/--episodes") from None
    try:
        resize = ResizePolicy(min_pixels=min_pixels or GUIR1_TRAIN_MIN_PIXELS,
                              max_pixels=max_pixels or GUIR1_TRAIN_MAX_PIXELS,
                              factor=factor or (model_image_factor(model, tmpl.factor) if model else tmpl.factor))
    except ValueError as e:
        raise bad(str(e), "--max-pixels/--min-pixels/--factor") from None

    with user_errors():  # outputs checked before any backend or env starts
        check_rollout_folder(output, overwrite=overwrite)
        if json_path is not None:  # a resumed run rewrites the summary it wrote, never an unrelated file
            check_json_summary(json_path, output, overwrite=overwrite)
        output.mkdir(parents=True, exist_ok=True)

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
            print_error(f"cannot start the {backend.value} backend: {e}")
            raise typer.Exit(2) from None
        chosen = BackendPolicy(runner_backend)
    else:
        chosen = {PolicyName.scripted: ScriptedPolicy, PolicyName.centre: CentrePolicy,
                  PolicyName.random: lambda: RandomPolicy(seed)}[policy]()
    typer.echo(f"rollout: {len(specs)} episodes of {env} {split} -> {output}; policy {policy.value}, "
               + (f"recipe {recipe}" if agent_recipe else f"template {tmpl.name}, level {level}")
               + f", max {max_steps} steps, {workers} worker(s)", err=True)
    info = {"env": env, "tasks": split, "policy": policy.value, "backend": backend.value if backend else None,
            "model": model, "template": tmpl.name, "level": level, "max_steps": max_steps}
    generation = {"max_new_tokens": max_new_tokens, "temperature": temperature} if runner_backend else {}
    resume_options = {"seed": seed, "max_screenshots": max_screenshots, "resize": {
        "min_pixels": resize.min_pixels, "max_pixels": resize.max_pixels, "factor": resize.factor}, **generation}
    session_options: dict = {"template": tmpl.name, "resize": resize, "level": level, "max_steps": max_steps,
                             "max_screenshots": max_screenshots}
    if agent_recipe is not None:  # every value of the file must match to resume; the session is verl's loop's
        from functools import partial

        from core.rollout.recipe import RecipeSession

        info["recipe"] = str(recipe)
        resume_options = {"seed": seed, "recipe": {k: getattr(agent_recipe, k) for k in agent_recipe.keys()},
                          **generation}
        session_options = {"session_factory": partial(RecipeSession, recipe=agent_recipe)}
    try:
        with user_errors():
            summary = run_rollouts(lambda: entry.make(), specs, chosen, output, workers=workers, gallery=gallery,
                                   run_info=info, resume_options=resume_options, overwrite=overwrite,
                                   session_options=session_options)
            if json_path is not None:
                atomic_write_json(json_path, summary)
    finally:
        if runner_backend is not None:
            runner_backend.close()
    typer.echo(render_summary(summary))
    reasons = summary["error_reasons"]
    if summary["episodes"] and summary["errors"] == summary["episodes"] and len(reasons) == 1:
        print_error(f"every episode failed for one reason, so this is no result: {next(iter(reasons))}")
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("rollout")(rollout)


__all__ = ["register", "render_summary", "rollout"]
