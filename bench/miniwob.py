"""Benchmark: MiniWoB++ env steps per second per worker and with N workers (browsers) in parallel, beside a
baseline measured in the same run.

Rates are wall-clock (the work happens in Chromium, another process). Each worker owns one browser and runs gold
episodes (:func:`core.envs.miniwob.plan_gold`) over the tasks of ``--suite`` for ``--seconds``, in groups of 8
episodes per task as GRPO samples them (the adapter loads a task's page once per group); ``steps/s`` counts
``env.step`` calls per second of the whole loop, resets included (what an RL rollout worker gets), and
``episodes/s`` whole episodes. Rows:

- ``baseline: miniwob package``: ``gymnasium.make("miniwob/<task>-v1")`` (the same Chromium and chromedriver) stepped
  with its own ``CLICK_COORDS`` / ``TYPE_TEXT`` actions for the same gold clicks and texts: the package alone;
- ``adapter, 1 worker``: :class:`core.envs.miniwob.MiniWoBEnv` (core actions, info with widgets and gold plan,
  browser deadline): what ``gui-agent rollout --env miniwob`` and the verl tool step;
- ``adapter, N workers``: N envs in N threads at once (``--workers``), total and per worker.

Also printed: the first reset (browser start) and, per row, the peak memory of its browsers (sum of the PSS of
every chromedriver/Chromium process, sampled every 0.5 s), and this process's peak RSS (``ru_maxrss``). Usage:
``python bench/miniwob.py [--seconds 10] [--workers 1,2,4] [--suite click-type]`` (``make bench-miniwob``).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require("psutil")

import psutil  # noqa: E402

# Run as a script, this file's folder is sys.path[0] and this file would shadow the ``miniwob`` package.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


GROUP = 8  # episodes of one task in a row (instances differ by seed), as GRPO samples a group per task


def _browser_pss_mb() -> float:
    """Proportional set size of every process started by this one (chromedriver + Chromium), in MB: shared pages
    are split between the processes that share them, so the sum is the memory the browsers really hold."""
    total = 0
    for child in psutil.Process().children(recursive=True):
        try:
            total += child.memory_full_info().pss
        except psutil.Error:
            pass
    return total / 2**20


class _Peak:
    """Samples :func:`_browser_pss_mb` every 0.5 s in a thread; ``peak`` is the largest sample."""

    def __init__(self):
        self.peak, self._stop = 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.peak = max(self.peak, _browser_pss_mb())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def _adapter_loop(tasks: list[str], seconds: float, seed: int) -> tuple[int, int, float]:
    """(steps, episodes, first reset s) of gold episodes in one MiniWoBEnv for ``seconds``."""
    from core.envs.miniwob import MiniWoBEnv

    env = MiniWoBEnv()
    try:
        t0 = time.perf_counter()
        _, info = env.reset(seed=seed, options={"task": tasks[0]})
        first = time.perf_counter() - t0
        steps = episodes = 0
        end = time.perf_counter() + seconds
        k = 0
        while time.perf_counter() < end:
            if k:
                _, info = env.reset(seed=seed + k, options={"task": tasks[k // GROUP % len(tasks)]})
            done = truncated = False
            while not (done or truncated) and info["gold_action"] is not None:
                _, _, done, truncated, info = env.step(info["gold_action"])
                steps += 1
            episodes += 1
            k += 1
        return steps, episodes, first
    finally:
        env.close()


def _package_loop(tasks: list[str], seconds: float, seed: int) -> tuple[int, int]:
    """(steps, episodes) of the miniwob package's own env and actions for the same gold plans (one env per task,
    each started once before timing; the adapter reuses one browser across tasks)."""
    import gymnasium
    import miniwob
    from miniwob.action import ActionTypes

    from core.envs.miniwob import CHROMEDRIVER, CHROMIUM, dom_widget, plan_gold

    os.environ.setdefault("MINIWOB_CHROME_BINARY", CHROMIUM)
    os.environ.setdefault("MINIWOB_CHROMEDRIVER", CHROMEDRIVER)
    gymnasium.register_envs(miniwob)
    envs = {t: gymnasium.make(f"miniwob/{t}-v1") for t in tasks}
    try:
        steps = episodes = k = 0
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            task = tasks[k // GROUP % len(tasks)]
            env = envs[task]
            obs, _ = env.reset(seed=seed + k)
            done = False
            while not done:
                gold = plan_gold(task, dict(obs["fields"]), [dom_widget(e) for e in obs["dom_elements"]])
                if gold is None:
                    break
                a = gold.action
                if a.type == "click":
                    action = env.unwrapped.create_action(ActionTypes.CLICK_COORDS, coords=list(a.point))
                elif a.type == "type":
                    action = env.unwrapped.create_action(ActionTypes.TYPE_TEXT, text=a.text)
                else:
                    break
                obs, _, done, _, _ = env.step(action)
                steps += 1
            episodes += 1
            k += 1
        return steps, episodes
    finally:
        for env in envs.values():
            env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="time per measurement (per worker count)")
    parser.add_argument("--workers", default="1,2,4", help="comma-separated worker counts (browsers in parallel)")
    parser.add_argument("--suite", default="click-type", help="a suite or comma-separated MiniWoB++ task names")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from core.envs.miniwob import resolve_tasks

    tasks = resolve_tasks(args.suite)
    counts = [int(w) for w in args.workers.split(",") if w.strip()]
    print(f"MiniWoB++ gold episodes over {len(tasks)} tasks ({args.suite}), {args.seconds:g} s per row, "
          f"{os.cpu_count()} CPUs; steps/s include resets")
    print(f"{'what':<34} {'steps/s':>9} {'episodes/s':>11} {'per worker':>11} {'browsers MB':>12}")
    peak = _Peak()
    steps, eps = _package_loop(tasks, args.seconds, args.seed)
    print(f"{f'baseline: miniwob package ({len(tasks)} envs)':<34} {steps / args.seconds:>9.1f} "
          f"{eps / args.seconds:>11.2f} {'':>11} {peak.stop():>12.0f}")
    first_resets = []
    for n in counts:
        peak = _Peak()
        with ThreadPoolExecutor(n) as pool:
            results = list(pool.map(lambda i: _adapter_loop(tasks, args.seconds, args.seed + 1000 * i), range(n)))
        steps, eps = sum(r[0] for r in results), sum(r[1] for r in results)
        first_resets += [r[2] for r in results]
        print(f"{f'adapter, {n} worker(s)':<34} {steps / args.seconds:>9.1f} {eps / args.seconds:>11.2f} "
              f"{steps / args.seconds / n:>11.1f} {peak.stop():>12.0f}")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"first reset (browser start): {min(first_resets):.1f}-{max(first_resets):.1f} s; this process's peak "
          f"RSS {own:.0f} MB")


if __name__ == "__main__":
    main()
