"""``nenyax try URI``: one episode with your model (the embedded one by default), replayed readably."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, cast

import click

from nenyax.cli.deadline import command_deadline, remaining
from nenyax.cli.exits import FAILURE, INTERRUPTED, SUCCESS
from nenyax.cli.params import (
    chosen_options,
    judge_options,
    merged_params,
    model_options,
    policy_or_model,
    provider_table,
)
from nenyax.cli.paths import check_run_dir, check_writable
from nenyax.cli.progress import prepare_model
from nenyax.cli.run_config import config_option
from nenyax.cli.traces import Traces, trace_option
from nenyax.core import Endpoint, EpisodeInterrupted, Status, Trajectory, UsageError, load
from nenyax.core.contract import serde
from nenyax.core.contract.uri import MAX_SEED
from nenyax.core.engine.judging import Judging
from nenyax.core.engine.rundirs import TRAJECTORIES, create_run, write_summary
from nenyax.core.engine.sinks import JsonlSink
from nenyax.core.engine.summary import summarize


@click.command("try")
@click.argument("uri", required=False)
@config_option("A run.toml (one that try --save wrote) naming the settings; options override it.")
@model_options()
@click.option("--task", default=None, help="Task id to play (default: the first task).")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None, help="Seed for the episode.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds the whole command may take (loading included); the episode ends as timeout when they run out.",
)
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write an HTML replay.")
@click.option("--json", "as_json", is_flag=True, help="Print the trajectory as JSON instead of the replay.")
@click.option(
    "--save",
    type=click.Path(path_type=Path),
    help="Save the episode as a run directory (run.toml, trajectories.jsonl, summary.json), "
    "or append it to PATH if PATH ends in .jsonl.",
)
@judge_options()
@click.option("--quiet", "-q", is_flag=True, help="No spinner while the model loads.")
@trace_option
@click.pass_context
def try_command(
    ctx: click.Context,
    uri: str | None,
    model: str | None,
    policy: str | None,
    task: str | None,
    seed: int | None,
    timeout: float | None,
    max_tokens: int,
    temperature: float,
    params: tuple[str, ...],
    constrain: bool,
    base_url: str | None,
    api_key_env: str | None,
    html_path: Path | None,
    as_json: bool,
    save: Path | None,
    judges: tuple[str, ...],
    score: str | None,
    quiet: bool,
    trace: str | None,
) -> None:
    """Play one episode of URI and show it: turns, model text, rewards and the judgment."""
    if not uri:
        msg = "Name the environment to play, e.g. `nenyax try reasoning_gym:basic_arithmetic`."
        raise UsageError(msg)
    chosen = {"policy": policy, "model": model, "base_url": base_url, "api_key_env": api_key_env}
    winner = policy_or_model(ctx, {**chosen, "params": params, "constrain": constrain})
    if winner == "policy":  # a --policy over a config file's model (or the reverse): the stronger one plays
        model = base_url = api_key_env = None
        params, constrain = (), False
    elif winner == "model":
        policy = None
    player: object = policy
    sampling: dict[str, Any] = {}
    set_by_user = chosen_options(ctx)
    # Before the episode: a long episode must not be lost to a typo.
    if html_path is not None:
        check_writable(html_path, "--html")
    if save is not None:
        (check_writable if save.suffix == ".jsonl" else check_run_dir)(save, "--save")
    Judging.build(judges, score)  # an unknown judge or option, a --score naming none: refused before the episode
    traces = Traces(trace)  # an unknown tracer or a missing key: refused before the episode
    env = None
    # --timeout bounds the whole command: the provider's imports, the environment's load and an embedded
    # model's load count too; the episode gets what is left, so its own timer fires first and records it.
    try:
        with command_deadline(timeout):
            if policy is None:
                given = merged_params(ctx, params)
                set_by_user |= set(given) & {"max_tokens", "temperature"}
                base = {"max_tokens": max_tokens, "temperature": temperature}
                sampling = {**base, **given}
                explicit = {**{k: v for k, v in base.items() if k in set_by_user}, **given}
                defaults = {k: v for k, v in base.items() if k not in set_by_user}  # a native loop's own values win
                player = Endpoint(
                    model,
                    base_url=base_url,
                    api_key_env=api_key_env,
                    constrain=constrain,
                    defaults=defaults,
                    **explicit,
                )
                player.provider  # noqa: B018 - a missing or misconfigured provider fails here, before any episode
            env = load(uri)
            manifest = env.manifest
            started = time.perf_counter()
            if isinstance(player, Endpoint):
                prepare_model(player, quiet or as_json)  # its own wait, not the first call's latency
            left = remaining(timeout)
            traj = env.rollout(
                player, task=task, seed=seed, timeout=left, observers=traces.observers, judges=judges, score=score
            )
    except EpisodeInterrupted as interrupt:
        traj = cast("Trajectory", interrupt.trajectory)  # Ctrl-C: what was played, status interrupted
    finally:
        if env is not None:
            env.close()
        traces.close()  # flushed; spans lost are said once, the exit code unchanged
    written = []
    if save is not None and save.suffix == ".jsonl":
        with JsonlSink(save) as sink:
            sink.write(traj)
        written.append(str(save))
    elif save is not None:
        settings = _settings(
            uri, policy, model, task, seed, timeout, sampling, base_url, api_key_env, constrain, set_by_user
        )
        settings.update({"judges": list(judges)} if judges else {})
        settings.update({"score": score} if score is not None else {})
        create_run(save, settings, manifest, extra={"played_task": traj.task_id, "played_seed": traj.seed})
        with JsonlSink(save / TRAJECTORIES) as sink:
            sink.write(traj)
        write_summary(save, summarize([traj], wall_s=time.perf_counter() - started))
        written.append(f"{save}/")
    if html_path is not None:
        from nenyax.cli.html_replay import render_html

        html_path.write_text(render_html(traj), encoding="utf-8")
        written.append(str(html_path))
    if as_json:
        click.echo(serde.dumps(traj).decode())
    else:
        from nenyax.cli.replay import render

        if traj.status in (Status.INFRA_ERROR, Status.ENV_ERROR) and not traj.steps and not traj.model_calls:
            # Nothing was played: why is the news, said first (the replay below ends with it too).
            click.echo(f"No episode could start: {traj.error}")
        render(traj)
        if html_path is not None:
            click.echo(f"HTML replay written to {html_path}")
        if save is not None and save.suffix != ".jsonl":
            click.echo(f"Run saved to {save}/ (open it with `nenyax view {save}`)")
    if seed is not None and traj.seed != seed:
        # Some formats use the seed to pick a task and record the dataset's own seed: say so, not a silent mismatch.
        recorded = "no seed" if traj.seed is None else f"seed {traj.seed}"
        click.echo(f"Note: --seed {seed} chose task {traj.task_id}; the environment recorded {recorded}.", err=True)
    if traj.status is Status.INTERRUPTED:
        where = f" and written to {', '.join(written)}" if written else ""
        click.echo(f"Interrupted: the {len(traj.steps)} step(s) played so far are shown above{where}.", err=True)
        sys.exit(INTERRUPTED)
    sys.exit(SUCCESS if traj.status is Status.OK else FAILURE)


def _settings(
    uri: str,
    policy: str | None,
    model: str | None,
    task: str | None,
    seed: int | None,
    timeout: float | None,
    sampling: dict[str, Any],
    base_url: str | None,
    api_key_env: str | None,
    constrain: bool,
    chosen: frozenset[str],
) -> dict[str, Any]:
    """What this episode was played with, in run.toml's shape (the one `nenyax eval` writes)."""
    settings: dict[str, Any] = {"uri": uri, "command": "try", "task": task, "seed": seed, "timeout": timeout}
    if policy is not None:
        settings["policy"] = {"use": policy}
        return settings
    settings["provider"] = provider_table(
        model,
        max_tokens=sampling["max_tokens"],
        temperature=sampling["temperature"],
        params={k: v for k, v in sampling.items() if k not in ("max_tokens", "temperature") or k in chosen},
        base_url=base_url,
        api_key_env=api_key_env,
        constrain=constrain,
        chosen=chosen,
    )
    return settings
