"""The terminal report of a finished `nenyax eval` run: the same figures `summary.json` holds."""

from __future__ import annotations

from pathlib import Path

import click

from nenyax.core.engine.summary import Summary


def _f(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def print_summary(summary: Summary, run_dir: Path, player: str) -> None:
    """Mean with its interval, pass@1..K, statuses, tokens and speed, one fact a line."""
    lines = [f"{player}: {summary.episodes} episode(s) of {summary.tasks} task(s) x {summary.samples} sample(s)"]
    if summary.mean is None:
        lines.append("mean score  n/a (no episode was judged)")
    else:
        method = f" {summary.ci_method}" if summary.ci_method else ""
        ci = "" if summary.ci95 is None else f"  95% CI{method} [{_f(summary.ci95[0])}, {_f(summary.ci95[1])}]"
        lines.append(f"mean score  {_f(summary.mean)}{ci}  over {summary.scored} scored episode(s)")
    if summary.pass_at_k:
        at_k = "  ".join(f"pass@{k} {_f(v)}" for k, v in summary.pass_at_k.items())
        lines.append(f"{at_k}  (passed: the judge's verdict, else score >= {summary.pass_threshold:g})")
    counts = "  ".join(f"{name} {n}" for name, n in summary.statuses.items())
    lines.append(f"statuses    {counts}  (only ok and policy_error are scored)")
    lines.append(f"tokens      in {summary.tokens_in}  out {summary.tokens_out}")
    rate = f"{summary.episodes_per_s:.1f} episodes/s" if summary.episodes_per_s is not None else "n/a"
    resumed = f" (after {summary.resumed} already recorded)" if summary.resumed else ""
    lines.append(f"wall time   {_f(summary.wall_s, 2)} s, {rate}{resumed}")
    lines.append(f"run dir     {run_dir}")
    click.echo("\n".join(lines))
