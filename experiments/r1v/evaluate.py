"""R1-V-GUI-agent's AITW evaluation (``eval/test_aitw.py`` @ ee820b2) through ``core``: predictions, then scores.

    python experiments/r1v/evaluate.py --model saves/r1v/think --dataset Data/r1v/aitw-l1-2000.hf \\
        --output outputs/r1v/think [--backend hf|vllm] [--data-parallel-size 8] [--limit N]

As R1-V does: the user turn is the screenshot + the ``problem`` verbatim (no template), greedy decoding, 1024 new
tokens, on the prepared steps (R1-V scores the 2k training steps themselves). Generation runs on a
``core.inference`` backend (``hf``: CPU / one GPU; ``vllm``: ``--data-parallel-size`` Ray actors, one per GPU);
``<output>/predictions.jsonl`` holds one row per step (``id``, ``pred`` raw text, ``solution``, ``image_size``),
appended batch by batch and resumed by ``id`` when rerun. Scores come from ``gui-agent eval --benchmark aitw``
(:mod:`core.eval.aitw`): ``type`` and ``param`` are R1-V's "Type accuracy" / "parameter accuracy" (identical
call names / identical parameter texts, over all rows), ``sr`` both, plus tolerant variants; written to
``<output>/report.json`` and printed. Not reproduced: R1-V appends ``<|recipient|>`` after the generation prompt
for Aguvis models; here the model writes its own recipient (the call is then found on the line after it).
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from prepare_data import RECIPE, REPO  # noqa: E402  (experiments/r1v is not a package)

#: R1-V's evaluation decoding (test_aitw.py: max_new_tokens=1024, do_sample=False).
MAX_NEW_TOKENS = 1024


def requests(ds, done: set[str]):
    """InferenceRequests of the dataset rows not in ``done``: the screenshot as stored, the problem verbatim."""
    from PIL import Image

    from core.data.export.common import IMAGE_PLACEHOLDER
    from core.geometry import Frame, ImageGeometry
    from core.inference.requests import InferenceRequest, ResizePolicy
    from core.parsers import parse_pyautogui
    from core.recipes import recipe_pixel_bounds
    from core.schema import Step

    low, high = recipe_pixel_bounds(RECIPE)  # the bounds prepare_data.py stored the images at

    import datasets

    for row in ds.cast_column("image", datasets.Image(decode=False)):
        if row["id"] in done:
            continue
        data = row["image"]["bytes"]
        image = Image.open(io.BytesIO(data)).convert("RGB")
        geometry = ImageGeometry.unresized(*image.size)  # stored at its resized size already (prepare_data.py)
        problem = row["problem"]
        text = problem if IMAGE_PLACEHOLDER in problem else f"{IMAGE_PLACEHOLDER}\n{problem}"
        gold = parse_pyautogui(row["solution"].removeprefix("<answer>").removesuffix("</answer>"))
        step = Step.build(row["id"], id=row["id"], image=data, image_size=image.size, instruction=problem,
                          action=gold.action.to_action(geometry, Frame.NORMALIZED), source="aitw",
                          extra={"solution": row["solution"]})
        yield InferenceRequest(step=step, template=None, geometry=geometry, images=None if image is None else [image],
                               policy=ResizePolicy(min_pixels=low, max_pixels=high),
                               messages=[{"role": "user", "content": text}])


def predict(backend, ds, output: Path, *, batch_size: int, limit: int | None = None) -> int:
    """Append prediction rows for the rows of ``ds`` not yet in ``output``; returns how many were written."""
    from itertools import islice

    from core.console import progress_bar

    from core.inference.runner import PredictionWriter, load_done

    done, _ = load_done(output)
    todo = requests(ds, done)
    total = max(0, (limit if limit is not None else len(ds)) - len(done))
    todo = islice(todo, total)
    written = 0
    with PredictionWriter(output) as writer, progress_bar(total=total, unit=" steps") as bar:
        while batch := list(islice(todo, batch_size)):
            gens = backend.generate(batch)
            writer.write_rows([{"id": r.step.id, "pred": g.text, "error": g.error, "solution": r.step.extra["solution"],
                                "image_size": list(r.step.image_size)} for r, g in zip(batch, gens, strict=True)])
            written += len(batch)
            bar.update(len(batch))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="checkpoint folder or hub id")
    parser.add_argument("--dataset", type=Path, required=True, help="prepare_data.py's <name>.hf")
    parser.add_argument("--output", type=Path, required=True, help="folder for predictions.jsonl and report.json")
    parser.add_argument("--backend", choices=("hf", "vllm"), default="hf")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--data-parallel-size", type=int, default=1, help="vllm: engines (Ray actors), one per GPU")
    parser.add_argument("--limit", type=int, help="only the first N steps")
    parser.add_argument("--max-new-tokens", type=int, default=MAX_NEW_TOKENS, help="[default: R1-V's 1024]")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    import datasets

    from core.inference.backends import GenerationConfig, make_backend

    if not (args.dataset / "dataset_info.json").is_file():
        parser.exit(2, f"error: --dataset {args.dataset}: not a saved dataset (run experiments/r1v/prepare_data.py)\n")
    ds = datasets.load_from_disk(str(args.dataset))
    options = {"data_parallel_size": args.data_parallel_size} if args.backend == "vllm" else {}
    backend = make_backend(args.backend, args.model, gen=GenerationConfig(max_new_tokens=args.max_new_tokens),
                           batch_size=args.batch_size, **options)
    predictions = args.output / "predictions.jsonl"
    try:
        predict(backend, ds, predictions, batch_size=args.batch_size, limit=args.limit)
    finally:
        backend.close()
    return subprocess.call([sys.executable, "-m", "core", "eval", "--predictions", str(predictions), "--benchmark",
                            "aitw", "--json", str(args.output / "report.json"), "--name", Path(args.model).name,
                            "--overwrite"],  # the report of the resumed predictions
                           cwd=REPO)


if __name__ == "__main__":
    sys.exit(main())
