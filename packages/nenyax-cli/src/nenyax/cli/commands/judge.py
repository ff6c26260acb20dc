"""``nenyax judge RUN --judge NAME[?options] --out NEW``: a recorded run judged again, nothing replayed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import attrs
import click
import orjson

from nenyax.core import UsageError, judge_uses
from nenyax.core.engine.rejudging import agreement, rejudge_run


@click.command("judge")
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--judge",
    "judges",
    multiple=True,
    required=True,
    help="A judge and its options, NAME?option=value&... (repeat for several): e.g. 'llm?rubric=...'.",
)
@click.option(
    "--score",
    default="native",
    show_default=True,
    help="How the score is composed: native, a judge's label, sum?LABEL=WEIGHT&..., gate?on=LABEL&then=LABEL.",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="The new run directory.")
@click.option("--against", help="Report each judge's agreement with this verdict (e.g. native).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def judge_command(
    run: Path, judges: tuple[str, ...], score: str, out: Path, against: str | None, as_json: bool
) -> None:
    """Judge every episode of RUN again with each --judge, and write them, judged, as a new run in --out."""
    uses = judge_uses(judges)
    if against is not None and against not in ("native", *(use.label for use in uses)):
        msg = f"--against {against!r} is no verdict of this judging: name native or a judge's label."
        raise UsageError(msg)
    done = asyncio.run(rejudge_run(run, out, judges, scoring=score))
    agreements = [agreement(done.trajectories, against, use.label) for use in uses if against not in (None, use.label)]
    summary = done.summary
    if as_json:
        data = {
            "run_dir": str(done.run_dir),
            "episodes": len(done.trajectories),
            "mean": summary.mean,
            "statuses": dict(summary.statuses),
            "agreement": [attrs.asdict(a) for a in agreements],
        }
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        return
    click.echo(f"{len(done.trajectories)} episode(s) judged again -> {done.run_dir}")
    mean = "none" if summary.mean is None else f"{summary.mean:.3f}"
    click.echo(f"mean score {mean}; " + ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())))
    for found in agreements:
        kappa = "undefined" if found.kappa is None else f"{found.kappa:.2f}"
        click.echo(
            f"{found.second} against {found.first}: agree on {found.agreed} of {found.episodes} "
            f"({found.rate:.0%}), Cohen's kappa {kappa}; "
            + ", ".join(f"{word} {count}" for word, count in found.confusion.items())
        )
        for trajectory_id, first, second in found.disagreements:
            click.echo(f"  {trajectory_id}: {found.first} {first:g}, {found.second} {second:g}")
