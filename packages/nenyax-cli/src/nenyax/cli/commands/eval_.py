"""``nenyax eval URI``: N tasks x K samples into a run directory, with mean, interval and pass@k."""

from __future__ import annotations

import collections
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import orjson

from nenyax.cli.eval_report import print_summary
from nenyax.cli.params import (
    chosen_options,
    judge_options,
    merged_params,
    model_options,
    model_settings,
    policy_or_model,
)
from nenyax.cli.progress import bar, prepare_model, watching
from nenyax.cli.run_config import COMMANDS_WITH_CONFIG, config_option, settings_to_options
from nenyax.cli.traces import Traces, trace_option
from nenyax.core import (
    Endpoint,
    EpisodeEnded,
    EvalResult,
    EvalSettings,
    Evaluation,
    Observer,
    PolicySettings,
    SettingsDiffer,
    UsageError,
    serde,
)
from nenyax.core.engine.executors import DEFAULT_BACKEND, backend_names
from nenyax.core.engine.rundirs import TRAJECTORIES, read_config


def _split_ids(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in value.split(",") if part]


@click.command("eval")
@click.argument("uri", required=False)
@config_option("A run.toml naming the settings (options and NENYAX_* variables override it).")
@model_options()
@click.option(
    "--tasks", type=click.IntRange(min=1), envvar="NENYAX_TASKS", help="Run the first N tasks (default: all)."
)
@click.option("--task-ids", multiple=True, help="Task ids to run (repeat or separate with commas) instead of --tasks.")
@click.option("--samples", "-k", type=click.IntRange(min=1), envvar="NENYAX_SAMPLES", default=1, show_default=True)
@click.option("--concurrency", type=click.IntRange(min=1), envvar="NENYAX_CONCURRENCY", default=16, show_default=True)
@click.option(
    "--backend",
    type=click.Choice(backend_names()),
    envvar="NENYAX_BACKEND",
    default=DEFAULT_BACKEND,
    show_default=True,
    help="Where episodes run: in this process (asyncio), on worker processes (process) or Ray actors (ray).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    envvar="NENYAX_WORKERS",
    help="Workers for --backend process or ray (default: one per CPU).",
)
@click.option(
    "--ray-address",
    envvar="NENYAX_RAY_ADDRESS",
    help="With --backend ray: the cluster (auto, host:port, ray://host:port; default: a local Ray instance).",
)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds before an episode times out.")
@click.option("--pass-threshold", type=float, default=1.0, show_default=True, help="Score that passes (pass@k).")
@judge_options()
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), help="Run directory (default runs/<time>-<env>)."
)
@click.option("--resume", type=click.Path(file_okay=False, path_type=Path), help="Finish the run in this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or model-loading spinner.")
@trace_option
@click.pass_context
def eval_command(ctx: click.Context, **opts: Any) -> None:
    """Evaluate a model or policy on many tasks of URI and record every episode in a run directory."""
    resume: Path | None = opts.pop("resume")
    as_json: bool = opts.pop("as_json")
    # Where episodes run never changes what they record, so run.toml does not hold it (a resumed run
    # may pick another backend).
    backend: str = opts.pop("backend")
    workers: int | None = opts.pop("workers")
    ray_address: str | None = opts.pop("ray_address")
    trace: str | None = opts.pop("trace")  # where spans go is no part of what the run measures: not in run.toml
    if workers is not None and backend == "asyncio":
        msg = "--workers sizes the process and ray backends; add --backend process (or --backend ray)."
        raise UsageError(msg)
    if ray_address is not None and backend != "ray":
        msg = "--ray-address says which Ray cluster plays the episodes; add --backend ray."
        raise UsageError(msg)
    quiet: bool = opts.pop("quiet") or as_json
    out: Path | None = opts.pop("out")
    if resume is not None:
        if out is not None:
            msg = "--resume finishes a run in its own directory; drop --out."
            raise UsageError(msg)
        _fill_from_run(ctx, resume, opts)
    elif out is not None and out.is_dir() and any(out.iterdir()):
        msg = f"{out} already holds files; name a new directory with --out, or finish that run with --resume {out}."
        raise UsageError(msg)
    settings = _settings(ctx, opts)
    traces = Traces(trace)  # an unknown tracer or a missing key: refused before the run starts
    try:
        try:
            evaluation = Evaluation.start(
                settings, out=out, resume=resume, backend=backend, workers=workers, address=ray_address
            )
        except SettingsDiffer as exc:
            msg = (
                f"--resume finishes the run {exc.run_dir}/run.toml describes; it differs in {', '.join(exc.changed)}. "
                "Drop those options, or start a new run with --out."
            )
            raise UsageError(msg) from None
        result = _play(evaluation, local=backend == "asyncio", as_json=as_json, quiet=quiet, observers=traces.observers)
    finally:
        traces.close()  # flushed; spans lost are said once, the run unchanged
    if as_json:
        data = {"run_dir": str(result.run_dir), **serde.to_data(result.summary)}
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    else:
        print_summary(result.summary, result.run_dir, settings.player)


def _play(evaluation: Evaluation, *, local: bool, as_json: bool, quiet: bool, observers: list[Any]) -> EvalResult:
    """Say what is about to run, load the model in sight, and play with a progress bar."""
    settings, out = evaluation.settings, evaluation.run_dir
    if not as_json:
        click.echo(f"{settings.uri}: {evaluation.task_count} task(s) x {settings.samples} sample(s) -> {out}", err=True)
        if evaluation.cut_off:
            click.echo(f"resuming: {evaluation.cut_off}", err=True)
        if evaluation.recorded or evaluation.cut_off:
            click.echo(
                f"resuming: {evaluation.recorded} episode(s) already recorded, {len(evaluation.jobs)} to play", err=True
            )
    try:
        if isinstance(evaluation.player, Endpoint) and local:  # workers load their own copy
            prepare_model(evaluation.player, quiet)  # the load is its own wait, not the first episode's
    except BaseException:
        evaluation.close()
        raise
    with bar("episodes", len(evaluation.jobs), quiet) as advance:
        # No drawing per episode unless someone watches.
        progress = [_Progress(advance, out / TRAJECTORIES)] if watching(quiet) else []
        try:
            return evaluation.run([*progress, *observers])
        except KeyboardInterrupt:
            # Every finished episode is already on disk; say how to finish, then stop as an interrupt does.
            click.echo(f"Interrupted: finish this run with `nenyax eval --resume {out}`.", err=True)
            raise


class _Progress(Observer):
    """Draws the bar as each episode ends, with the status counts so far and the size of the record."""

    def __init__(self, advance: Callable[..., None], record: Path) -> None:
        self.advance = advance
        self.record = record
        self.statuses: collections.Counter[str] = collections.Counter()

    def on_episode_ended(self, event: EpisodeEnded) -> None:
        self.statuses[event.trajectory.status.value] += 1
        counts = "  ".join(f"{name} {n}" for name, n in sorted(self.statuses.items()))
        # The record's size as it grows: a run of image episodes can reach gigabytes before it ends.
        try:
            size = f"  {readable_size(self.record.stat().st_size)} written"
        except OSError:
            size = ""
        self.advance(note=counts + size)


def readable_size(size: int) -> str:
    """``912 B``, ``3.4 kB``, ``249.1 MB``, ``1.2 GB`` (decimal units)."""
    if size < 1000:
        return f"{size} B"
    scaled = float(size)
    for unit in ("kB", "MB"):
        scaled /= 1000
        if round(scaled, 1) < 1000:
            return f"{scaled:.1f} {unit}"
    return f"{scaled / 1000:.1f} GB"


def _fill_from_run(ctx: click.Context, resume: Path, opts: dict[str, Any]) -> None:
    """The run's settings fill in every option the command line (or its variable) left unset."""
    stored = dict(read_config(resume).settings)
    wrote = stored.get("command", "eval")  # runs written before the key existed are eval's
    if wrote not in COMMANDS_WITH_CONFIG:
        msg = f"{resume}/run.toml names command = {wrote!r}; it is not a run nenyax wrote."
        raise UsageError(msg)
    if wrote != "eval":
        msg = f"{resume} was written by `nenyax {wrote} --save`; only a run of `nenyax eval` can be resumed."
        raise UsageError(msg)
    stored.pop("schema_version", None)
    from_run = settings_to_options(stored)
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    for name, value in from_run.items():
        if name in opts and ctx.get_parameter_source(name) not in given:
            opts[name] = value
    for name in ("task_ids", "tasks", "model", "policy"):  # absent from the stored run: not part of it
        if name not in from_run and ctx.get_parameter_source(name) not in given:
            opts[name] = () if name == "task_ids" else None


def _settings(ctx: click.Context, opts: dict[str, Any]) -> EvalSettings:
    """The resolved settings (what run.toml holds and `--config` reads back)."""
    uri = opts["uri"]
    if not uri:
        msg = "Name the environment to evaluate, e.g. `nenyax eval reasoning_gym:basic_arithmetic`."
        raise UsageError(msg)
    model, policy = opts["model"], opts["policy"]
    winner = policy_or_model(ctx, opts)  # both set: the one from the higher level of precedence
    if winner == "model":
        policy = None
    elif winner == "policy":
        model = None
    task_ids = _split_ids(tuple(opts["task_ids"] or ()))
    who: dict[str, Any]
    if policy:
        who = {"policy": PolicySettings(use=policy)}
    else:
        who = {
            "provider": model_settings(
                model,
                max_tokens=opts["max_tokens"],
                temperature=opts["temperature"],
                params=merged_params(ctx, tuple(opts["params"] or ())),
                base_url=opts["base_url"],
                api_key_env=opts["api_key_env"],
                constrain=opts["constrain"],
                chosen=chosen_options(ctx),
            )
        }
    return EvalSettings(
        uri=uri,
        task_ids=tuple(task_ids) or None,
        tasks=None if task_ids else opts["tasks"],
        samples=opts["samples"],
        concurrency=opts["concurrency"],
        timeout=opts["timeout"],
        pass_threshold=opts["pass_threshold"],
        judges=tuple(opts["judges"] or ()),
        score=opts["score"],
        **who,
    )
