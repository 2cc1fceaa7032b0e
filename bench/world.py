"""Benchmark: the simulated phone's renders/s and env steps/s on ONE core, beside baselines from the same run.

The process is pinned to one CPU and rates are per CPU-second of this process (``time.process_time``), so other
jobs sharing the machine slow the wall clock but not the numbers.

Every task is put on the Pixel 7 screen (1080x2400). The screens measured are all states of the gold episodes of
``--tasks`` tasks from the train split. Rows printed (higher is better; goals from issue 14):

- ``floor: numpy copy of a frame``: copying one 1080x2400x3 array, the memory-bandwidth ceiling of any renderer;
- ``baseline: plain Pillow full-screen draw``: every widget drawn with Pillow into a new full-screen image, then
  ``np.asarray`` (what a renderer without caches costs);
- ``render, sprites cached``: ``Renderer.compose`` (cached background + cached sprites, no frame cache) - goal
  >= 300 renders/s;
- ``render, cold``: the same with both caches emptied before each frame (first visit of a screen);
- ``env steps, gold policy, groups of 8``: ``SimPhoneEnv.step`` along each task's gold episode 8 times in a row,
  as GRPO samples a group of rollouts per task (revisited screens come from the frame cache) - goal >= 1000
  steps/s; ``every frame new``: one episode per task, so nearly every frame is composed (bounded by copying
  1080x2400x3 bytes, see the floor);
- ``env steps, random policy``: uniformly random actions (``env.action_space.sample()``), groups of 8;
- ``env steps ... 720x1600``: the gold groups again on the Moto G Play screen. Every observation is new memory
  (gymnasium requires it; a cached screen is returned as a copy), so a step costs at least writing W x H x 3
  bytes: steps/s scale with the screen's pixels.
- ``rollout turns, scripted``: whole episodes through ``core.rollout.EpisodeSession`` with the scripted policy
  (gold action as GUI-R1 text, parsed, mapped through the model frame, stepped); ``+ prompt`` also builds each
  turn's model request (template prompt + screenshot resized to GUI-R1's training size), what a model policy pays
  besides generation. A screen's resize is done once per process (``core.rollout.session.MODEL_IMAGES``, keyed by
  the env's ``frame_key``): ``every screen new`` empties that cache before each turn (the first visit of every
  screen), ``groups of 8 per task`` replays each task's episode 8 times as a GRPO group does (first visit, then 7
  revisits), ``screens seen before`` runs 4 tasks whose resized screens are all cached; ``recipe request``: the
  same through ``core.rollout.recipe.RecipeSession`` on ``verl/gui_agent/recipe.yaml`` (``gui-agent rollout
  --recipe``: the whole conversation with every screenshot capped to 512x1152, the tool schema); ``tiny Qwen2.5-VL (hf)``: the tiny test model answering through the HF backend (16 new
  tokens, images capped at 256 merged tokens), i.e. ``gui-agent rollout --backend hf`` minus file output.

Peak RSS (``ru_maxrss``) is printed at the end. Usage: ``python bench/world.py [--tasks 40] [--seconds 3]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require()

import numpy as np  # noqa: E402

SCREEN = "pixel_7"
SMALL_SCREEN = "moto_g_play"  # 720x1600: how steps/s scale with the pixels every new observation must fill
GROUP = 8  # rollouts per task in a GRPO group


def _one_core() -> str:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned (no sched_setaffinity)"


def _rate(fn, items: list, seconds: float) -> float:
    """Calls of ``fn(item)`` per CPU-second, cycling through ``items`` for about ``seconds`` of CPU time."""
    n, start = 0, time.process_time()
    while True:
        for item in items:
            fn(item)
            n += 1
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            return n / elapsed


def _screens(tasks) -> list[tuple]:
    """(renderer, widgets, status_h, nav_h) of every state of the tasks' gold episodes."""
    from core.world import SimPhoneEnv

    env, out = SimPhoneEnv(), []
    for task in tasks:
        _, info = env.reset(options={"task": task})
        while True:
            p = env.phone
            out.append((env.renderer, list(p.widgets()), p.status_h, p.nav_h))
            if info["gold_action"] is None:
                break
            _, _, terminated, _, info = env.step(info["gold_action"])
            if terminated:
                out.append((env.renderer, list(env.phone.widgets()), p.status_h, p.nav_h))
                break
    return out


def _pillow_draw(screen: tuple) -> np.ndarray:
    from PIL import Image

    renderer, widgets, _, _ = screen
    s, t = renderer.screen, renderer.theme
    image = Image.new("RGB", (s.width, s.height), t.background)
    for w in widgets:
        x1, y1, x2, y2 = w.box
        image.paste(renderer._draw(w, x2 - x1, y2 - y1, renderer._fill(w)), (x1, y1))
    return np.asarray(image)


def _episodes(env, tasks, policy: str, group: int = 1) -> int:
    """Run ``group`` episodes per task in a row (GRPO samples a group of rollouts per task); return the number of
    env steps."""
    n = 0
    for task in (t for t in tasks for _ in range(group)):
        _, info = env.reset(options={"task": task})
        while True:
            action = info["gold_action"] if policy == "gold" else env.action_space.sample()
            if action is None:
                break
            _, _, terminated, truncated, info = env.step(action)
            n += 1
            if terminated or truncated:
                break
    return n


def _steps_per_second(env, tasks, policy: str, seconds: float, group: int = 1) -> float:
    n, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        n += _episodes(env, tasks, policy, group)
    return n / (time.process_time() - start)


def _rollout_turns_per_second(policy, tasks, seconds: float, group: int = 1, session_factory=None,
                              **session) -> float:
    """Turns per CPU second of whole ``core.rollout`` episodes (``group`` in a row per task, repeated for about
    ``seconds``, at least once); ``session_factory`` (default ``EpisodeSession``) opens each episode."""
    from core.rollout.runner import run_episode
    from core.rollout.session import EpisodeSession
    from core.world import SimPhoneEnv

    make = session_factory or EpisodeSession
    env, n, start = SimPhoneEnv(), 0, time.process_time()
    while True:  # at least one pass
        for task in (t for t in tasks for _ in range(group)):
            n += len(run_episode(make(env, task, **session), policy).steps)
        if time.process_time() - start >= seconds:
            return n / (time.process_time() - start)


class _PromptedScripted:
    """The scripted policy that also builds each turn's model request (prompt + resized screenshot); ``cold``
    empties the resized-screenshot cache before each turn (every screen seen for the first time)."""

    name = "scripted+prompt"

    def __init__(self, cold: bool = False):
        self.cold = cold

    def __call__(self, sessions):
        from core.rollout.policies import ScriptedPolicy
        from core.rollout.session import MODEL_IMAGES

        for s in sessions:
            if self.cold:
                MODEL_IMAGES.clear()
            s.request()
        return ScriptedPolicy()(sessions)


def _rollout_rows(tasks, seconds: float) -> list[tuple[str, float, str, str]]:
    from functools import partial

    from core.agent_recipe import AgentRecipe
    from core.inference.requests import ResizePolicy
    from core.rollout.policies import BackendPolicy, ScriptedPolicy
    from core.rollout.recipe import RecipeSession
    from core.rollout.session import MODEL_IMAGES

    def turns(policy, tasks, group=1, **session):
        MODEL_IMAGES.clear()
        return _rollout_turns_per_second(policy, tasks, seconds, group, **session)

    recipe = partial(RecipeSession, recipe=AgentRecipe.load(Path(__file__).resolve().parents[1] / "verl" /
                                                             "gui_agent" / "recipe.yaml"))

    rows = [("rollout turns, scripted", turns(ScriptedPolicy(), tasks), "turns/s", ""),
            ("rollout turns, scripted + prompt, every screen new", turns(_PromptedScripted(cold=True), tasks),
             "turns/s", ""),
            (f"rollout turns, scripted, groups of {GROUP} per task", turns(ScriptedPolicy(), tasks, GROUP), "turns/s",
             ""),
            (f"rollout turns, scripted + prompt, groups of {GROUP} per task", turns(_PromptedScripted(), tasks, GROUP),
             "turns/s", ">= 200"),
            ("rollout turns, scripted + recipe request, every screen new",
             turns(_PromptedScripted(cold=True), tasks, session_factory=recipe), "turns/s", ""),
            (f"rollout turns, scripted + recipe request, groups of {GROUP} per task",
             turns(_PromptedScripted(), tasks, GROUP, session_factory=recipe), "turns/s", ""),
            ]
    few = tasks[:4]  # their screens all fit the resized-screenshot cache
    MODEL_IMAGES.clear()
    _rollout_turns_per_second(_PromptedScripted(), few, 0)  # resize them once
    rows.append(("rollout turns, scripted + prompt, screens seen before",
                 _rollout_turns_per_second(_PromptedScripted(), few, seconds), "turns/s", ""))
    try:
        from core.inference.backends import GenerationConfig, make_backend
        from core.testing import tiny_qwen25vl_path

        backend = make_backend("hf", str(tiny_qwen25vl_path()), gen=GenerationConfig(max_new_tokens=16),
                               batch_size=1, device="cpu")
    except ImportError as e:
        print(f"  (tiny-model rollout row skipped: {e}; run with .venvs/rl/bin/python)")
        return rows
    rows.append(("rollout turns, tiny Qwen2.5-VL (hf, CPU)",
                 _rollout_turns_per_second(BackendPolicy(backend), tasks[:2], seconds, max_steps=3,
                                           resize=ResizePolicy(max_pixels=256 * 28 * 28)), "turns/s", ""))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40, help="train tasks whose gold episodes are measured")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    pinned = _one_core()

    from core.world import SimPhoneEnv, list_tasks
    from core.world.render import FRAMES, SPRITES

    train = list_tasks("train")
    tasks = [t.model_copy(update={"screen": SCREEN}) for t in train[:: max(1, len(train) // args.tasks)][:args.tasks]]
    screens = _screens(tasks)
    frame = screens[0][0].compose(*screens[0][1:])
    rows: list[tuple[str, float, str, str]] = []

    rows.append(("floor: numpy copy of a frame", _rate(lambda _: frame.copy(), [0], args.seconds), "renders/s", ""))
    rows.append(("baseline: plain Pillow full-screen draw", _rate(_pillow_draw, screens, args.seconds), "renders/s",
                 ""))
    rows.append(("render, sprites cached (compose)",
                 _rate(lambda s: s[0].compose(*s[1:]), screens, args.seconds), "renders/s", ">= 300"))

    def cold(s):
        SPRITES.clear()
        s[0].compose(*s[1:])

    rows.append(("render, cold (caches emptied each frame)", _rate(cold, screens[:20], args.seconds), "renders/s",
                 ""))
    env = SimPhoneEnv()
    _episodes(env, tasks, "gold")  # warm the sprite cache once
    rows.append((f"env steps, gold policy, groups of {GROUP} per task",
                 _steps_per_second(env, tasks, "gold", args.seconds, GROUP), "steps/s", ">= 1000"))
    rows.append(("env steps, gold policy, every frame new", _steps_per_second(env, tasks, "gold", args.seconds),
                 "steps/s", ""))
    rows.append((f"env steps, random policy, groups of {GROUP} per task",
                 _steps_per_second(env, tasks, "random", args.seconds, GROUP), "steps/s", ""))
    small = [t.model_copy(update={"screen": SMALL_SCREEN}) for t in tasks]
    _episodes(env, small, "gold")
    rows.append((f"env steps, gold policy, groups of {GROUP}, {SMALL_SCREEN} 720x1600",
                 _steps_per_second(env, small, "gold", args.seconds, GROUP), "steps/s", ""))
    rows += _rollout_rows(tasks, args.seconds)

    print(f"simulated phone on {SCREEN} 1080x2400, one core ({pinned}), per CPU-second; {len(tasks)} tasks, "
          f"{len(screens)} screens")
    width = max(len(r[0]) for r in rows)
    for name, value, unit, goal in rows:
        print(f"  {name:<{width}}  {value:10.1f} {unit:<10} {('goal ' + goal) if goal else ''}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS {peak_mb:.0f} MB (sprite cache {SPRITES.used / 2**20:.0f} MB, frame cache "
          f"{FRAMES.used / 2**20:.0f} MB)")


if __name__ == "__main__":
    main()
