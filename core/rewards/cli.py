"""``gui-agent score``: score a JSONL of completions with a named reward."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("score")
    def score_command(
        input: Path = typer.Option(..., "--input", exists=True, dir_okay=False,
                                   help="JSONL rows with 'completion', 'ground_truth' and optional 'extra_info'."),
        output: Path = typer.Option(..., "--output", help="JSONL to write: each input row plus the reward parts."),
        reward: str = typer.Option("r1gui", "--reward", help="Reward name (see core.rewards.registry)."),
        mode: str = typer.Option(None, "--mode", help="r1gui mode: 'default' (corrected) or 'guir1' (published); gaussian: its format check."),
        format_weight: float = typer.Option(None, "--format-weight", help="Weight of the format part."),
        accuracy_weight: float = typer.Option(None, "--accuracy-weight", help="Weight of the accuracy part."),
        gate_format: bool = typer.Option(False, "--gate-format", help="Format counts only when accuracy > 0."),
        alpha: float = typer.Option(None, "--alpha", help="gaussian: sigma as a fraction of the gold box size "
                                                           "(default 0.5)."),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --output."),
    ) -> None:
        """Add reward/format, reward/accuracy, reward/overall and the other parts to every row; bad rows are
        reported and skipped."""
        from core.io import OutputLockedError
        from core.rewards.scoring import score_file

        options = {k: v for k, v in {"mode": mode, "format_weight": format_weight,
                                     "accuracy_weight": accuracy_weight, "alpha": alpha}.items() if v is not None}
        if gate_format:
            options["gate_format"] = True
        problem = _usage_problem(reward, options)
        if problem:
            typer.echo(f"error: {problem}", err=True)
            raise typer.Exit(2)
        try:
            summary = score_file(input, output, reward, options, overwrite=overwrite)
        except (ValueError, OSError, OutputLockedError) as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        typer.echo(summary.render())
        if summary.written == 0 and summary.read > 0:
            raise typer.Exit(1)


def _usage_problem(reward: str, options: dict) -> str | None:
    """Why ``--reward`` / its options cannot work (one line), or None; checked before any row is read."""
    import inspect

    from core.rewards.gaussian import positive_option
    from core.rewards.r1gui import MODES
    from core.rewards.registry import REWARDS

    spec = REWARDS.get(reward)
    if spec is None:
        return f"unknown --reward {reward!r}; choose one of: {', '.join(REWARDS)}"
    params = inspect.signature(spec.fn).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        unknown = [k for k in options if k not in params]
        if unknown:
            flags = ", ".join("--" + k.replace("_", "-") for k in unknown)
            return f"--reward {reward} takes no {flags}"
    if "mode" in options and options["mode"] not in MODES:
        return f"unknown --mode {options['mode']!r}; choose one of: {', '.join(MODES)}"
    if "alpha" in options:
        try:
            positive_option("alpha", options["alpha"])
        except ValueError:
            return f"--alpha must be a finite number > 0, got {options['alpha']}"
    return None
