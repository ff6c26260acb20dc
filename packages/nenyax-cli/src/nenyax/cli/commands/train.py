"""``nenyax train URI --learner NAME``: rounds of rollouts and updates, each kept only if held-out improves.

The loop is `nenyax.core.engine.training`; this command picks the learner by name, writes the run
directory's ``run.toml`` (the settings; ``--config`` reads one back, ``--resume`` continues one) and
shows progress. A config names the learner as ``[learner] use = "grpo"``, its options beside it::

    uri = "reasoning_gym:basic_arithmetic"
    model = "local:smollm2-135m"
    rounds = 4
    [learner]
    use = "grpo"
    lr = 1e-5
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import attrs
import click
import orjson
from click.core import ParameterSource

from nenyax.cli.params import judge_options, model_option, plugin_options
from nenyax.cli.progress import bar, watching
from nenyax.core import TrainSettings, UsageError, load
from nenyax.core.contract.events import EpisodeEnded, Observer
from nenyax.core.engine.rundirs import create_run, default_run_path, read_config
from nenyax.core.engine.training import HELDOUT, PLOT, RoundResult, Trainer, read_rounds
from nenyax.core.plugins.registry import default_registry

# The settings a run is made of, in run.toml; --resume may change none of them but `concurrency`.
_ROUND_SETTINGS = (
    "rounds", "group_size", "tasks_per_round", "heldout", "seed", "concurrency", "timeout", "judges", "score"
)  # fmt: skip


def _read_config(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        msg = f"Cannot read the config {path} ({exc})."
        raise UsageError(msg) from exc
    data.pop("recorded", None)  # what a run found, in a run.toml read back
    command = data.pop("command", "train")
    if command != "train":
        msg = f"{path} is a config of `nenyax {command}`, not of `nenyax train`."
        raise UsageError(msg)
    return data


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def _settings(ctx: click.Context, opts: dict[str, Any], config: dict[str, Any], where: str) -> TrainSettings:
    """run.toml's settings: options given on the command line over the config over the defaults."""
    settings: dict[str, Any] = {"uri": opts["uri"] if opts["uri"] else config.get("uri"), "command": "train"}
    if not settings["uri"]:
        msg = "Name the environment to train on, e.g. `nenyax train reasoning_gym:basic_arithmetic --learner grpo`."
        raise UsageError(msg)
    table = dict(config.get("learner", {}))
    use = opts["learner"] if _given(ctx, "learner") or "use" not in table else table["use"]
    if not use:
        msg = "Name the learner with --learner (see `nenyax plugins`), or `use` in the config's [learner] table."
        raise UsageError(msg)
    table.pop("use", None)
    settings["learner"] = {"use": use, **table, **plugin_options(tuple(opts["options"]), "lr=1e-5")}
    model = opts["model"] if _given(ctx, "model") else config.get("model", opts["model"])
    if model:
        settings["model"] = model
    for name in _ROUND_SETTINGS:
        value = opts[name] if _given(ctx, name) or name not in config else config[name]
        if value is not None and value != ():
            settings[name] = list(value) if isinstance(value, tuple) else value
    if "schema_version" in config:  # the file's layout: checked by the record rule below
        settings["schema_version"] = config["schema_version"]
    unknown = set(config) - {"uri", "learner", "model", "schema_version", *_ROUND_SETTINGS}
    if unknown:
        msg = f"Unknown config key(s) {', '.join(sorted(unknown))}; a train config takes uri, model, [learner] and "
        msg += f"{', '.join(_ROUND_SETTINGS)}."
        raise UsageError(msg)
    return TrainSettings.from_table(settings, where)


class _Bar(Observer):
    def __init__(self, advance: Any) -> None:
        self.advance = advance

    def on_episode_ended(self, event: EpisodeEnded) -> None:
        self.advance()


def _say(result: RoundResult) -> None:
    if result.round == 0:
        click.echo(f"round 0: held-out {result.heldout_score:.3f} (the learner as it starts)", err=True)
        return
    train = "-" if result.train_score is None else f"{result.train_score:.3f}"
    verdict = "kept" if result.kept else "reverted"
    loss = result.update.get("loss")
    detail = f", loss {loss:.4g}" if loss is not None else ""
    click.echo(
        f"round {result.round}: train {train} ({result.trained_on} trained on{detail}), held-out "
        f"{result.heldout_score:.3f} vs best {result.best_before:.3f}: {verdict} ({result.seconds:.0f} s)",
        err=True,
    )


@click.command("train")
@click.argument("uri", required=False)
@click.option("--learner", "-l", envvar="NENYAX_LEARNER", help="The learner, by name (incontext, grpo, ...).")
@model_option  # the model the learner improves; a learner picks its own sampling
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="A learner option (lr=1e-5); repeatable.")
@click.option("--rounds", type=click.IntRange(min=0), default=3, show_default=True, help="Rounds after round 0.")
@click.option("--group-size", type=click.IntRange(min=1), default=4, show_default=True, help="Episodes per task.")
@click.option("--tasks-per-round", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--heldout", type=click.IntRange(min=1), default=16, show_default=True, help="Held-out tasks.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds the held-out draw and each round's tasks.")
@click.option("--concurrency", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds before an episode times out.")
@judge_options("the score trained on and kept by")
@click.option("--config", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="A train run.toml.")
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), help="Run directory (default runs/<time>-<env>)."
)
@click.option("--resume", type=click.Path(file_okay=False, path_type=Path), help="Continue the run in this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print every round as JSON (no progress).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def train_command(ctx: click.Context, **opts: Any) -> None:
    """Improve a model on URI with a learner, keeping each round only if held-out tasks improve."""
    resume: Path | None = opts.pop("resume")
    as_json: bool = opts.pop("as_json")
    quiet: bool = opts.pop("quiet") or as_json
    if resume is not None:
        if opts["out"] is not None or opts["config"] is not None:
            msg = "--resume continues a run from its own run.toml; drop --out and --config."
            raise UsageError(msg)
        stored_table = dict(read_config(resume).settings)
        if stored_table.get("command") != "train":
            msg = f"{resume} holds no run of `nenyax train` to continue."
            raise UsageError(msg)
        stored_table.pop("command")
        where = f"{resume}/run.toml"
        stored = TrainSettings.from_table(stored_table, where)
        settings = _settings(ctx, opts, stored_table, where)
        free = {"concurrency", "schema_version", "unknown_fields"}
        mine, theirs = attrs.asdict(settings, recurse=False), attrs.asdict(stored, recurse=False)
        changed = sorted(k for k in mine if k not in free and mine[k] != theirs[k])
        if changed:
            msg = f"--resume continues the run {resume}/run.toml describes; it differs in {', '.join(changed)}."
            raise UsageError(msg)
        out = resume
    else:
        config = _read_config(opts["config"]) if opts["config"] is not None else {}
        settings = _settings(ctx, opts, config, str(opts["config"] or "the options"))
        out = opts["out"] or default_run_path("runs", settings.uri)
    if settings.learner is None:  # `_settings` always names one
        msg = "Name the learner with --learner."
        raise UsageError(msg)
    name = settings.learner.use
    learner = default_registry().create("learner", name, model=settings.model, **settings.learner.options)
    env = load(settings.uri)
    try:
        if resume is None:
            create_run(
                out,
                settings.to_table(),
                env.manifest,
                if_taken=f"name a new directory with --out, or continue that run with --resume {out}",
            )
        done = read_rounds(out)
        rounds_left = settings.rounds - (done[-1].round if done else 0)
        per_round = settings.tasks_per_round * settings.group_size + settings.heldout
        total = (0 if done else settings.heldout) + max(rounds_left, 0) * per_round
        click.echo(
            f"{settings.uri}: learner {name}, {settings.rounds} round(s) of {settings.tasks_per_round} "
            f"task(s) x {settings.group_size}, {settings.heldout} held-out -> {out}",
            err=True,
        )
        if done:
            click.echo(f"resuming after round {done[-1].round}", err=True)
        with bar("episodes", total, quiet) as advance:
            observers = [_Bar(advance)] if watching(quiet) else []
            trainer = Trainer(env, learner, out, settings, observers=observers, on_round=None if as_json else _say)
            if resume is not None and (aside := trainer.resume()):
                click.echo(
                    f"{aside} episode(s) of the unfinished round set aside in *.interrupted.jsonl; "
                    "that round is played again",
                    err=True,
                )
            try:
                rounds = trainer.run()
            except KeyboardInterrupt:
                click.echo(f"Interrupted: continue this run with `nenyax train --resume {out}`.", err=True)
                raise
    finally:
        env.close()
        learner.close()
    if as_json:
        data = {"run_dir": str(out), "rounds": [r.to_json() for r in rounds]}
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        return
    best = max((r for r in rounds if r.kept), key=lambda r: r.round)
    first = rounds[0].heldout_score
    plot = out / PLOT
    click.echo(
        f"held-out {first:.3f} -> {best.heldout_score:.3f} (best: round {best.round}, {best.revision}); "
        f"{sum(not r.kept for r in rounds)} round(s) reverted; episodes in {out}, held-out in {out / HELDOUT}"
    )
    click.echo(f"plot: {plot}" if plot.exists() else "no plot: install matplotlib for plot.png")
