"""``nenyax eval URI``: N tasks x K samples into a run directory, with mean, interval and pass@k."""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import orjson

from nenyax.cli.eval_report import print_summary
from nenyax.cli.params import (
    chosen_options,
    constrain_option,
    merged_params,
    param_option,
    policy_or_model,
    provider_table,
)
from nenyax.cli.progress import bar, prepare_model, watching
from nenyax.cli.run_config import COMMANDS_WITH_CONFIG, config_option, settings_to_options
from nenyax.cli.traces import Traces, trace_option
from nenyax.core import Endpoint, UsageError, load, serde
from nenyax.core.contract.events import EpisodeEnded, Observer
from nenyax.core.contract.trajectory import new_id
from nenyax.core.engine.executors import BACKENDS, DEFAULT_BACKEND, Executor, executor_for
from nenyax.core.engine.policies import BUILTIN_POLICIES, POLICY_ALIASES, as_policy
from nenyax.core.engine.rundirs import TRAJECTORIES, create_run, default_run_path, read_config, write_summary
from nenyax.core.engine.runner import Job, run_jobs
from nenyax.core.engine.sinks import JsonlSink, read_trajectories
from nenyax.core.engine.summary import Tally
from nenyax.core.engine.sync import run_sync

# Settings a resumed run may change without changing what it measures.
_FREE_ON_RESUME = {"concurrency"}


def _split_ids(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in value.split(",") if part]


@click.command("eval")
@click.argument("uri", required=False)
@config_option("A run.toml naming the settings (options and NENYAX_* variables override it).")
@click.option("--model", "-m", envvar="NENYAX_MODEL", help="provider:model to evaluate (default: the embedded model).")
@click.option(
    "--policy",
    envvar="NENYAX_POLICY",
    type=click.Choice(sorted([*BUILTIN_POLICIES, *POLICY_ALIASES])),
    callback=lambda _ctx, _param, name: POLICY_ALIASES.get(name, name),
    help="Evaluate a built-in policy (oracle is reference).",
)
@click.option(
    "--tasks", type=click.IntRange(min=1), envvar="NENYAX_TASKS", help="Run the first N tasks (default: all)."
)
@click.option("--task-ids", multiple=True, help="Task ids to run (repeat or separate with commas) instead of --tasks.")
@click.option("--samples", "-k", type=click.IntRange(min=1), envvar="NENYAX_SAMPLES", default=1, show_default=True)
@click.option("--concurrency", type=click.IntRange(min=1), envvar="NENYAX_CONCURRENCY", default=16, show_default=True)
@click.option(
    "--backend",
    type=click.Choice(sorted(BACKENDS)),
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
@click.option("--max-tokens", type=int, default=256, show_default=True, help="Most tokens per model reply.")
@click.option("--temperature", type=float, default=0.7, show_default=True, help="Sampling temperature.")
@param_option
@constrain_option
@click.option("--base-url", envvar="NENYAX_BASE_URL", help="Base URL of an OpenAI-compatible server.")
@click.option("--api-key-env", envvar="NENYAX_API_KEY_ENV", help="Environment variable holding the API key.")
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
    # Made now: a backend that is not installed is one sentence before the run directory exists.
    executor = executor_for(backend, workers=workers, address=ray_address)
    quiet: bool = opts.pop("quiet") or as_json
    if resume is not None:
        stored = _resume_settings(ctx, resume, opts)
        out = resume
    else:
        stored = None
        out = opts.pop("out") or default_run_path("runs", opts.get("uri") or "run")
    settings = _settings(ctx, opts)
    if stored is not None:
        _same_run(settings, stored, resume)  # type: ignore[arg-type]
    player = _player(settings)
    traces = Traces(trace)  # an unknown tracer or a missing key: refused before the run starts
    env = load(settings["uri"])
    try:
        ids = list(settings["task_ids"]) if "task_ids" in settings else env.task_ids(limit=settings.get("tasks"))
        samples = settings["samples"]
        jsonl = out / TRAJECTORIES
        if stored is None:
            create_run(
                out,
                settings,
                env.manifest,
                extra={"task_count": len(ids)},
                if_taken=f"name a new directory with --out, or finish that run with --resume {out}",
            )
            done: list[Any] = []
            cut_off = None
        else:
            recorded = read_trajectories(jsonl, warn=False)  # said below, in the command's words
            done = list(recorded) if jsonl.exists() else []
            cut_off = recorded.cut_off_note  # that episode is missing, so it is played again below
        jobs = _missing_jobs(ids, samples, done)
        if not as_json:
            click.echo(f"{settings['uri']}: {len(ids)} task(s) x {samples} sample(s) -> {out}", err=True)
            if cut_off:
                click.echo(f"resuming: {cut_off}", err=True)
            if done or cut_off:
                click.echo(f"resuming: {len(done)} episode(s) already recorded, {len(jobs)} to play", err=True)
        if isinstance(player, Endpoint) and backend == "asyncio":  # workers load their own copy
            prepare_model(player, quiet)  # the load is its own wait, not the first episode's
        # The summary is tallied as episodes finish: the run keeps no trajectory once it is on disk, so
        # its memory stays flat however many episodes it plays (and the garbage collector has less to walk).
        tally = Tally(threshold=settings["pass_threshold"])
        for traj in done:
            tally.add(traj)
        started = time.perf_counter()
        with JsonlSink(jsonl) as sink, bar("episodes", len(jobs), quiet) as advance:
            pol = as_policy(player)
            # No drawing per episode unless someone watches; the tally counts every episode either way.
            progress = [_Progress(tally, advance if watching(quiet) else None), *traces.observers]
            try:
                run = _run_and_close(
                    env,
                    pol,
                    jobs,
                    settings.get("concurrency", 16),
                    sink,
                    settings.get("timeout"),
                    progress,
                    backend=executor,
                )
                run_sync(run)
            except KeyboardInterrupt:
                # Every finished episode is already on disk; say how to finish, then stop as an interrupt does.
                click.echo(f"Interrupted: finish this run with `nenyax eval --resume {out}`.", err=True)
                raise
        wall = time.perf_counter() - started
    finally:
        env.close()
        traces.close()  # flushed; spans lost are said once, the run unchanged
    # Every episode in the file was tallied (those on disk before, those played now): it is not read again.
    summary = tally.summary(samples=samples, wall_s=wall, resumed=len(done))
    write_summary(out, summary)
    if as_json:
        data = {"run_dir": str(out), **serde.to_data(summary)}
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    else:
        print_summary(summary, out, player_name(settings))


class _Progress(Observer):
    """Observes the run: tallies each episode as it ends (after the sink wrote it), and draws the bar."""

    def __init__(self, tally: Tally, advance: Callable[..., None] | None) -> None:
        self.tally = tally
        self.advance = advance
        self.statuses: collections.Counter[str] = collections.Counter()

    def on_episode_ended(self, event: EpisodeEnded) -> None:
        traj = event.trajectory
        self.tally.add(traj)
        if self.advance is not None:
            self.statuses[traj.status.value] += 1
            self.advance(note="  ".join(f"{name} {n}" for name, n in sorted(self.statuses.items())))


async def _run_and_close(
    env: Any,
    pol: Any,
    jobs: list[Job],
    concurrency: int,
    sink: JsonlSink,
    timeout: Any,
    progress: list[Any],
    *,
    backend: Executor,
) -> None:
    try:
        await run_jobs(
            env,
            pol,
            jobs,
            concurrency=concurrency,
            sink=sink,
            timeout=timeout,
            observers=progress,
            keep=False,
            backend=backend,
        )
    finally:
        aclose = getattr(pol, "aclose", None)
        if aclose is not None:
            await aclose()


def _missing_jobs(ids: list[str], samples: int, done: list[Any]) -> list[Job]:
    """Every (task, sample) not yet recorded, each task's samples under the group id it already has."""
    seen = {(t.task_id, t.sample) for t in done}
    groups = {t.task_id: t.group_id for t in done if t.group_id is not None}
    jobs: list[Job] = []
    for task in ids:
        group_id = groups.get(task) or (new_id() if samples > 1 else None)
        jobs.extend(Job(task, group_id, k) for k in range(samples) if (task, k) not in seen)
    return jobs


def _resume_settings(ctx: click.Context, resume: Path, opts: dict[str, Any]) -> dict[str, Any]:
    """Read the run's settings; they fill in every option the command line left at its default."""
    if opts.get("out") is not None:
        msg = "--resume finishes a run in its own directory; drop --out."
        raise UsageError(msg)
    opts.pop("out")
    stored = dict(read_config(resume).settings)
    wrote = stored.get("command", "eval")  # runs written before the key existed are eval's
    if wrote not in COMMANDS_WITH_CONFIG:
        msg = f"{resume}/run.toml names command = {wrote!r}; it is not a run nenyax wrote."
        raise UsageError(msg)
    if wrote != "eval":
        msg = f"{resume} was written by `nenyax {wrote} --save`; only a run of `nenyax eval` can be resumed."
        raise UsageError(msg)
    stored["command"] = "eval"
    for name, value in settings_to_options(stored).items():
        source = ctx.get_parameter_source(name)
        if name in opts and source not in (
            click.core.ParameterSource.COMMANDLINE,
            click.core.ParameterSource.ENVIRONMENT,
        ):
            opts[name] = value
    for name in ("task_ids", "model", "policy"):  # absent from the stored run: not part of it
        if name not in settings_to_options(stored) and ctx.get_parameter_source(name) not in (
            click.core.ParameterSource.COMMANDLINE,
            click.core.ParameterSource.ENVIRONMENT,
        ):
            opts[name] = () if name == "task_ids" else None
    return stored


def _same_run(settings: dict[str, Any], stored: dict[str, Any], resume: Path) -> None:
    mine = {k: v for k, v in settings.items() if k not in _FREE_ON_RESUME}
    theirs = {k: v for k, v in stored.items() if k not in _FREE_ON_RESUME}
    if mine != theirs:
        changed = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        msg = (
            f"--resume finishes the run {resume}/run.toml describes; it differs in {', '.join(changed)}. "
            "Drop those options, or start a new run with --out."
        )
        raise UsageError(msg)


def _settings(ctx: click.Context, opts: dict[str, Any]) -> dict[str, Any]:
    """The resolved settings, in run.toml's shape (what `--config` reads back)."""
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
    settings: dict[str, Any] = {"uri": uri, "command": "eval"}
    task_ids = _split_ids(tuple(opts["task_ids"] or ()))
    if task_ids:
        settings["task_ids"] = task_ids
    elif opts["tasks"] is not None:
        settings["tasks"] = opts["tasks"]
    settings["samples"] = opts["samples"]
    settings["concurrency"] = opts["concurrency"]
    if opts["timeout"] is not None:
        settings["timeout"] = opts["timeout"]
    settings["pass_threshold"] = opts["pass_threshold"]
    if policy:
        settings["policy"] = {"use": policy}
    else:
        provider = provider_table(
            model,
            max_tokens=opts["max_tokens"],
            temperature=opts["temperature"],
            params=merged_params(ctx, tuple(opts["params"] or ())),
            base_url=opts["base_url"],
            api_key_env=opts["api_key_env"],
            constrain=opts["constrain"],
            chosen=chosen_options(ctx),
        )
        settings["provider"] = provider
    return settings


def _player(settings: dict[str, Any]) -> Any:
    if "policy" in settings:
        return settings["policy"]["use"]
    p = settings["provider"]
    endpoint = Endpoint(
        f"{p['use']}:{p['model']}",
        base_url=p.get("base_url"),
        api_key_env=p.get("api_key_env"),
        constrain=bool(p.get("constrain", False)),
        defaults=p.get("defaults"),
        **{k: p[k] for k in ("max_tokens", "temperature") if k in p},
        **p.get("params", {}),
    )
    endpoint.provider  # noqa: B018 - a missing or misconfigured provider fails here, before any episode
    return endpoint


def player_name(settings: dict[str, Any]) -> str:
    """``policy reference`` or ``local:smollm2-135m``."""
    if "policy" in settings:
        return f"policy {settings['policy']['use']}"
    return f"{settings['provider']['use']}:{settings['provider']['model']}"
