"""Data for verl's GUI-agent recipe (Qwen3-VL ``mobile_use`` agent, multi-turn GRPO).

    python verl/prepare_gui_agent_data.py --output_dir DIR --create_demo --demo_samples 1000
    python verl/prepare_gui_agent_data.py --output_dir DIR --input_file trajectories.jsonl \\
        --screen_width 999 --screen_height 999
    python verl/prepare_gui_agent_data.py --output_dir DIR --input_file steps.parquet   # this project's unified parquet

``--create_demo`` takes tasks of the simulated phone (``core.world``): ``train.parquet`` from the train split
(``--demo_samples`` rows, cycling through its tasks), ``test.parquet`` from the held-out split; rows run ONLINE
(``extra_info.task_id``: the agent loop acts in the phone). ``--input_file`` converts logged trajectories into
rows that run OFFLINE (``extra_info.screenshots``: the agent loop replays them, ``mobile_use_tool.ReplayPhoneEnv``)
and writes ``train.parquet`` plus ``test.parquet``, the validation split the run scripts pass as ``data.val_files``
(``--val_share`` of the trajectories, default 0.05, spread evenly, at least one):

- JSONL: one trajectory per line, ``{"instruction": str, "images": [path, ...], "actions": [mobile_use arguments,
  ...]}`` (paths relative to the file; ``images[i]`` is the screen before ``actions[i]``); coordinates in a
  ``--screen_width`` x ``--screen_height`` space (default 999 x 999, the recipe's).
- unified parquet: steps grouped into trajectories by ``extra.episode_id`` (consecutive steps), actions in
  screen pixels (``--screen_width/--screen_height`` are not used).

Columns (the recipe's layout): ``prompt`` (chat with one ``<image>``, what verl's ``RLHFDataset`` reads) and
``raw_prompt`` (the same with typed content), ``images`` (``[{bytes}]`` first screenshot), ``ground_truth``
(JSON of the first expected action), ``agent_name`` (``gui_agent``), ``data_source``, ``reward_model``,
``extra_info``: ``instruction``, ``expected_actions`` (``mobile_use`` arguments on ``--grid``), ``screen_width`` /
``screen_height`` (the coordinate space: 999 for the default grid, as the recipe), ``image_size`` (screen pixels),
``grid``, ``index``, ``split`` and the source keys (``task_id``/``seed`` or ``screenshots``). Grid, screenshot cap
and prompt come from ``--recipe`` (the agent recipe file training reads; ``--grid`` / ``--max_screenshot_pixels``
override it): one setting for prompt, data, reward and tool.

Bad input stops with an error naming the line/record and field (exit 2); outputs are written atomically. Images
follow ``gui-agent data convert``'s rules: paths relative to the JSONL's folder and inside it (``../x.png`` and
absolute paths elsewhere are refused), decodable, at most Pillow's pixel limit; coordinates are finite numbers.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require()

# core.agent_recipe, not mobile_use_tool: that module defines a verl BaseTool, so importing it loads verl, torch and
# transformers (about 20 s) before --help could print.
from core.agent_recipe import (  # noqa: E402
    GRIDS,
    AgentRecipe,
    AgentRecipeError,
    CoordinateGrid,
    cap_screenshot,
    regrid_arguments,
)

#: The agent recipe training reads (the file ``mobile_use_tool.DEFAULT_RECIPE`` names).
DEFAULT_RECIPE = Path(__file__).resolve().parent / "gui_agent" / "recipe.yaml"

AGENT_NAME = "gui_agent"


class DataError(ValueError):
    """Bad input, naming the record and field."""


def _png(image: Any) -> bytes:
    from PIL import Image

    if not isinstance(image, Image.Image):
        image = Image.fromarray(image)
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return buf.getvalue()


def make_row(*, instruction: str, first_image: bytes, image_size: tuple[int, int],
             expected_actions: list[dict[str, Any]], grid: CoordinateGrid, index: int, split: str,
             source: dict[str, Any], recipe: AgentRecipe) -> dict[str, Any]:
    """One recipe row (see the module docstring); ``source`` holds ``task_id``/``seed`` or ``screenshots``; the
    prompt is ``recipe``'s first message (:meth:`core.agent_recipe.AgentRecipe.first_message`)."""
    w, h = image_size
    first_message = recipe.first_message(instruction, image_size)
    text = first_message["content"][1]["text"]
    gw, gh = grid.extent(image_size)
    extra = {"instruction": instruction, "expected_actions": expected_actions,
             "screen_width": int(gw), "screen_height": int(gh), "image_size": [w, h], "grid": grid.name,
             "index": index, "split": split, **source}
    first = json.dumps(expected_actions[0]) if expected_actions else "{}"
    return {"data_source": f"gui_agent/{'replay' if 'screenshots' in source else 'sim_phone'}",
            "agent_name": AGENT_NAME,
            "prompt": [{"role": "user", "content": "<image>" + text}],
            "raw_prompt": [first_message],
            "images": [{"bytes": first_image}],
            "ground_truth": first,
            "reward_model": {"style": "rule", "ground_truth": first},
            "extra_info": extra}


# ------------------------------------------------------------------------------------------ demo (online)


#: Online envs of ``--create_demo --env`` (``core.rollout`` names) and where the held-out rows come from: the
#: simulated phone's held-out task split; MiniWoB++'s same suite on other seeds (each seed draws another utterance
#: and layout).
DEMO_ENVS = ("sim-phone", "miniwob")
MINIWOB_TEST_SEED0 = 1_000_000


def demo_rows(n: int, split: str, grid: CoordinateGrid, start_index: int = 0, *, env_name: str = "sim-phone",
              suite: str | None = None, recipe: AgentRecipe, skip: int = 0) -> Iterator[dict[str, Any]]:
    """``n`` online rows of ``env_name`` (cycling through the tasks of ``split`` after its first ``skip``: a
    simulated-phone split, or for MiniWoB++ the ``suite`` with train / test seeds), the gold sequence as the
    expected actions (played in the env to read each step's gold action). Each row names its env, task and seed
    (``extra_info.env``, ``task_id``, ``seed``), so the tool replays the same episode the prompt shows."""
    from core.actions import to_mobile_use
    from core.rollout.envs import get_env

    entry = get_env(env_name)
    tasks = entry.tasks(suite or entry.default_split) if env_name == "miniwob" else entry.tasks(split)
    if skip and skip >= len(tasks):
        raise DataError(f"--skip {skip}: {env_name} {split!r} has only {len(tasks)} tasks")
    tasks = tasks[skip:]
    if not tasks:
        raise DataError(f"{env_name} has no {split!r} tasks")
    env = entry.make()
    pixels = CoordinateGrid("pixels")
    try:
        for i in range(n):
            task = tasks[i % len(tasks)]
            task_id = getattr(task, "id", task)
            seed = i // len(tasks) + (MINIWOB_TEST_SEED0 if env_name == "miniwob" and split != "train" else 0)
            obs, info = env.reset(seed=seed, options={"task": task})
            size = tuple(int(v) for v in info["screen_size"])
            first = _png(obs)
            expected = []
            while info["gold_action"] is not None and len(expected) < 50:
                args = to_mobile_use(info["gold_action"], *size)
                if args is None:
                    raise DataError(f"task {task_id}: gold action {info['gold_action'].type!r} has no mobile_use form")
                expected.append(regrid_arguments(args, pixels, grid, size))
                obs, _, terminated, truncated, info = env.step(info["gold_action"])
                if terminated or truncated:
                    break
            if not info["success"]:
                expected.append({"action": "terminate", "status": "success"})
            yield make_row(instruction=info["instruction"], first_image=first, image_size=size,
                           expected_actions=expected, grid=grid, index=start_index + i, split=split,
                           source={"task_id": task_id, "seed": seed, "env": env_name}, recipe=recipe)
    finally:
        env.close()


# ------------------------------------------------------------------------------------------ logged (offline)


def _image_bytes(root: Path, name: Any, field: str, where: str) -> tuple[bytes, tuple[int, int]]:
    """Bytes and (W, H) of image ``name`` of a record, by ``data convert``'s rules (core.data.ingest._common): only
    inside the dataset folder ``root``, decodable, at most the pixel limit (a decompression bomb is a row error)."""
    from core.data.ingest._common import OUTSIDE_ROOT, image_size_of, inside
    from core.schema import StepValidationError

    path = root / str(name)
    if not inside(root, path):
        raise DataError(f"{where}: field '{field}': {OUTSIDE_ROOT}: {str(name)[:300]!r} lies outside the dataset "
                        f"folder {root}")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise DataError(f"{where}: field '{field}': cannot read {str(path)[:300]}: {e.strerror or e}") from None
    try:
        return data, image_size_of(data, where)
    except StepValidationError as e:
        raise DataError(f"{where}: field '{field}': {e.reason}") from None


def replay_row(instruction: str, images: list[tuple[bytes, tuple[int, int]]], actions: list[dict[str, Any]],
               src: CoordinateGrid, recipe: AgentRecipe, index: int, where: str) -> dict[str, Any]:
    """A row that replays a logged trajectory; actions are regridded from ``src`` to the recipe's grid on the first
    screen's size."""
    from core.actions import from_mobile_use

    grid = recipe.coordinate_grid

    if not str(instruction or "").strip():
        raise DataError(f"{where}: field 'instruction' is empty")
    if not images or not actions:
        raise DataError(f"{where}: fields 'images'/'actions' must be non-empty lists")
    size = images[0][1]
    expected = []
    for j, args in enumerate(actions):
        if not isinstance(args, dict):
            raise DataError(f"{where}: field 'actions[{j}]' is not an object")
        try:
            from_mobile_use(regrid_arguments(args, src, CoordinateGrid("pixels"), size))
        except (ValueError, TypeError) as e:
            raise DataError(f"{where}: field 'actions[{j}]': {e}") from None
        expected.append(regrid_arguments(args, src, grid, size))
    if len(images) not in (len(actions), len(actions) + 1):
        raise DataError(f"{where}: field 'images': {len(images)} image(s) for {len(actions)} action(s); images[i] is "
                        f"the screen before actions[i] (one more: the screen after the last action)")
    return make_row(instruction=instruction, first_image=images[0][0], image_size=size, expected_actions=expected,
                    grid=grid, index=index, split="train",
                    source={"screenshots": [b for b, _ in images], "task_id": f"replay-{index}"}, recipe=recipe)


def jsonl_rows(path: Path, src: CoordinateGrid, recipe: AgentRecipe) -> Iterator[dict[str, Any]]:
    """One replay row per trajectory line of a JSONL file (read by core's JSON record reader)."""
    from core.data.ingest._common import iter_json_records

    for index, record in iter_json_records(path):
        where = f"{path}:{index + 1}"
        if isinstance(record, Exception):
            raise DataError(f"{where}: {record.reason}") from None
        if not isinstance(record, dict) or not isinstance(record.get("images"), list):
            raise DataError(f"{where}: field 'images' must be a list of paths")
        images = [_image_bytes(path.parent, p, f"images[{i}]", where) for i, p in enumerate(record["images"])]
        yield replay_row(record.get("instruction", ""), images, list(record.get("actions") or []), src, recipe,
                         index, where)


def unified_rows(path: Path, recipe: AgentRecipe) -> Iterator[dict[str, Any]]:
    """Trajectories of a unified parquet (consecutive steps sharing ``extra.episode_id``)."""
    import itertools

    from core.actions import to_mobile_use
    from core.data.unified import iter_steps

    pixels = CoordinateGrid("pixels")
    for index, (_, group) in enumerate(itertools.groupby(iter_steps(path), key=lambda s: s.extra.get("episode_id")
                                                         or s.id)):
        steps = list(group)
        where = f"{path}: record {steps[0].id}"
        images, actions = [], []
        for s in steps:
            data = s.image if isinstance(s.image, bytes) else Path(str(s.image)).read_bytes()
            images.append((data, tuple(s.image_size)))
            args = to_mobile_use(s.action, *s.image_size)
            if args is None:
                raise DataError(f"{where}: field 'action': {s.action.type!r} has no mobile_use form")
            actions.append(args)
        yield replay_row(steps[0].instruction, images, actions, pixels, recipe, index, where)


# ------------------------------------------------------------------------------------------ output


def with_capped_screenshot(rows: Iterable[dict[str, Any]], max_pixels: int) -> Iterator[dict[str, Any]]:
    """``rows`` with the prompt's screenshot (``images[0]``) within ``max_pixels`` (the tool's cap, so every
    screenshot of an episode costs the same tokens); ``extra_info.image_size`` stays the screen's size."""
    from PIL import Image

    for row in rows:
        image = Image.open(io.BytesIO(row["images"][0]["bytes"]))
        capped = cap_screenshot(image, max_pixels)
        yield row if capped is image else dict(row, images=[{"bytes": _png(capped)}])



def write_parquet(rows: Iterable[dict[str, Any]], path: Path, *, label: str, batch_rows: int = 32,
                  total: int | None = None) -> int:
    """Stream ``rows`` to ``path`` (see :func:`write_splits`); returns the row count."""
    return write_splits((("train", r) for r in rows), {"train": path}, label=label, batch_rows=batch_rows,
                        total=total)["train"]


def write_splits(keyed_rows: Iterable[tuple[str, dict[str, Any]]], paths: dict[str, Path], *, label: str,
                 batch_rows: int = 32, total: int | None = None) -> dict[str, int]:
    """Stream ``(split, row)`` pairs to ``paths[split]`` in row groups of ``batch_rows``, every file atomically (none
    is published unless all are complete), with a progress bar (``total``: the rows expected, when known, so a log
    shows percentages); returns the row count per split. The first row group of a file fixes its schema."""
    import contextlib

    import pyarrow as pa
    import pyarrow.parquet as pq
    from core.console import progress_bar

    from core.io import atomic_path

    counts = dict.fromkeys(paths, 0)
    batches: dict[str, list] = {k: [] for k in paths}
    writers: dict[str, Any] = dict.fromkeys(paths)
    with contextlib.ExitStack() as stack:
        tmps = {k: stack.enter_context(atomic_path(p)) for k, p in paths.items()}
        try:
            for key, row in progress_bar(keyed_rows, desc=label, unit="row", total=total):
                batches[key].append(dict(row, extra_info=_arrow_safe(row["extra_info"])))
                if len(batches[key]) == batch_rows:
                    writers[key] = _write_batch(writers[key], batches[key], tmps[key], pa, pq)
                    counts[key], batches[key] = counts[key] + len(batches[key]), []
            for key, batch in batches.items():
                if batch:
                    writers[key] = _write_batch(writers[key], batch, tmps[key], pa, pq)
                    counts[key] += len(batch)
        finally:
            for writer in writers.values():
                if writer is not None:
                    writer.close()
        for key, n in counts.items():
            if n == 0:
                raise DataError(f"no rows for {paths[key]}")
    return counts


def with_validation(rows: Iterable[dict[str, Any]], share: float) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(split, row)``: rows spread evenly into ``test`` (the validation file verl's ``data.val_files`` reads) at
    ``share`` of the rows (row i goes there when floor((i + 1) * share) > floor(i * share)), the rest ``train``.
    At least one validation row: when none fell there, the last row does (and, if it is the only row, it is also
    the one training row)."""
    pending, n_val, i = None, 0, -1
    for i, row in enumerate(rows):
        if pending is not None:
            yield "train", pending
            pending = None
        if int((i + 1) * share) > int(i * share):
            n_val += 1
            yield "test", _as_validation(row)
        else:
            pending = row
    if pending is not None:
        if n_val == 0:
            if i == 0:
                yield "train", pending
            yield "test", _as_validation(pending)
        else:
            yield "train", pending


def _as_validation(row: dict[str, Any]) -> dict[str, Any]:
    return dict(row, extra_info={**row["extra_info"], "split": "test"})


def _write_batch(writer, batch, tmp, pa, pq):
    table = pa.Table.from_pylist(batch, schema=writer.schema if writer is not None else None)
    writer = writer or pq.ParquetWriter(tmp, table.schema)
    writer.write_table(table)
    return writer


def _arrow_safe(extra: dict[str, Any]) -> dict[str, Any]:
    """``extra_info`` with every row's keys present (arrow needs one struct type per column)."""
    return {"task_id": None, "seed": None, "screenshots": None, "env": None, **extra}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--output_dir", required=True, type=Path)
    p.add_argument("--create_demo", action="store_true", help="online rows: tasks of --env")
    p.add_argument("--env", default="sim-phone", choices=DEMO_ENVS,
                   help="with --create_demo: the simulated phone (default) or MiniWoB++ (make setup-web; a browser)")
    p.add_argument("--suite", default=None, help="with --env miniwob: a MiniWoB++ suite or task names (default "
                                                  "click-type)")
    p.add_argument("--demo_samples", type=int, default=1000, help="train rows of the demo (test: held-out tasks)")
    p.add_argument("--train_split", default="train",
                   help="with --create_demo --env sim-phone: the task split of train.parquet (default train; e.g. "
                        "agent_train, docs/curriculum.md)")
    p.add_argument("--test_split", default="test",
                   help="with --create_demo --env sim-phone: the task split of test.parquet, the validation rows "
                        "verl's data.val_files reads (default test, the held-out tasks; e.g. agent_val)")
    p.add_argument("--skip", type=int, default=0,
                   help="with --create_demo: leave out the train split's first K tasks (e.g. those SFT used)")
    p.add_argument("--test_samples", type=int, default=None,
                   help="with --create_demo: rows of test.parquet (default: a tenth of --demo_samples, at least 1)")
    p.add_argument("--input_file", type=Path, help="logged trajectories: .jsonl or a unified .parquet")
    p.add_argument("--screen_width", type=int, default=999, help="x extent of the JSONL action coordinates")
    p.add_argument("--screen_height", type=int, default=999, help="y extent of the JSONL action coordinates")
    p.add_argument("--recipe", type=Path, default=DEFAULT_RECIPE,
                   help="the agent recipe file training reads (its grid, max_screenshot_pixels and prompt; default "
                        "verl/gui_agent/recipe.yaml)")
    p.add_argument("--grid", default=None, choices=list(GRIDS), help="coordinate grid (default: the recipe's)")
    p.add_argument("--max_screenshot_pixels", type=int, default=None,
                   help="pixel cap of the prompt's screenshot (default: the recipe's max_screenshot_pixels, 614,400 = "
                        "600 Qwen3-VL tokens; 0 = full screens)")
    p.add_argument("--val_share", type=float, default=0.05,
                   help="with --input_file: share of the trajectories written to test.parquet (verl's "
                        "data.val_files), spread evenly; at least one (default 0.05)")
    args = p.parse_args(argv)
    if not 0 <= args.val_share < 1:
        p.error(f"--val_share must be in [0, 1), got {args.val_share}")
    if args.create_demo == (args.input_file is not None):
        p.error("give exactly one of --create_demo and --input_file")
    given = {k: v for k, v in (("grid", args.grid), ("max_screenshot_pixels", args.max_screenshot_pixels))
             if v is not None}
    try:
        recipe = AgentRecipe.from_mapping(given, source="options", base=AgentRecipe.load(args.recipe))
    except AgentRecipeError as e:
        p.error(str(e).replace("options: ", "--"))
    cap, grid = recipe.max_screenshot_pixels, recipe.coordinate_grid
    out = args.output_dir
    if out.exists() and not out.is_dir():
        p.error(f"--output_dir {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        p.error(f"--output_dir {out}: cannot create it: {e.strerror or e}")
    try:
        if args.create_demo:
            if args.demo_samples < 1:
                p.error("--demo_samples must be >= 1")
            if args.skip < 0:
                p.error(f"--skip must be >= 0, got {args.skip}")
            if args.test_samples is not None and args.test_samples < 1:
                p.error(f"--test_samples must be >= 1, got {args.test_samples}")
            if args.env == "sim-phone":
                from core.rollout.envs import get_env

                splits = get_env("sim-phone").splits
                for option, split in (("--train_split", args.train_split), ("--test_split", args.test_split)):
                    if split not in splits:
                        p.error(f"{option} {split!r}: not a sim-phone split ({', '.join(splits)})")
            demo = {"env_name": args.env, "suite": args.suite, "recipe": recipe}
            n_train = write_parquet(with_capped_screenshot(
                demo_rows(args.demo_samples, args.train_split, grid, skip=args.skip, **demo), cap),
                out / "train.parquet", label="train", total=args.demo_samples)
            test_samples = args.test_samples or max(1, args.demo_samples // 10)
            n_test = write_parquet(with_capped_screenshot(
                demo_rows(test_samples, args.test_split, grid, n_train, **demo), cap),
                out / "test.parquet", label="test", total=test_samples)
            print(f"wrote {out / 'train.parquet'} ({n_train} rows) and {out / 'test.parquet'} ({n_test} rows)")
        else:
            src_path = args.input_file
            if src_path.suffix == ".parquet":
                rows = unified_rows(src_path, recipe)
            elif src_path.suffix == ".jsonl":
                if args.screen_width < 1 or args.screen_height < 1:
                    p.error("--screen_width/--screen_height must be >= 1")
                rows = jsonl_rows(src_path, CoordinateGrid.fixed(args.screen_width, args.screen_height), recipe)
            else:
                p.error(f"--input_file must be .jsonl or .parquet, got {src_path.name}")
            counts = write_splits(with_validation(with_capped_screenshot(rows, cap), args.val_share),
                                  {"train": out / "train.parquet", "test": out / "test.parquet"}, label=src_path.name)
            print(f"wrote {out / 'train.parquet'} ({counts['train']} rows) and {out / 'test.parquet'} "
                  f"({counts['test']} validation rows)")
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
