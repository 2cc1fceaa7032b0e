"""``gui-agent score``: score a JSONL of completions with a named reward."""

from __future__ import annotations

from pathlib import Path

import typer

from core.console import print_error, quoted


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
        from core.outputs import user_errors
        from core.rewards.scoring import score_file

        options = {k: v for k, v in {"mode": mode, "format_weight": format_weight,
                                     "accuracy_weight": accuracy_weight, "alpha": alpha}.items() if v is not None}
        if gate_format:
            options["gate_format"] = True
        problem = _usage_problem(reward, options)
        if problem:
            print_error(problem)
            raise typer.Exit(2)
        with user_errors():
            summary = score_file(input, output, reward, options, overwrite=overwrite)
        typer.echo(summary.render())
        if summary.written == 0 and summary.read > 0:
            raise typer.Exit(1)


def _usage_problem(reward: str, options: dict) -> str | None:
    """Why ``--reward`` / its options cannot work (one line), or None; checked before any row is read."""
    from core.rewards.r1gui import MODES
    from core.rewards.registry import REWARDS, RewardOptionError, check_options, reward_options

    if reward not in REWARDS:
        return f"unknown --reward {quoted(reward)}; choose one of: {', '.join(REWARDS)}"
    unknown = [k for k in options if k not in reward_options(reward)]
    if unknown:
        return f"--reward {reward} takes no {', '.join('--' + k.replace('_', '-') for k in unknown)}"
    if "mode" in options and options["mode"] not in MODES:
        return f"unknown --mode {quoted(options['mode'])}; choose one of: {', '.join(MODES)}"
    try:
        check_options(reward, options)
    except RewardOptionError as e:
        return f"--{e.option.replace('_', '-')}: {e.reason}"
    return None
