"""``gui-agent world tasks|show|export|play``: the simulated phone from the command line."""

from __future__ import annotations

import json
import shlex
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from core.console import bounded, quoted

if TYPE_CHECKING:
    from core.outputs import FolderFiles

world_app = typer.Typer(help="The simulated phone: list tasks, render a task's screens, export, play.",
                        no_args_is_help=True)

#: The files ``world show`` writes into its folder (listed in ``.world-show.files.json``).
SHOW_FILES: tuple[str, ...] = ("steps.json", "step_*.png")

_SPLIT = typer.Option("train", "--split", help="train, val_seed, test_seed, test_family, test (both test splits), "
                                                "or the curriculum's curriculum_train, curriculum_val, curriculum_test.")


def selection(value: str, option: str) -> list[str]:
    """The comma-separated values of ``option``, in order; ``ValueError`` when it selects nothing (``""``,
    ``","``) or names a value twice (each row would be written twice, with the same ids)."""
    chosen = [v.strip() for v in value.split(",") if v.strip()]
    if not chosen:
        raise ValueError(f"{option} {quoted(value)} selects nothing; give one or more comma-separated values")
    repeated = sorted(v for v, count in Counter(chosen).items() if count > 1)  # linear: 50,000 names are quick
    if repeated:
        raise ValueError(f"{option} {quoted(value)} names {bounded(', '.join(map(repr, repeated)))} more than once; "
                         "give each value once")
    return chosen


def _tasks(split: str, n: int | None = None, families: str | None = None, skip: int = 0):
    from core.outputs import user_errors
    from core.world import SPLIT_NAMES, list_tasks

    if split not in SPLIT_NAMES:
        raise typer.BadParameter(f"unknown split {quoted(split)}; known: {', '.join(SPLIT_NAMES)}", param_hint="'--split'")
    with user_errors():
        chosen = None if families is None else selection(families, "--families")
    for name, value in (("--skip", skip), ("--n", n)):  # Python's own bound on counts of items
        if value is not None and value > sys.maxsize:
            raise typer.BadParameter(f"{bounded(str(value))} is beyond the largest count ({sys.maxsize})",
                                     param_hint=f"'{name}'")
    try:
        return list_tasks(split, n, chosen, skip=skip)
    except ValueError as e:  # the split is known: what list_tasks refuses is a family
        raise typer.BadParameter(str(e), param_hint="'--families'") from None


def _task(task_id: str):
    from core.world import get_task

    try:
        return get_task(task_id)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="TASK_ID") from None


@world_app.command("tasks")
def tasks_cmd(split: str = _SPLIT, as_json: bool = typer.Option(False, "--json", help="One JSON object a line.")
              ) -> None:
    """List the tasks of a split (id, family, app, screen, theme, font scale, instruction) and counts per family."""
    from rich.table import Table

    from core.console import make_console

    console = make_console()
    tasks = _tasks(split)
    if as_json:
        for t in tasks:
            typer.echo(t.model_dump_json())
        return
    table = Table("id", "family", "app", "screen", "theme", "font", "instruction", title=f"{split}: {len(tasks)} tasks")
    for t in tasks:
        table.add_row(t.id, t.family, t.app, t.screen, t.theme, f"{t.font_scale:g}", t.instruction)
    console.print(table)
    for family, n in sorted(Counter(t.family for t in tasks).items()):
        console.print(f"{family}: {n}")


@world_app.command("show")
def show_cmd(task_id: str = typer.Argument(..., help="Task id, e.g. settings_toggle-3."),
             output: Path = typer.Option(..., "--output", help="Folder for step_NN.png and steps.json."),
             overwrite: bool = typer.Option(False, "--overwrite", help="Replace the files an earlier show wrote "
                                                                       "in --output (and only those).")) -> None:
    """Render a task's gold episode: one PNG per screen with the gold target box and tap point drawn, and
    steps.json (instruction, low-level step instructions, gold actions)."""
    from core.outputs import claim_folder, user_errors

    task = _task(task_id)
    with user_errors():
        files = claim_folder(output, "world-show", SHOW_FILES, overwrite=overwrite)
        n_steps = _write_gold_screens(task, files)
    typer.echo(f"{task.id}: {task.instruction} ({n_steps} gold steps) -> {output}")


def _write_gold_screens(task, output: FolderFiles) -> int:
    """``step_NN.png`` (gold box and tap point drawn, screen pixels) and ``steps.json`` of ``task``'s gold
    episode in ``output`` (each file atomic, listed in its manifest first); returns the number of gold steps."""
    from PIL import Image, ImageDraw

    from core.io import atomic_path, atomic_write_text
    from core.world import SimPhoneEnv
    from core.world.export import MAX_GOLD_STEPS

    env = SimPhoneEnv()
    obs, info = env.reset(options={"task": task, "max_steps": MAX_GOLD_STEPS})
    steps = []
    for k in range(MAX_GOLD_STEPS + 1):
        image = Image.fromarray(obs)
        gold = info["gold_action"]
        if info["gold_box"]:
            draw = ImageDraw.Draw(image)
            width = max(3, image.width // 200)
            draw.rectangle(info["gold_box"], outline=(255, 0, 80), width=width)
            if gold.point:
                x, y = gold.point
                draw.ellipse((x - 4 * width, y - 4 * width, x + 4 * width, y + 4 * width), outline=(255, 0, 80),
                             width=width)
        with atomic_path(output.path(f"step_{k:02d}.png"), suffix=".png") as tmp:
            image.save(tmp)
        steps.append({"screen": f"step_{k:02d}.png", "step_instruction": info["step_instruction"],
                      "gold_action": gold.model_dump(exclude_none=True) if gold else None,
                      "gold_box": info["gold_box"], "ignored": info["ignored"]})
        if gold is None:
            break
        obs, _, _, _, info = env.step(gold)
    atomic_write_text(output.path("steps.json"), json.dumps({"task": task.model_dump(), "steps": steps}, indent=1))
    return len(steps) - 1


@world_app.command("export")
def export_cmd(split: str = _SPLIT,
               n: int | None = typer.Option(None, "--n", min=1, help="Export the first N tasks (default: all)."),
               families: str | None = typer.Option(None, "--families", help="sim-phone: comma-separated task "
                                                   "families; only their tasks, in the split's order (--n counts "
                                                   "them)."),
               skip: int = typer.Option(0, "--skip", min=0, help="sim-phone: leave out the split's first K tasks "
                                                                  "(after --families), e.g. the layout seeds another "
                                                                  "export already took."),
               output: Path = typer.Option(..., "--output", help="Unified parquet file to write."),
               levels: str = typer.Option("low,high,grounding", "--levels",
                                          help="Comma-separated row kinds: low, high, grounding."),
               grounding_per_screen: int = typer.Option(0, "--grounding-per-screen", min=0,
                                                        help="Extra grounding rows per screen for other tappable "
                                                             "widgets (besides the gold target)."),
               instructions_per_screen: int = typer.Option(1, "--instructions-per-screen", min=1,
                                                           help="Curriculum: show each task's start screen with up "
                                                                "to K goals (its own + K-1 of its family's "
                                                                "variants: other direction, phrase, tile), low/high "
                                                                "rows each."),
               env: str = typer.Option("sim-phone", "--env", help="sim-phone, or miniwob (MiniWoB++ in Chromium: "
                                                                  "--tasks, --n episodes, --seed; make setup-web)."),
               miniwob_tasks: str = typer.Option("click-type", "--tasks",
                                                 help="miniwob: a suite (click-type) or comma-separated task names."),
               seed: int = typer.Option(0, "--seed", help="miniwob: seed of the first pass over the tasks (+1 per "
                                                          "pass)."),
               overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --output.")) -> None:
    """Write a split's gold episodes to the unified parquet (low + high navigation steps, grounding rows)."""
    from core.outputs import refuse_existing, user_errors
    from core.world.export import LEVELS, export

    with user_errors():
        chosen = selection(levels, "--levels")
        bad = [v for v in chosen if v not in LEVELS]
        if bad:
            raise ValueError(f"--levels: unknown level(s) {', '.join(map(repr, bad))}; choose from {', '.join(LEVELS)}")
        refuse_existing(output, overwrite=overwrite)
    if env != "sim-phone":
        with user_errors(prefix=f"cannot write {output}: "):
            _export_other_env(env, miniwob_tasks, n, seed, output, chosen)
        return
    tasks = _tasks(split, n, families, skip)
    if not tasks:
        raise typer.BadParameter(f"--skip {skip} leaves no task of split {split!r}", param_hint="'--skip'")
    with user_errors(prefix=f"cannot write {output}: "):
        total, counts = export(tasks, output, chosen, extra_grounding=grounding_per_screen,
                               instructions_per_screen=instructions_per_screen)
    per = ", ".join(f"{k} {v}" for k, v in counts.items())
    typer.echo(f"{len(tasks)} {split} tasks -> {total} rows ({per}) -> {output}")


def _export_other_env(env: str, tasks: str, n: int | None, seed: int, output: Path, levels: list[str]) -> None:
    """``export --env miniwob``: MiniWoB++ gold episodes (``core.envs.miniwob_export``)."""
    if env != "miniwob":
        raise typer.BadParameter(f"unknown env {quoted(env)}; known: sim-phone, miniwob", param_hint="'--env'")
    from core.envs.miniwob import resolve_tasks
    from core.envs.miniwob_export import episodes, export

    try:
        pairs = episodes(resolve_tasks(tasks), n, seed)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--tasks'") from None
    total, counts, skipped = export(pairs, output, levels)
    per = ", ".join(f"{k} {v}" for k, v in counts.items())
    typer.echo(f"{len(pairs)} miniwob episodes ({tasks}) -> {total} rows ({per}) -> {output}; skipped "
               f"{len(skipped)}" + (f" (e.g. {skipped[0]})" if skipped else ""))


PLAY_HELP = """commands: tap ID | tap X Y | long X Y | type TEXT | scroll up|down | back | home | recent | enter |
open APP | gold (take the gold step) | json {mobile_use arguments} | widgets | quit"""


def parse_play_command(line: str, widgets: list[dict]):
    """A phone action from one ``play`` command line; ValueError with a usage hint when it is not one."""
    from core.actions import Action

    try:
        words = shlex.split(line)
    except ValueError as e:
        raise ValueError(f"cannot split {line!r}: {e}") from None
    if not words:
        raise ValueError("empty command")
    cmd, args = words[0].lower(), words[1:]
    if cmd == "json":
        try:
            value = json.loads(line.split(None, 1)[1] if len(words) > 1 else "")
        except RecursionError:  # [[[[... thousands deep: the decoder's own recursion
            raise ValueError("json is nested too deeply; give one object of mobile_use arguments") from None
        if not isinstance(value, dict):
            raise ValueError("json needs an object of mobile_use arguments")
        return value
    if cmd in ("tap", "long") and len(args) == 1:
        box = next((w["box"] for w in widgets if w["id"] == args[0]), None)
        if box is None:
            raise ValueError(f"no widget {args[0]!r} on screen (see `widgets`)")
        point = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        return Action(type="click" if cmd == "tap" else "long_press", point=point)
    if cmd in ("tap", "long") and len(args) == 2:
        return Action(type="click" if cmd == "tap" else "long_press", point=(float(args[0]), float(args[1])))
    if cmd == "type" and args:
        return Action(type="type", text=line.split(None, 1)[1])
    if cmd == "scroll" and len(args) == 1:
        return Action(type="scroll", direction=args[0])
    if cmd == "open" and args:
        return Action(type="open_app", text=" ".join(args))
    simple = {"back": "press_back", "home": "press_home", "recent": "press_recent", "enter": "press_enter",
              "complete": "complete"}
    if cmd in simple and not args:
        return Action(type=simple[cmd])
    raise ValueError(f"not a command: {line!r}\n{PLAY_HELP}")


@world_app.command("play")
def play_cmd(task_id: str = typer.Argument(..., help="Task id, e.g. send_message-3."),
             screenshot: Path = typer.Option(Path("sim_phone.png"), "--screenshot",
                                             help="PNG rewritten with the current screen after every step."),
             max_steps: int = typer.Option(20, "--max-steps", min=1)) -> None:
    """Step a task from the terminal: type commands, watch --screenshot, read the reward and the reason an
    action was ignored."""
    from PIL import Image

    from core.geometry import shown_coords
    from core.world import ENDING_ACTIONS, SimPhoneEnv, to_action

    if screenshot.suffix.lower() != ".png" or screenshot.is_dir():
        raise typer.BadParameter(f"{str(screenshot)!r}: needs a .png file path (it is rewritten every step)",
                                 param_hint="'--screenshot'")
    if not screenshot.parent.is_dir():
        raise typer.BadParameter(f"{str(screenshot)!r}: no folder {str(screenshot.parent)!r}",
                                 param_hint="'--screenshot'")
    task = _task(task_id)
    env = SimPhoneEnv()
    obs, info = env.reset(options={"task": task, "max_steps": max_steps})
    typer.echo(f"{task.id} on {task.screen} ({task.theme}): {task.instruction}\n{PLAY_HELP}")
    while True:
        try:
            Image.fromarray(obs).save(screenshot, format="PNG")
        except OSError as e:  # not writable, disk full: one line, exit 2
            raise typer.BadParameter(f"{str(screenshot)!r}: cannot write it ({e.strerror or e})",
                                     param_hint="'--screenshot'") from None
        typer.echo(f"[step {info['step']}] screen {'/'.join(env.phone.route)} -> {screenshot}; "
                   f"gold next: {info['step_instruction']}")
        try:
            line = input("> ").strip()
        except EOFError:
            break
        if line in ("quit", "exit", "q"):
            break
        if line == "widgets":
            for w in info["widgets"]:
                typer.echo(f"  {w['id']:<20} {w['role']:<10} {w['text'][:30]!r:<32} {shown_coords(w['box'])}")
            continue
        try:
            action = info["gold_action"] if line == "gold" else parse_play_command(line, info["widgets"])
            if action is None:
                typer.echo("no gold step left: the goal holds")
                continue
            obs, reward, terminated, truncated, info = env.step(action)
        except ValueError as e:
            typer.echo(f"invalid: {e}")
            continue
        if info["ignored"]:
            typer.echo(f"ignored: {info['ignored']}")
        typer.echo(f"reward {reward}  success {info['success']}")
        if terminated or truncated:
            typer.echo("episode over: " + (
                "goal reached" if info["success"] else "max steps reached" if truncated else
                "ended by the agent" if to_action(action).type in ENDING_ACTIONS else "the task's action budget is spent"))
            break


def register(app: typer.Typer) -> None:
    app.add_typer(world_app, name="world")


__all__ = ["SHOW_FILES", "parse_play_command", "register", "selection", "world_app"]
