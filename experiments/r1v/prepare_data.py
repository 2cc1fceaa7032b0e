"""R1-V-GUI-agent's training set: about 2k AITW steps sampled from Aguvis stage-2 ``aitw-l1.json``.

    python experiments/r1v/prepare_data.py --input Data/aguvis-stage2/aitw-l1.json \\
        --images Data/aguvis-stage2/aitw-v1/images --output Data/r1v [--samples 2000] [--seed 0] [--recipe R]

The Aguvis conversations are read by the core ``aitw`` reader (records it cannot use -- no image, an answer
that is not a pyautogui / mobile call -- are counted and skipped by reason). A uniform sample of ``--samples``
steps is kept (reservoir sampling: the same input and seed give the same rows in the same order; R1-V
published neither its sampling nor a seed, so both are this project's choice) and written, atomically, to
``<output>/<name>.hf`` (``datasets.save_to_disk``) with R1-V's columns (``dataset/raw_load_data.py`` @ ee820b2):

- ``problem``: the human turn verbatim (instruction + previous actions); ``solution``: ``<answer>`` + the
  assistant's call (``pyautogui.click(x=0.963, y=0.064)``, fractions of the screen) + ``</answer>``;
- ``image``: the screenshot, stored at its ``smart_resize`` size for the recipe's pixel bounds (R1-V's
  ``min_pixels`` 3136, ``max_pixels`` 501,760 in :data:`RECIPE`), the bounds the trainer's processor gets from the
  same recipe, so it leaves the image unchanged (answers are fractions of the screen: resizing moves no
  coordinate);
- for ``VLM-R1/grpo.py``: ``prompt`` (R1-V's ``QUESTION_TEMPLATE`` around the problem, the ``<image>`` text
  removed because trl inserts the image block), ``ground_truth`` (= ``solution``, scored by the ``r1v_*``
  rewards) and ``extra_info`` (``id``, ``image_size`` original and ``resized_size``, W x H pixels).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.append(str(REPO))  # the repository: core.interpreter under any Python
from core.interpreter import require  # noqa: E402

require("datasets")

#: The R1-V recipe (trl --config of VLM-R1/grpo.py); its min/max_pixels are the images' bounds.
RECIPE = REPO / "recipes" / "aguvis_7b_720p" / "grpo" / "config_r1v_trl.yaml"
#: R1-V's training prompt around the problem (grpo_gui.py, make_conversation_image).
QUESTION_TEMPLATE = ("{Question}  Output the thinking process in <think> </think> and final answer(functions) in "
                     "<answer> </answer> tags.")


def sample_steps(steps: Iterable, k: int, seed: int) -> list:
    """A uniform sample of ``k`` items in input order (reservoir sampling, Algorithm R), reproducible by ``seed``."""
    rng = random.Random(seed)
    kept: list[tuple[int, object]] = []
    for i, step in enumerate(steps):
        if i < k:
            kept.append((i, step))
        elif (j := rng.randint(0, i)) < k:
            kept[j] = (i, step)
    return [step for _, step in sorted(kept, key=lambda t: t[0])]


def r1v_row(step, bounds: tuple[int, int]) -> dict:
    """One dataset row of an Aguvis Step (``core.schema.Step`` from the ``aitw`` reader), the image resized
    within ``bounds`` (min, max pixels)."""
    from core.data.export.common import IMAGE_PLACEHOLDER
    from core.data.export.images import resize_image
    from core.geometry import ImageGeometry

    w, h = step.image_size
    geometry = ImageGeometry.for_model(w, h, min_pixels=bounds[0], max_pixels=bounds[1])
    data = step.image if isinstance(step.image, bytes) else Path(step.image).read_bytes()
    problem = step.extra["question"]
    solution = f"<answer>{step.extra['answer']}</answer>"
    text = QUESTION_TEMPLATE.format(Question=problem.replace(IMAGE_PLACEHOLDER, "").strip())
    return {"id": step.id, "problem": problem, "solution": solution, "ground_truth": solution,
            "image": {"bytes": resize_image(data, geometry), "path": None},
            "prompt": [{"role": "user", "content": text}],
            "extra_info": {"id": step.id, "image_size": [w, h],
                           "resized_size": [geometry.resized_width, geometry.resized_height]}}


def write_dataset(rows: Iterator[dict], out: Path) -> int:
    """Save the rows as a ``datasets`` folder at ``out`` (atomic: nothing under the name until complete)."""
    import datasets

    from core.io import atomic_path

    features = datasets.Features({
        "id": datasets.Value("string"), "problem": datasets.Value("string"), "solution": datasets.Value("string"),
        "ground_truth": datasets.Value("string"), "image": datasets.Image(),
        "prompt": [{"role": datasets.Value("string"), "content": datasets.Value("string")}],
        "extra_info": {"id": datasets.Value("string"), "image_size": datasets.Sequence(datasets.Value("int64")),
                       "resized_size": datasets.Sequence(datasets.Value("int64"))},
    })
    table = list(rows)
    ds = datasets.Dataset.from_list(table, features=features)
    with atomic_path(out) as tmp:
        ds.save_to_disk(str(tmp), num_shards=1)
    return len(table)


def prepare(input_path: Path, output: Path, *, images: Path | None, samples: int, seed: int,
            name: str | None = None, recipe: Path = RECIPE) -> tuple[Path, int, object]:
    """Read, sample and write; returns (dataset folder, rows written, the reader's ConversionSummary)."""
    from core.console import progress_bar

    from core.data.ingest import READERS
    from core.data.summary import ConversionSummary
    from core.recipes import recipe_pixel_bounds

    bounds = recipe_pixel_bounds(recipe)
    summary = ConversionSummary()
    steps = READERS["aitw"](input_path, images_dir=images, skip_missing=True, summary=summary)
    aguvis = (s for s in progress_bar(steps, desc="reading", unit=" steps", mininterval=1.0)
              if "question" in s.extra)
    kept = sample_steps(aguvis, samples, seed)
    out = Path(output) / f"{name or f'{Path(input_path).stem}-{samples}'}.hf"
    n = write_dataset((r1v_row(s, bounds) for s in kept), out)
    return out, n, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, required=True, help="Aguvis aitw-l1.json (or a folder of them)")
    parser.add_argument("--images", type=Path, help="folder the records' image names resolve in")
    parser.add_argument("--output", type=Path, required=True, help="folder for <name>.hf")
    parser.add_argument("--samples", type=int, default=2000, help="steps kept (R1-V: 2k) [default: 2000]")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed [default: 0]")
    parser.add_argument("--name", help="dataset folder name [default: <input stem>-<samples>]")
    parser.add_argument("--recipe", type=Path, default=RECIPE, help="recipe whose min/max_pixels bound the images")
    args = parser.parse_args(argv)
    if args.samples < 1:
        parser.error("--samples must be >= 1")
    sys.path.insert(0, str(REPO))
    try:
        out, n, summary = prepare(args.input, args.output, images=args.images, samples=args.samples,
                                  seed=args.seed, name=args.name, recipe=args.recipe)
    except (FileNotFoundError, ValueError) as e:  # ValueError: core.recipes.RecipeError
        parser.exit(2, f"error: {e}\n")
    print(summary.render())
    print(f"wrote {n} rows to {out}")
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
