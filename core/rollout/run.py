"""One ``gui-agent rollout`` run from its :class:`~core.rollout.options.RolloutOptions`: every option checked before
anything starts (in the order the command has always checked them), the env, the policy (a model backend or a
scripted / random / centre one), the episodes (:func:`core.rollout.runner.run_rollouts`) and the summary.

A problem with the options is a :class:`~core.rollout.options.RolloutError` (one line, ``--flag: why``); a bad
number, an output that cannot be used or a failure while running is the ``ValueError`` / ``OSError`` the command
shows as one line (:func:`core.outputs.user_errors`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from core.geometry import GUIR1_TRAIN_MAX_PIXELS, GUIR1_TRAIN_MIN_PIXELS
from core.inference.options import BackendName
from core.inference.requests import ResizePolicy, model_image_factor
from core.io import atomic_write_json
from core.numbers import checked_numbers
from core.prompts import get_template
from core.rollout.envs import get_env
from core.rollout.options import PolicyName, RolloutError, RolloutOptions
from core.rollout.policies import BackendPolicy, CentrePolicy, RandomPolicy, ScriptedPolicy
from core.rollout.runner import check_json_summary, check_rollout_folder, episode_specs, run_rollouts


def _stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")


def _bad(msg: str, hint: str) -> RolloutError:
    """One plain line (no wrapped error box: its width depends on the terminal)."""
    return RolloutError(f"{hint}: {msg}")


def _backend_options(o: RolloutOptions, max_screenshots: int) -> dict[str, Any]:
    if o.backend is BackendName.hf:
        return {"device": o.device, "dtype": o.dtype}
    if o.backend is BackendName.vllm:
        return {"tensor_parallel_size": o.tensor_parallel_size, "dtype": o.dtype,
                "limit_mm_per_prompt": {"image": max_screenshots}}
    return {"served_model_name": o.served_model_name, "api_key": o.api_key}


def run_rollout(o: RolloutOptions, *, announce: Callable[[str], None] = _stderr_line) -> dict[str, Any]:
    """Run the episodes ``o`` asks for and return the summary (also written to ``o.json_path`` when given);
    ``announce`` gets the line that says what starts, once everything is checked and the policy is ready."""
    env, level, template, max_steps, max_screenshots = o.env, o.level, o.template, o.max_steps, o.max_screenshots
    agent_recipe = None
    if o.recipe is not None:
        from core.agent_recipe import AgentRecipe, AgentRecipeError

        given = [name for name, value in (("--template", template), ("--level", level), ("--max-steps", max_steps),
                                          ("--max-screenshots", max_screenshots), ("--max-pixels", o.max_pixels),
                                          ("--min-pixels", o.min_pixels), ("--factor", o.factor)) if value is not None]
        if given:
            raise _bad(f"set by the recipe file {o.recipe}; drop it or edit the file", given[0])
        try:
            agent_recipe = AgentRecipe.load(o.recipe)
        except AgentRecipeError as e:
            raise _bad(str(e), "--recipe") from None
        env = env or agent_recipe.env
        max_steps, max_screenshots = agent_recipe.max_turns, agent_recipe.max_screenshots
    env, level = env or "sim-phone", level or "high"
    max_steps, max_screenshots = max_steps or 20, max_screenshots or 1
    try:
        entry, tmpl = get_env(env), get_template("qwen3vl-mobile-use" if agent_recipe else template or "guir1-high")
    except ValueError as e:
        raise _bad(str(e), "--env/--template") from None
    problem = entry.missing_setup()
    if problem:  # an env that cannot start is an error, never a run of failed episodes
        raise _bad(problem, f"--env {env}")
    count = {"minimum": 1, "integer": True}
    checked_numbers([("--max-steps", max_steps, count), ("--max-screenshots", max_screenshots, count),
                     ("--workers", o.workers, count), ("--episodes", o.episodes, count),
                     ("--gallery", o.gallery, {"minimum": 0, "integer": True}), ("--max-pixels", o.max_pixels, count),
                     ("--min-pixels", o.min_pixels, count), ("--factor", o.factor, count),
                     ("--max-new-tokens", o.max_new_tokens, count), ("--temperature", o.temperature, {"minimum": 0}),
                     ("--tensor-parallel-size", o.tensor_parallel_size, count)])  # every number before anything
    if level not in ("high", "low"):
        raise _bad("must be high or low", "--level")
    if o.policy is PolicyName.model and (o.backend is None or o.model is None):
        raise _bad("--policy model needs --backend and --model", "--backend/--model")
    split = o.tasks or entry.default_split
    try:
        specs = episode_specs(entry.tasks(split), o.episodes, seed=o.seed)  # every task id checked before any runs
    except ValueError as e:
        raise _bad(str(e), "--tasks/--episodes") from None
    try:
        resize = ResizePolicy(min_pixels=o.min_pixels or GUIR1_TRAIN_MIN_PIXELS,
                              max_pixels=o.max_pixels or GUIR1_TRAIN_MAX_PIXELS,
                              factor=o.factor or (model_image_factor(o.model, tmpl.factor) if o.model else tmpl.factor))
    except ValueError as e:
        raise _bad(str(e), "--max-pixels/--min-pixels/--factor") from None

    check_rollout_folder(o.output, overwrite=o.overwrite)  # outputs checked before any backend or env starts
    if o.json_path is not None:  # a resumed run rewrites the summary it wrote, never an unrelated file
        check_json_summary(o.json_path, o.output, overwrite=o.overwrite)
    o.output.mkdir(parents=True, exist_ok=True)

    runner_backend = None
    if o.policy is PolicyName.model:
        from core.inference.backends import GenerationConfig, make_backend

        gen = GenerationConfig(max_new_tokens=o.max_new_tokens, temperature=o.temperature, seed=o.seed)
        try:
            runner_backend = make_backend(o.backend.value, o.model, gen=gen, batch_size=o.workers,
                                          **_backend_options(o, max_screenshots))
        except (RuntimeError, ValueError, OSError) as e:
            raise RolloutError(f"cannot start the {o.backend.value} backend: {e}") from None
        chosen = BackendPolicy(runner_backend)
    else:
        chosen = {PolicyName.scripted: ScriptedPolicy, PolicyName.centre: CentrePolicy,
                  PolicyName.random: lambda: RandomPolicy(o.seed)}[o.policy]()
    announce(f"rollout: {len(specs)} episodes of {env} {split} -> {o.output}; policy {o.policy.value}, "
             + (f"recipe {o.recipe}" if agent_recipe else f"template {tmpl.name}, level {level}")
             + f", max {max_steps} steps, {o.workers} worker(s)")
    info = {"env": env, "tasks": split, "policy": o.policy.value, "backend": o.backend.value if o.backend else None,
            "model": o.model, "template": tmpl.name, "level": level, "max_steps": max_steps}
    generation = {"max_new_tokens": o.max_new_tokens, "temperature": o.temperature} if runner_backend else {}
    resume_options = {"seed": o.seed, "max_screenshots": max_screenshots, "resize": {
        "min_pixels": resize.min_pixels, "max_pixels": resize.max_pixels, "factor": resize.factor}, **generation}
    session_options: dict = {"template": tmpl.name, "resize": resize, "level": level, "max_steps": max_steps,
                             "max_screenshots": max_screenshots}
    if agent_recipe is not None:  # every value of the file must match to resume; the session is verl's loop's
        from core.rollout.recipe import RecipeSession

        info["recipe"] = str(o.recipe)
        resume_options = {"seed": o.seed, "recipe": {k: getattr(agent_recipe, k) for k in agent_recipe.keys()},
                          **generation}
        session_options = {"session_factory": partial(RecipeSession, recipe=agent_recipe)}
    try:
        summary = run_rollouts(lambda: entry.make(), specs, chosen, o.output, workers=o.workers, gallery=o.gallery,
                               run_info=info, resume_options=resume_options, overwrite=o.overwrite,
                               session_options=session_options)
        if o.json_path is not None:
            atomic_write_json(o.json_path, summary)
    finally:
        if runner_backend is not None:
            runner_backend.close()
    return summary


def no_result(summary: dict[str, Any]) -> str | None:
    """The one reason every episode failed for (the run is then no result), else None."""
    reasons = summary["error_reasons"]
    if summary["episodes"] and summary["errors"] == summary["episodes"] and len(reasons) == 1:
        return next(iter(reasons))
    return None


__all__ = ["no_result", "run_rollout"]
