"""``gui-agent eval`` (one prediction file), ``gui-agent eval-report`` (a folder named like GUI-R1's outputs) and
``gui-agent eval-compare`` (two runs side by side)."""

from __future__ import annotations

from pathlib import Path

import typer

from core.console import make_console, print_error, progress_bar, quoted, styled
from core.eval.registry import BENCHMARKS
from core.presets import PRESETS, REPRODUCED_WITHIN

_BENCH_HELP = "Benchmark: " + ", ".join(BENCHMARKS) + "."
_MODE_HELP = "strict (the field's definition, default) or guir1 (GUI-R1's evaluator, number for number)."
_READING_HELP = ("With --preset: authors (default: parse and map each answer as the model's authors' own code does, "
                 "core.authors) or tolerant (this project's parsers: more spellings accepted, exact mapping).")


def _fail(msg: str) -> None:
    print_error(msg)
    raise typer.Exit(2)


#: The files ``eval-report`` writes into ``--out`` (listed in ``.eval-report.files.json``, :mod:`core.outputs`).
REPORT_FILES: tuple[str, ...] = ("report.json", "report.md", "plots/*_bars.png", "plots/*_confusion.png",
                                 "gallery/*/index.html", "gallery/*/img/*.png")

#: At most this many benchmark inputs are named in a result's ``data``.
MAX_INPUTS_NAMED = 5


def _score(paths: list[Path], benchmark: str, mode: str, max_failures: int, preset: str | None = None,
           reading: str = "authors"):
    """Score ``paths``; returns ``(EvalResult, its JSON with "data")``: the prediction files and the benchmark
    files their rows were predicted from (``image_source``), so every table can name what it ran on. With
    ``preset`` every row's raw ``pred`` is re-parsed with that model preset's parser and frame, read as
    ``reading`` says (``data.reading``)."""
    from core.eval.io import PredictionFileError, Record, iter_records
    from core.eval.metrics import score_records

    inputs: dict[str, None] = {}
    reparse = None
    if preset is not None:
        from core.presets import get_preset, reparse_row

        try:
            chosen = get_preset(preset)
            chosen.template_for(benchmark)  # infer's rule: a grounding-only preset has no navigation answers
        except ValueError as e:
            _fail(f"--preset: {e}")

        def reparse(rec):
            return Record(rec.where, reparse_row(rec.row, chosen, benchmark, reading))

    def noting_inputs(records):
        for rec in records:
            if reparse is not None:
                rec = reparse(rec)
            src = rec.row.get("image_source")
            if isinstance(src, str) and src and len(inputs) < MAX_INPUTS_NAMED:
                inputs.setdefault(Path(src).name)
            yield rec

    try:
        # a bar only on a terminal: logs get no empty "0 rows" line before each table
        records = progress_bar(noting_inputs(iter_records(paths)), desc=f"{benchmark} ({mode})", unit=" rows", leave=False)
        result = score_records(records, benchmark, mode, max_failures=max_failures)
    except (PredictionFileError, ValueError) as e:
        _fail(str(e))
    except OSError as e:  # a prediction path too long, unreadable, a folder: one line naming it (bounded)
        from core.outputs import error_line

        _fail(error_line(e))
    data = {"predictions": [p.name for p in paths], "inputs": list(inputs)}
    if preset is not None:
        data["preset"], data["reading"] = preset, reading
    return result, {**result.to_json(), "data": data}


def _check_reading(reading: str) -> None:
    """``--reading`` is one of :data:`core.authors.READINGS`; one error line and exit 2 otherwise."""
    if reading not in ("authors", "tolerant"):
        _fail(f"--reading {quoted(reading)}: unknown; known: authors, tolerant")


def _refuse_existing_outputs(outputs: list[tuple[str, Path | None]], overwrite: bool) -> None:
    """Before any scoring: each given ``(option, path)`` file output is new or ``overwrite``, and can be written
    (:mod:`core.outputs`); one ``error:`` line and exit 2 otherwise."""
    from core.outputs import refuse_existing, refuse_unwritable, user_errors

    with user_errors():
        for option, path in outputs:
            if path is not None:
                refuse_existing(path, overwrite=overwrite, option=option)
                refuse_unwritable(path, option=option)


def _claim_folders(folders: list[tuple[str, str, Path | None, tuple[str, ...]]], overwrite: bool) -> list:
    """Before any scoring: each given ``(option, command, folder, patterns)`` folder output is checked and taken
    (:func:`core.outputs.claim_folder`: a file of an earlier run is replaced only with ``overwrite``, a file
    this command did not write never); the :class:`~core.outputs.FolderFiles` to write through (None where no
    folder was given). One ``error:`` line and exit 2 on a refusal."""
    from core.outputs import check_folder, claim_folder, user_errors

    with user_errors():
        for option, command, folder, patterns in folders:  # every folder checked before any is cleared
            if folder is not None:
                check_folder(folder, command, patterns, overwrite=overwrite, option=option)
        return [None if folder is None else claim_folder(folder, command, patterns, overwrite=overwrite,
                                                         option=option)
                for option, command, folder, patterns in folders]


def _pictures(result, plots, gallery, image_root: Path | None, console) -> None:
    """The plots and the failure gallery of ``result`` into ``plots`` / ``gallery`` (folders, or the
    :class:`~core.outputs.FolderFiles` of a claimed folder output)."""
    if plots is not None:
        from core.eval.plots import PlotsUnavailable, plot_result

        try:
            for p in plot_result(result.to_json(), plots):
                console.print(f"plot: {p}")
        except PlotsUnavailable as e:
            console.print(styled("plots skipped:", "yellow"), str(e))
    if gallery is not None:
        from core.eval.gallery import write_gallery

        info = write_gallery(result.failures, gallery, title=f"{result.benchmark} failures ({result.mode})",
                             image_root=image_root)
        refused = (f", {info['refused']} image paths outside the prediction file's folder and --image-root refused"
                   if info["refused"] else "")
        console.print(f"gallery: {info['html']} ({info['rows']} failures, {info['with_image']} with screenshots"
                      + (", screenshots not available for the others" if info["without_image"] else "")
                      + refused + ")")


def _run_name(json_out: Path | None, predictions: Path) -> str:
    """A run's default name: what ``eval-compare`` names a ``--json`` file by (its stem), else the predictions'
    stem, or their folder's name when the file is named after its benchmark (``ckpt/screenspot_test.json``)."""
    from core.eval.registry import benchmark_for_file

    if json_out is not None:
        return json_out.stem
    if benchmark_for_file(predictions) is None:
        return predictions.stem
    return predictions.resolve().parent.name


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_cmd(
        predictions: list[Path] = typer.Option(..., "--predictions", help="Prediction JSONL file (repeatable)."),
        benchmark: str = typer.Option(..., "--benchmark", help=_BENCH_HELP),
        mode: str = typer.Option("strict", "--mode", help=_MODE_HELP),
        json_out: Path | None = typer.Option(None, "--json", help="Write every number and its counts here."),
        markdown: Path | None = typer.Option(None, "--markdown", help="Write the paper-style table here."),
        plots: Path | None = typer.Option(None, "--plots", help="Folder for the bar chart + confusion matrix."),
        gallery: Path | None = typer.Option(None, "--gallery", help="Folder for the HTML gallery of failures."),
        image_root: Path | None = typer.Option(None, "--image-root", help="Where relative image paths live."),
        max_failures: int = typer.Option(200, "--max-failures", help="Failures kept for the gallery."),
        compare: Path | None = typer.Option(None, "--compare", help="A previous --json/report.json to compare."),
        name: str | None = typer.Option(None, "--name", help="Run name in tables [default: the --json file's name, "
                                        "else the first prediction file's, else its folder's]."),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace existing --json and --markdown "
                                        "files, and the --gallery and --plots files an earlier eval wrote (only "
                                        "those)."),
        preset: str | None = typer.Option(None, "--preset", help=(
            f"Model preset (core.presets: {', '.join(PRESETS)}): re-parse every row's raw 'pred' with its parser "
            "and coordinate frame, whatever the pred_* fields say.")),
        reading: str = typer.Option("authors", "--reading", help=_READING_HELP),
    ) -> None:
        """Score one benchmark's predictions (GUI-R1's prediction rows, or this project's with raw text)."""
        from core.eval.report import (
            load_run,
            make_run,
            markdown_report,
            print_compare,
            print_result,
            write_json,
        )

        from core.eval.gallery import GALLERY_FILES
        from core.eval.plots import plot_files

        _refuse_existing_outputs([("--json", json_out), ("--markdown", markdown)], overwrite)
        plot_folder, gallery_folder = _claim_folders([("--plots", "eval-plots", plots, plot_files(benchmark)),
                                                      ("--gallery", "eval-gallery", gallery, GALLERY_FILES)],
                                                     overwrite)
        _check_reading(reading)
        console = make_console()
        result, data = _score(predictions, benchmark, mode, max_failures if gallery else 0, preset, reading)
        print_result(data, console)
        run = make_run(name or _run_name(json_out, predictions[0]), mode, [data])
        from core.outputs import user_errors

        with user_errors():  # checked writable before scoring; a disk that fills now is one line too
            if json_out is not None:
                console.print(f"json: {write_json(data, json_out)}")
            if markdown is not None:
                from core.eval.report import write_text

                console.print(f"markdown: {write_text(markdown_report(run), markdown)}")
        _pictures(result, plot_folder, gallery_folder, image_root, console)
        if compare is not None:
            try:
                print_compare(load_run(compare), run, console)
            except ValueError as e:
                _fail(str(e))

    @app.command("eval-report")
    def eval_report_cmd(
        pred_dir: Path = typer.Option(..., "--pred-dir", help="Folder of prediction files named like GUI-R1's "
                                      "outputs (<benchmark>_test.json, chunks <benchmark>_test_<a>_<b>_pred.json)."),
        out: Path = typer.Option(..., "--out", help="Output folder: report.json, report.md, plots/, gallery/."),
        mode: str = typer.Option("strict", "--mode", help=_MODE_HELP),
        name: str | None = typer.Option(None, "--name", help="Run name (default: the folder name)."),
        plots: bool = typer.Option(True, "--plots/--no-plots"),
        gallery: bool = typer.Option(True, "--gallery/--no-gallery"),
        image_root: Path | None = typer.Option(None, "--image-root"),
        max_failures: int = typer.Option(100, "--max-failures"),
        benchmark: str | None = typer.Option(None, "--benchmark", help="Score the .json/.jsonl files not named like "
                                             "a benchmark's predictions (e.g. pred.jsonl) as this benchmark."),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace the files an earlier eval-report wrote "
                                       "in --out (only those)."),
        preset: str | None = typer.Option(None, "--preset", help="Model preset: re-parse every row's raw 'pred' "
                                          "with its parser and frame (see gui-agent eval --preset)."),
        reading: str = typer.Option("authors", "--reading", help=_READING_HELP),
    ) -> None:
        """Score every benchmark file of a predictions folder and write the combined report."""
        from core.eval.registry import benchmark_for_file
        from core.eval.report import make_run, markdown_report, print_result, write_json, write_text

        _check_reading(reading)
        console = make_console()
        if not pred_dir.is_dir():
            _fail(f"--pred-dir {pred_dir} is not a folder")
        if benchmark is not None and benchmark not in BENCHMARKS:
            _fail(f"--benchmark {quoted(benchmark)}: unknown; known: {', '.join(BENCHMARKS)}")
        (files,) = _claim_folders([("--out", "eval-report", out, REPORT_FILES)], overwrite)
        groups: dict[str, list[Path]] = {}
        for f in sorted(pred_dir.iterdir()):
            if f.name.startswith("."):  # hidden: run records, temp files
                continue
            b = benchmark_for_file(f)
            if b is not None:
                groups.setdefault(b.name, []).append(f)
            elif f.suffix in (".json", ".jsonl") and f.is_file() and benchmark is not None:
                groups.setdefault(benchmark, []).append(f)
            elif f.suffix in (".json", ".jsonl"):
                console.print(styled(f"skipped {f.name}: not named like a benchmark's predictions "
                                     f"(<benchmark>_test.json; or pass --benchmark NAME)", "yellow"))
        if not groups:
            _fail(f"no prediction files in {pred_dir} (expected e.g. {', '.join(list(BENCHMARKS)[:3])}_test.json, "
                  "or any name with --benchmark NAME)")
        results = []
        for bench in [b for b in BENCHMARKS if b in groups]:
            if mode not in BENCHMARKS[bench].modes:
                console.print(styled(f"{bench}: no {mode} mode (not part of GUI-R1's evaluator); skipped", "yellow"))
                continue
            result, data = _score(groups[bench], bench, mode, max_failures if gallery else 0, preset, reading)
            print_result(data, console)
            _pictures(result, files.sub("plots") if plots else None,
                      files.sub(f"gallery/{bench}") if gallery else None, image_root, console)
            results.append(data)
        run = make_run(name or pred_dir.resolve().name, mode, results)
        console.print(f"json: {write_json(run, files.path('report.json'))}")
        md = markdown_report(run)
        console.print(f"markdown: {write_text(md, files.path('report.md'))}")
        console.print(md)

    @app.command("eval-compare")
    def eval_compare_cmd(
        a: Path = typer.Argument(..., help="First run: report.json or eval --json file."),
        b: Path | None = typer.Argument(None, help="Second run (required without --official)."),
        markdown: Path | None = typer.Option(None, "--markdown", help="Also write the comparison as markdown."),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --markdown."),
        official: bool = typer.Option(False, "--official", help=(
            "Instead of a second run: the published numbers of the models of the run's --preset on its benchmarks "
            "(core.presets.OFFICIAL_RESULTS), each beside the run's accuracy in the metric the tables publish "
            "(UI-Vision final_avg, MMBench-GUI L2 average, OSWorld-G overall, overall_no_refusal for a model that "
            f"does not refuse; else overall); reproduced = at most "
            f"{REPRODUCED_WITHIN:g} points below (ClawGUI-Eval's criterion), never for a mean over only some "
            "settings or a value outside [0, 1] (shown as -, the note says why).")),
    ) -> None:
        """Two runs side by side, with the difference in points; or one run beside the published numbers."""
        from core.eval.report import compare_markdown, load_run, print_compare, write_text
        from core.outputs import user_errors

        if (b is None) != official:
            _fail("eval-compare needs a second run or --official, not both")
        _refuse_existing_outputs([("--markdown", markdown)], overwrite)

        try:
            ra = load_run(a)
            rb = load_run(b) if b is not None else None
        except ValueError as e:
            _fail(str(e))
        if rb is None:
            table = _official_table(ra)
            typer.echo(table)
            if markdown is not None:
                with user_errors():
                    write_text(table, markdown)
            return
        if ra["name"] == rb["name"]:  # two runs of one name (e.g. two `.../huggingface` checkpoints): their files
            ra, rb = {**ra, "name": str(a)}, {**rb, "name": str(b)}
        print_compare(ra, rb, make_console())
        if markdown is not None:
            with user_errors():
                write_text(compare_markdown(ra, rb), markdown)


def _official_table(run: dict) -> str:
    """``run``'s accuracy beside the published numbers of its preset's models (a markdown table, %, written by
    :func:`core.markdown.md_table`, so a run name with ``|`` or a line break stays one cell); one error line and
    exit 2 when the run was not scored with a preset."""
    from core.markdown import Md, md_code, md_table, md_text
    from core.presets import OFFICIAL_SOURCES, benchmark_title, compare_official, shown_official

    try:
        rows = compare_official(run)
    except ValueError as e:
        _fail(str(e))
    name = run["name"]
    if not rows:
        return md_text(f"{name}: no published number for its preset on its benchmarks ({', '.join(run['results'])})")
    header = ["benchmark", "model", "official %", f"{name} %", "Δ",
              Md(f"reproduced (>= official - {REPRODUCED_WITHIN:g})"), "source", "metric", "note"]
    cells = [[benchmark_title(c.official.benchmark), c.official.model, shown_official(c.official.value),
              Md("-") if c.run is None else f"{c.run:.2f}", Md("-") if c.delta is None else f"{c.delta:+.2f}",
              "yes" if c.reproduced else "no", Md(OFFICIAL_SOURCES[c.official.source]), md_code(c.metric), c.note]
             for c in rows]
    return md_table(header, cells)
