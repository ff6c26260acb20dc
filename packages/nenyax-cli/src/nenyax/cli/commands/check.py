"""``nenyax check URI``: run an environment and report the highest tier it reaches.

``nenyax check KIND NAME`` (a plugin kind, then a name) is ``nenyax KIND-check NAME``: the kind's conformance kit.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import orjson
from click.core import ParameterSource

from nenyax.cli.deadline import command_deadline
from nenyax.cli.params import chosen_options, judge_options, model_options, provider_table, sampling_params
from nenyax.cli.paths import check_run_dir
from nenyax.cli.progress import bar
from nenyax.cli.run_config import config_option
from nenyax.cli.tier_meanings import explain
from nenyax.core import ModelSettings, UsageError
from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import Tier
from nenyax.core.contract.uri import MAX_SEED
from nenyax.core.engine.rundirs import CHECK_REPORT, TRAJECTORIES, create_run, record_manifest
from nenyax.core.engine.sinks import JsonlSink
from nenyax.core.errors import did_you_mean
from nenyax.core.kinds import KINDS
from nenyax.core.tiers.cached import forget, remember
from nenyax.core.tiers.checks import CHECKS, MODEL_CHECKS
from nenyax.core.tiers.measure import DEFAULT_MARGIN, DEFAULT_SAMPLES, TierReport, check, check_judging

TIERS = [t.label for t in Tier if t is not Tier.NONE]
FEW_TASKS = 10
"""An audit over fewer tasks says so in its tier line (a 4-task dataset reaches audited on 4 answers)."""
_GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
"""Where an option the user gave comes from (not a default, nor a --config run.toml's value)."""


def unseeded_reason(report: TierReport) -> str | None:
    """Why the environment is not seeded, where its adapter said so in the manifest (``extra["seeds"]``,
    as the OpenEnv adapter's measurement writes it); None when it is seeded or no reason was given."""
    manifest = report.manifest
    if manifest is None or manifest.capabilities.seeded:
        return None
    why = manifest.extra.get("seeds")
    return why if isinstance(why, str) and why.strip() else None


STARTS = "connectable/episode-starts"


def _cause(evidence: str) -> str:
    """What an evidence sentence says went wrong, without the episode it happened to ("... of t ended ...: ")."""
    head, sep, tail = evidence.partition(": ")
    return tail if sep and ("episode" in head) else evidence


def render_report(report: TierReport) -> None:
    """Print the report as a table with the tier reached underneath."""
    from rich.console import Console
    from rich.text import Text

    from nenyax.cli.commands.conformance import print_results
    from nenyax.cli.safe import safe_text

    console = Console()
    failures = report.failures()
    # No episode could start (a server down, a set-up that failed): that is the news, so it comes first.
    if blocked := next((r for r in failures if r.id == STARTS), None):
        console.print(safe_text(f"No episode could start: {_cause(blocked.evidence)}"), soft_wrap=True)
    print_results(console, f"nenyax check {report.uri}", report.results)
    # A failed check sits among the rows in tier order, above the passed checks of higher tiers, where it
    # reads as one row among passes: each is said again here, beside the tier it holds down.
    told: dict[str, str] = {}  # each cause once: later checks that failed on it only point to the first
    for result in failures:
        said = Text(f"{result.outcome.value.capitalize()}: ", style="bold red")
        cause = _cause(result.evidence)
        first = told.setdefault(cause, result.id)
        evidence = result.evidence if first == result.id else f"the same cause as {first}."
        said.append_text(safe_text(f"{result.id}: {evidence}"))
        console.print(said, soft_wrap=True)
    if why := unseeded_reason(report):
        console.print(f"Not seeded: {why}", markup=False, soft_wrap=True)
    if report.judges:
        judged = " and ".join(report.judges)
        console.print(
            f"Judged by: {judged} (score: {report.score}), not the format's own verifier alone.",
            markup=False,
            soft_wrap=True,
        )
    label = report.tier.label if report.tier is not Tier.NONE else "none (not even connectable)"
    if report.floor is not None:
        floor = report.floor
        upper = floor.upper if floor.upper is not None else floor.score
        console.print(
            f"Floor: {floor.probe} averages {floor.score:.2f} over {floor.floor_tasks} tasks (at most "
            f"{upper:.2f}, 95% upper bound) against the reference's {floor.reference:.2f} over {floor.tasks} "
            f"tasks (margin {floor.margin:.2f}, {floor.required:.2f} required).",
            markup=False,
            soft_wrap=True,  # one line when piped; a terminal wraps it itself
        )
    caveat = ""
    if report.tier >= Tier.AUDITED and report.floor is not None and report.floor.tasks < FEW_TASKS:
        caveat = f", on {report.floor.tasks} task{'s' if report.floor.tasks != 1 else ''} only: so few prove little"
    console.print(f"Tier: [bold]{label}[/bold]{caveat}")
    for line in explain(report.tier):
        console.print(f"  {line}", markup=False, soft_wrap=True)
    if report.model_results:
        print_results(console, f"with {report.model} (not part of the tier)", report.model_results)


@click.command("check")
@click.argument("uri", metavar="URI | KIND NAME", required=False)
@click.argument("name", metavar=" ", required=False)
@config_option("A run.toml (one that check --save wrote) naming the settings; options override it.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--samples", type=click.IntRange(1, 10_000), default=DEFAULT_SAMPLES, show_default=True, help="Tasks sampled."
)
@click.option(
    "--margin",
    type=click.FloatRange(0, 1e9),
    default=DEFAULT_MARGIN,
    show_default=True,
    help="How far the reference's mean score must be above the floor (the best null, random or constant policy).",
)
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=0, show_default=True, help="Seed for sampling tasks.")
@click.option(
    "--require",
    type=click.Choice(TIERS),
    default=None,
    help="Exit 1 unless at least this tier is reached (default: exit 1 if a check failed or no tier was reached).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds the whole check may take; past them it stops and exits 1.",
)
@click.option(
    "--save",
    type=click.Path(path_type=Path),
    help="Record every episode the checks play in a new run directory (run.toml, trajectories.jsonl, check.json).",
)
# --model also checks a model on the environment: are its token ids faithful over an episode?
@model_options(policy=False, constrain=False)
@judge_options("the score each check compares is (check: the one judge's verdict unless --score says otherwise)")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--strict", is_flag=True, help="With KIND NAME: warnings of the conformance kit fail too.")
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="With KIND NAME: an option the plugin's factory is given; repeatable.",
)
def check_command(
    uri: str | None,
    name: str | None,
    as_json: bool,
    samples: int,
    margin: float,
    seed: int,
    require: str | None,
    timeout: float | None,
    save: Path | None,
    model: str | None,
    max_tokens: int,
    temperature: float,
    params: tuple[str, ...],
    base_url: str | None,
    api_key_env: str | None,
    judges: tuple[str, ...],
    score: str | None,
    quiet: bool,
    strict: bool,
    options: tuple[str, ...],
) -> None:
    """Run URI's checks and print the highest tier it actually reaches.

    Tiers: connectable < evaluable < trainable < audited. A skipped check blocks its tier.

    With a plugin kind and a name instead (nenyax check adapter acme), run that kind's conformance kit on the
    installed plugin, as nenyax KIND-check NAME does.
    """
    if not uri:
        msg = "Name the environment to check, e.g. `nenyax check reasoning_gym:basic_arithmetic`."
        raise UsageError(msg)
    if name is not None or uri in KINDS:
        _check_plugin(uri, name, as_json, strict, options)
        return
    context = click.get_current_context()
    given = [
        flag
        for p, flag in (("strict", "--strict"), ("options", "--option"))
        if context.get_parameter_source(p) in _GIVEN
    ]
    if given:
        msg = f"{' and '.join(given)} can only be given with a plugin kind and a name (check adapter NAME), not a URI."
        raise UsageError(msg)
    described = [
        flag
        for p, flag in (("base_url", "--base-url"), ("api_key_env", "--api-key-env"), ("params", "--param"))
        if context.get_parameter_source(p) is click.core.ParameterSource.COMMANDLINE
    ]
    if model is None and described:
        msg = (  # one sentence whichever of them was given
            "--base-url and --api-key-env describe the model of --model (as --param does); "
            "name it too (e.g. --model openai:NAME)."
        )
        raise UsageError(msg)
    endpoint = None
    provider: dict[str, Any] = {}
    if model is not None:
        provider = provider_table(
            model,
            max_tokens=max_tokens,
            temperature=temperature,
            params=sampling_params(params),
            base_url=base_url,
            api_key_env=api_key_env,
            constrain=False,
            chosen=chosen_options(context),
        )
        endpoint = ModelSettings(**provider).endpoint()
        endpoint.provider  # noqa: B018 - a missing or misconfigured provider fails here, before any check
    # An unknown judge or option, a --score naming none: refused here, before the check (whose refusals of a URI
    # forget the tier kept for `nenyax list`).
    judging = check_judging(judges, score)
    if judging is not None and judging.group_judges:
        (use, _judge), *_ = judging.group_judges
        msg = (
            f"check plays its episodes one at a time, and the group judge {use.label!r} scores an episode against "
            "its group, so no tier can be measured under it; judge groups with eval --samples N or train."
        )
        raise UsageError(msg)
    sink = None
    made = None
    if save is not None:
        check_run_dir(save, "--save")
        made = save if not save.exists() else None
        settings: dict[str, Any] = {"uri": uri, "command": "check", "samples": samples, "seed": seed, "margin": margin}
        if provider:
            settings["provider"] = provider
        if judges:
            settings["judges"], settings["score"] = list(judges), score
        create_run(save, settings, None)  # the manifest's digest is added once the environment has loaded
        sink = JsonlSink(save / TRAJECTORIES)
    try:
        steps = len(CHECKS) + (len(MODEL_CHECKS) if endpoint is not None else 0)
        with command_deadline(timeout, grace=0.0), bar("checking", steps, quiet or as_json) as advance:

            def progress(check_id: str, done: int, total: int) -> None:
                advance(n=1 if done else 0, note=check_id)

            report = check(
                uri,
                samples=samples,
                seed=seed,
                margin=margin,
                progress=progress,
                observers=[sink] if sink is not None else None,
                model=endpoint,
                judges=judges,
                score=score,
            )
    except UsageError:
        forget(uri)  # the environment no longer loads (or never did): no old tier may stand for it
        if sink is not None:
            sink.close()
            _discard_unused_run(save, made)
        raise
    finally:
        if sink is not None:
            sink.close()  # every episode played so far stays on disk, even when the check was stopped
    if not report.judges:  # `nenyax list` shows the tier under the format's own verifier, never a put-on judge's
        remember(report, samples=samples, margin=margin)
    if save is not None:
        if report.manifest is not None:
            record_manifest(save, report.manifest)
        (save / CHECK_REPORT).write_bytes(orjson.dumps(serde.to_data(report), option=orjson.OPT_INDENT_2) + b"\n")
    if report.samples < samples:
        click.echo(
            f"Note: --samples {samples} is more than the environment's {report.samples} task(s); "
            f"all {report.samples} were sampled.",
            err=True,
        )
    if as_json:
        click.echo(orjson.dumps(serde.to_data(report), option=orjson.OPT_INDENT_2))
    else:
        render_report(report)
        if save is not None:
            click.echo(f"Episodes saved to {save}/ (open them with `nenyax view {save}`)")
    if require is not None:
        sys.exit(0 if report.tier >= Tier[require.upper()] else 1)
    # Nothing measured (not even connectable, e.g. a server that cannot be reached) is no success either.
    sys.exit(1 if report.failed or report.tier is Tier.NONE else 0)


# The options of a tier check, which the conformance kit of `nenyax check KIND NAME` does not take.
_TIER_OPTIONS = (
    "samples",
    "margin",
    "seed",
    "require",
    "timeout",
    "save",
    "model",
    "max_tokens",
    "temperature",
    "params",
    "base_url",
    "api_key_env",
    "judges",
    "score",
    "quiet",
)


def _check_plugin(kind: str, name: str | None, as_json: bool, strict: bool, options: tuple[str, ...]) -> None:
    """`nenyax check KIND NAME`: the kind's conformance kit on plugin `name`, as `nenyax KIND-check NAME` runs it."""
    if kind not in KINDS:
        msg = (
            f"nenyax check takes one environment URI, or a plugin kind and a name; {kind!r} is no plugin kind."
            + did_you_mean(kind, KINDS, "plugin kind")
        )
        raise UsageError(msg)
    if name is None:
        msg = f"Name the {kind} to check, e.g. `nenyax check {kind} NAME` (`nenyax plugins` lists them)."
        raise UsageError(msg)
    if not KINDS[kind].kit:
        msg = f"There is no conformance kit for {kind} plugins yet, so nothing to check {name!r} with."
        raise UsageError(msg)
    context = click.get_current_context()
    # Typed on this command line: an exported NENYAX_MODEL is for the commands that play a model.
    typed = ParameterSource.COMMANDLINE
    given = [f"--{p.replace('_', '-')}" for p in _TIER_OPTIONS if context.get_parameter_source(p) is typed]
    if given:
        msg = (
            f"nenyax check {kind} {name} runs the {kind} conformance kit, which takes no {', '.join(given)} "
            "(those measure an environment's tier)."
        )
        raise UsageError(msg)
    from nenyax.cli.commands.conformance import parse_options, run_conformance

    run_conformance(kind, name, as_json, strict, parse_options(options))


def _discard_unused_run(save: Path | None, made: Path | None) -> None:
    """A user mistake (a bad URI) stopped the check before any episode: take back the empty run directory it
    started, so fixing the URI and running the same command again works."""
    if save is None or (save / TRAJECTORIES).stat().st_size > 0:
        return
    for name in (TRAJECTORIES, "run.toml"):
        (save / name).unlink(missing_ok=True)
    if made is not None and not any(save.iterdir()):
        save.rmdir()
