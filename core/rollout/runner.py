"""Run many episodes: resumable ``episodes.jsonl``, the summary, and a step-by-step HTML gallery.

Output folder layout (``run_rollouts``):

- ``episodes.jsonl``: one line per finished episode (:meth:`core.rollout.session.Episode.to_row` plus ``seed``,
  ``policy``, ``model``, ``env``), appended and fsynced as each episode ends. Re-running the same command skips
  the episode ids already there; a torn last line from a killed run is cut off first.
- ``summary.json``: :func:`summarize` over the run's episodes (also written to ``--json``).
- ``gallery/index.html``: the first ``gallery`` episodes, every screen with the gold target box (green) and
  the model's point (red) drawn, the model text, the parsed action and what the env did with it.
"""

from __future__ import annotations

import html
import io
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.inference.backends import describe
from core.geometry import shown_coords
from core.io import atomic_write_json, atomic_write_text
from core.inference.runner import PredictionWriter, first_row, load_done
from core.outputs import FolderFiles, as_folder_files, claim_folder
from core.rollout.policies import Policy
from core.rollout.session import Episode, EpisodeSession


#: Run settings of ``run_info`` that must match an existing ``episodes.jsonl`` to resume it (a resumed summary
#: mixes no runs); the caller's ``resume_options`` add the rest.
RUN_KEYS: tuple[str, ...] = ("env", "policy", "backend", "model", "template", "level", "max_steps")
#: Fields every ``episodes.jsonl`` row rollout has written carries (a file whose rows lack one is not rollout's).
OWN_FIELDS: tuple[str, ...] = ("task_id", "success", "n_steps", "steps")
#: The files rollout writes into its folder besides ``episodes.jsonl`` (listed in ``.rollout.files.json``).
FOLDER_FILES: tuple[str, ...] = ("summary.json", "gallery/index.html", "gallery/*/*.png")
#: Fields of every summary rollout writes (``summary.json``, ``--json``): a JSON file lacking one is not rollout's.
SUMMARY_FIELDS: tuple[str, ...] = ("success_rate", "episodes", "per_family", "output")


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to run: its id (unique in the output), the env's task (id or task object) and reset seed."""

    id: str
    task: Any
    seed: int


def task_id(task: Any) -> str:
    """The id of a task given as a string or as a task object with an ``id``."""
    return task if isinstance(task, str) else str(task.id)


def episode_specs(tasks: Sequence[Any], episodes: int | None = None, *, seed: int = 0) -> list[EpisodeSpec]:
    """``episodes`` episodes over ``tasks`` (default: each task once). Every whole pass runs all tasks in order;
    a partial pass takes tasks evenly spread over the list (so ``--episodes 20`` of a split grouped by family
    still samples every family). Pass k gives ids the suffix ``#k`` and reset seed ``seed + k``."""
    if not tasks:
        raise ValueError("no tasks to run")
    n = len(tasks) if episodes is None else episodes
    if n < 1:
        raise ValueError(f"episodes must be >= 1, got {n}")
    passes, rest = divmod(n, len(tasks))
    picks = [(k, i) for k in range(passes) for i in range(len(tasks))]
    picks += [(passes, j * len(tasks) // rest) for j in range(rest)]
    return [EpisodeSpec(id=task_id(tasks[i]) + (f"#{k}" if k else ""), task=tasks[i], seed=seed + k)
            for k, i in picks]


def run_episode(session: EpisodeSession, policy: Policy) -> Episode:
    """Drive ``session`` with ``policy`` until the episode ends."""
    while not session.done:
        reply = policy([session])[0]
        session.act(reply.text, error=reply.error)
    return session.episode


def summarize(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Task success rate, episodes, mean steps per episode, invalid-action rate (invalid turns / all turns),
    ignored-action rate, per-family success, mean episode reward, ``mean_<name>`` of each env metric
    (``metrics`` of the rows that have it) and ``error_reasons`` (episodes per error, first 300 characters) of
    episode rows."""
    rows = list(rows)
    turns = sum(r["n_steps"] for r in rows)
    fams: dict[str, dict[str, Any]] = {}
    for r in rows:
        f = fams.setdefault(str(r.get("family")), {"episodes": 0, "successes": 0})
        f["episodes"] += 1
        f["successes"] += int(bool(r["success"]))
    for f in fams.values():
        f["success_rate"] = f["successes"] / f["episodes"]
    metrics: dict[str, list[float]] = {}
    for r in rows:
        for k, v in (r.get("metrics") or {}).items():
            metrics.setdefault(k, []).append(float(v))
    n = len(rows)
    return {
        "success_rate": sum(bool(r["success"]) for r in rows) / n if n else 0.0,
        "episodes": n,
        "successes": sum(bool(r["success"]) for r in rows),
        "mean_steps": turns / n if n else 0.0,
        "invalid_rate": sum(r["n_invalid"] for r in rows) / turns if turns else 0.0,
        "ignored_rate": sum(r["n_ignored"] for r in rows) / turns if turns else 0.0,
        "errors": sum(1 for r in rows if r.get("error")),
        "error_reasons": dict(Counter(str(r["error"])[:300] for r in rows if r.get("error")).most_common()),
        "mean_reward": sum(float(r.get("reward") or 0.0) for r in rows) / n if n else 0.0,
        **{f"mean_{k}": sum(v) / len(v) for k, v in sorted(metrics.items())},
        "per_family": dict(sorted(fams.items())),
    }


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:120].lstrip(".") or "_"  # never hidden, never ..


def _draw_steps(episode: Episode, folder: FolderFiles) -> None:
    """Thumbnails of every kept screen with the gold box and the model's point (``core.eval.gallery``)."""
    from PIL import Image

    from core.eval.gallery import draw_failure

    kept = [rec for rec in episode.steps if rec.screen is not None]
    folder.add(f"{rec.index:03d}.png" for rec in kept)
    for rec in kept:
        buf = io.BytesIO()
        Image.fromarray(rec.screen[..., :3]).save(buf, format="PNG", compress_level=1)
        point = rec.action.point if rec.action is not None else None
        draw_failure(buf.getvalue(), {"gt_box": rec.gold_box, "pred_point": point},
                     folder.folder / f"{rec.index:03d}.png", max_side=360)


def shown_action(action: dict[str, Any] | None) -> str:
    """An action dict of ``episodes.jsonl`` as the gallery prints it: its points with at most one decimal
    (:func:`core.geometry.shown_coords`); None: ``none``."""
    if action is None:
        return "none"
    return ", ".join(f"{k}={shown_coords(v) if k in ('point', 'end_point') else v}" for k, v in action.items())


def write_episode_gallery(rows: Sequence[dict[str, Any]], out_dir: str | Path | FolderFiles) -> Path:
    """``out_dir/index.html`` for the episode ``rows`` whose step images exist in ``out_dir/<episode>/``."""
    files = as_folder_files(out_dir)
    out, esc = files.folder, (lambda v: html.escape("" if v is None else str(v)))
    sections = []
    for r in rows:
        folder = out / _safe(r["id"])
        if not folder.is_dir():
            continue
        cards = []
        for s in r["steps"]:
            img = folder / f"{s['index']:03d}.png"
            pic = f'<img src="{esc(folder.name)}/{img.name}">' if img.is_file() else "<p>no screen</p>"
            what = (f"invalid: {s['invalid']}" if s["invalid"] else
                    f"ignored: {s['ignored']}" if s["ignored"] else f"reward {s['reward']}")
            cards.append(f'<div class="card">{pic}<p><b>step {s["index"]}</b> {esc(shown_action(s["action"]))}'
                         f"<br>{esc(what)}<br>gold: {esc(shown_action(s['gold_action']))}</p>"
                         f"<pre>{esc((s['model_text'] or '')[:600])}</pre></div>")
        verdict = "success" if r["success"] else ("error: " + str(r["error"]) if r.get("error") else "failed")
        sections.append(f"<h2>{esc(r['id'])}: {esc(verdict)}</h2><p>{esc(r['instruction'])} "
                        f"({esc(r.get('family'))}, {r['n_steps']} steps)</p><div class='steps'>{''.join(cards)}</div>")
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>episodes</title><style>"
            "body{font-family:sans-serif;margin:1em}.steps{display:flex;flex-wrap:wrap;gap:.5em}"
            ".card{border:1px solid #ccc;padding:.3em;width:240px;font-size:12px}.card img{width:100%}"
            "pre{white-space:pre-wrap;background:#f6f6f6;max-height:12em;overflow:auto}</style></head><body>"
            "<h1>episodes</h1><p>Green: the gold target box; red: the model's point.</p>"
            + "".join(sections) + "</body></html>\n")
    return atomic_write_text(files.path("index.html"), page)


def _act_safely(session: EpisodeSession, reply: Any) -> BaseException | None:
    """``session.act`` on ``reply``; an exception (the env crashed) is returned, not raised."""
    try:
        session.act(reply.text, error=reply.error)
    except Exception as exc:  # noqa: BLE001 - an env crash ends its episode, not the run
        return exc
    return None


def _read_rows(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {r["id"]: r for r in rows}


def run_rollouts(make_env: Callable[[], Any], specs: Sequence[EpisodeSpec], policy: Policy,
                 output_dir: str | Path, *, session_options: dict[str, Any] | None = None, workers: int = 1,
                 gallery: int = 20, run_info: dict[str, Any] | None = None, progress: bool = True,
                 resume_options: Mapping[str, Any] | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Run every episode of ``specs`` not already in ``output_dir/episodes.jsonl`` and return the summary of
    all of them. ``workers`` episodes run at once, each in its own env (``make_env()``): the policy answers
    them in one batch and their env steps run in threads. ``session_options`` go to
    :class:`~core.rollout.session.EpisodeSession` (or to ``session_options["session_factory"]``, e.g. a
    :class:`~core.rollout.recipe.RecipeSession` with its recipe bound); ``run_info`` (policy, model, env...) is added to every row
    and the summary. An env that raises during an episode ends that episode with ``error`` (it counts as failed).

    An existing folder run is resumed only when its :data:`RUN_KEYS` of ``run_info`` and every
    ``resume_options`` value (seed, resize, screenshots kept, generation settings...) match
    (:func:`core.outputs.resumable_output`: ``ValueError`` naming each difference), and only when rollout wrote
    its ``episodes.jsonl`` (run record, or rows with :data:`OWN_FIELDS`). The summary and gallery files are the
    run's only when its manifest lists them (:func:`claim_folder`); ``overwrite`` deletes its episodes and
    exactly those files first, never another file of the folder."""
    from core.outputs import LegacyRows, resumable_output

    out = Path(output_dir)
    if len({s.id for s in specs}) != len(specs):
        raise ValueError("episode ids must be unique")
    path = out / "episodes.jsonl"
    info = dict(run_info or {})
    options = {**{k: info[k] for k in RUN_KEYS if k in info}, **(resume_options or {})}
    adopt = check_rollout_folder(out, overwrite=overwrite)
    out.mkdir(parents=True, exist_ok=True)

    def options_in_rows(first: Mapping[str, Any]) -> dict[str, Any]:
        """A folder written before run records: the run keys its first row holds."""
        return {k: first[k] for k in RUN_KEYS if k in first}

    legacy = LegacyRows(first_row=lambda: first_row(path), own_fields=OWN_FIELDS, options=options_in_rows)
    with resumable_output(path, options, overwrite=overwrite, clear=lambda: path.unlink(missing_ok=True),
                          legacy=legacy, has_rows=lambda: _has_rows(path)) as resuming:
        files = claim_folder(out, "rollout", FOLDER_FILES, overwrite=overwrite, option="--output",
                             resume=resuming, adopt=adopt)
        return _run_locked(make_env, specs, policy, files, dict(session_options or {}), workers, gallery, info,
                           progress)


def _has_rows(path: Path) -> bool:
    return path.exists() and path.stat().st_size > 0


def check_rollout_folder(output_dir: str | Path, *, overwrite: bool) -> bool:
    """Before any env or model starts: refuse a summary or gallery file in ``output_dir`` that rollout may not
    replace (:func:`core.outputs.check_folder`). Returns whether a folder written before manifests existed is
    taken as rollout's: its ``episodes.jsonl`` has a run record, or rows to resume (whose ownership and options
    :func:`run_rollouts` checks before anything is written)."""
    from core.outputs import check_folder, manifest_path, refuse_foreign_output, run_record_path

    out = Path(output_dir)
    path = out / "episodes.jsonl"
    refuse_foreign_output(path, overwrite=overwrite, first_row=lambda: first_row(path), own_fields=OWN_FIELDS)
    resume = not overwrite and _has_rows(path)
    adopt = not manifest_path(out, "rollout").exists() and (run_record_path(path).exists() or resume)
    check_folder(out, "rollout", FOLDER_FILES, overwrite=overwrite, option="--output", resume=resume, adopt=adopt)
    return adopt


def check_json_summary(json_path: str | Path, output_dir: str | Path, *, overwrite: bool) -> None:
    """Before any env or model starts: ``--json`` may replace an existing file only with ``overwrite``, except
    that a resumed run (``output_dir/episodes.jsonl`` exists) rewrites the summary rollout wrote for this folder:
    a JSON object with :data:`SUMMARY_FIELDS` whose ``output`` is this folder's ``episodes.jsonl``
    (:func:`core.outputs.refuse_foreign_json`). An unrelated file, or another folder's summary, is refused."""
    import os

    from core.console import quoted
    from core.outputs import refuse_existing, refuse_foreign_json

    episodes = Path(output_dir) / "episodes.jsonl"
    if not episodes.exists():
        refuse_existing(json_path, overwrite=overwrite, option="--json")
        return

    def belongs(summary: Mapping[str, Any]) -> str | None:
        written = summary["output"]
        if isinstance(written, str) and written == str(episodes):
            return None
        try:
            if isinstance(written, str) and os.path.samefile(written, episodes):
                return None
        except (OSError, ValueError):
            pass
        return f"its episodes are {quoted(written)}, not {quoted(str(episodes))}"

    refuse_foreign_json(json_path, overwrite=overwrite, option="--json", command="rollout",
                        own_fields=SUMMARY_FIELDS, belongs=belongs)


def _run_locked(make_env: Callable[[], Any], specs: Sequence[EpisodeSpec], policy: Policy, files: FolderFiles,
                opts: dict[str, Any], workers: int, gallery: int, info: dict[str, Any], progress: bool
                ) -> dict[str, Any]:
    from core.console import progress_bar

    out = files.folder
    path = out / "episodes.jsonl"
    make_session = opts.pop("session_factory", EpisodeSession)
    done, _ = load_done(path)
    todo = [s for s in specs if s.id not in done]
    in_gallery = {s.id for s in specs[:gallery]}
    envs = [make_env() for _ in range(max(1, min(workers, len(todo))))] if todo else []
    free, active, queue = list(envs), {}, list(reversed(todo))
    start, n_turns = time.monotonic(), 0
    stats = {"ok": sum(1 for s in specs if s.id in done), "success": 0}

    def finish(spec: EpisodeSpec, episode: Episode, env: Any, writer: PredictionWriter, bar: Any) -> None:
        writer.write_rows([{**episode.to_row(), "seed": spec.seed, **info}])
        if spec.id in in_gallery:
            _draw_steps(episode, files.sub(f"gallery/{_safe(spec.id)}"))
        free.append(env)
        stats["success"] += int(episode.success)
        bar.update(1)
        bar.set_postfix(success=f"{stats['success']}/{bar.n - stats['ok']}", refresh=False)

    def failed(spec: EpisodeSpec, exc: BaseException, partial: Episode | None) -> Episode:
        ep = partial or Episode(id=spec.id, task_id=task_id(spec.task), family=getattr(spec.task, "family", None),
                                app=getattr(spec.task, "app", None), instruction="",
                                level=opts.get("level", "high"), template=opts.get("template", "guir1-high"),
                                screen_size=(0, 0))
        ep.error, ep.success = describe(exc), False
        return ep

    with PredictionWriter(path) as writer, progress_bar(total=len(specs), initial=stats["ok"], unit="episode",
                                                 desc="rollout", enabled=progress, dynamic_ncols=True) as bar, \
            ThreadPoolExecutor(max_workers=max(1, len(envs))) as pool:
        while queue or active:
            while queue and free:
                spec, env = queue.pop(), free.pop()
                try:
                    active[spec.id] = (spec, env, make_session(env, spec.task, episode_id=spec.id, seed=spec.seed,
                                                               keep_screens=spec.id in in_gallery, **opts))
                except ValueError:
                    raise  # bad options (template, level, limits): the whole run is wrong
                except Exception as exc:  # noqa: BLE001 - the env failed to reset: that episode fails
                    finish(spec, failed(spec, exc, None), env, writer, bar)
            sessions = [s for _, _, s in active.values()]
            replies = policy(sessions) if sessions else []
            outcomes = pool.map(_act_safely, sessions, replies)
            for (spec, env, session), crash in zip(list(active.values()), outcomes, strict=True):
                n_turns += 1
                if crash is not None or session.done:
                    del active[spec.id]
                    finish(spec, session.episode if crash is None else failed(spec, crash, session.episode), env,
                           writer, bar)
    for env in envs:
        env.close()
    rows = _read_rows(path)
    mine = [rows[s.id] for s in specs if s.id in rows]
    seconds = time.monotonic() - start
    summary = {**summarize(mine), **info, "seconds": round(seconds, 3), "new_turns": n_turns,
               "turns_per_s": round(n_turns / seconds, 2) if seconds > 0 and n_turns else None,
               "output": str(path)}
    if gallery:
        summary["gallery"] = str(write_episode_gallery([r for r in mine if r["id"] in in_gallery],
                                                       files.sub("gallery")))
    atomic_write_json(files.path("summary.json"), summary)
    return summary


__all__ = ["FOLDER_FILES", "OWN_FIELDS", "RUN_KEYS", "SUMMARY_FIELDS", "EpisodeSpec", "check_json_summary",
           "check_rollout_folder", "episode_specs", "run_episode", "run_rollouts", "summarize", "task_id",
           "write_episode_gallery"]
