"""Run configs: a TOML file naming everything a command takes, and how its values meet the command line.

Precedence, highest first: a command-line option > its ``NENYAX_*`` environment variable > the
config file (``--config run.toml``) > the option's default. Click implements exactly this order when
the file's values are its ``default_map``, so that is all `apply_config` does.

The file's shape is the one `nenyax eval` writes into every run directory (its ``[recorded]`` table,
what the run found, is ignored when reading it back as a config)::

    uri = "reasoning_gym:basic_arithmetic"
    tasks = 50
    samples = 4
    [provider]              # or: [policy] use = "reference"
    use = "openai"
    model = "gpt-4.1-mini"
    api_key_env = "MY_KEY"  # a key's variable, never the key
    constrain = true        # --constrain
    [provider.params]       # --param top_p=0.9
    top_p = 0.9
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from nenyax.core import EvalSettings, UsageError
from nenyax.core.engine.rundirs import read_config

F = TypeVar("F", bound=Callable[..., Any])

COMMANDS_WITH_CONFIG = ("eval", "try", "check")
"""The commands that take ``--config`` (a run.toml's optional ``command`` names one of them)."""

_PROVIDER_KEYS = {"base_url", "api_key_env", "max_tokens", "temperature", "constrain", "params"}


def settings_to_options(settings: dict[str, Any]) -> dict[str, Any]:
    """A run config's tables as click option names (``[provider] use, model`` -> ``model = "use:model"``)."""
    options: dict[str, Any] = {}
    for key, value in settings.items():
        if key == "provider" and isinstance(value, dict):
            use, model = value.get("use"), value.get("model")
            if use is None or model is None:
                msg = "A config's [provider] table needs both use (the provider) and model; write use = 'openai'."
                raise UsageError(msg)
            options["model"] = f"{use}:{model}"
            # [provider.defaults]: the writing command's own defaults, which this command has too.
            unknown = set(value) - _PROVIDER_KEYS - {"use", "model", "defaults"}
            if unknown:
                msg = (
                    f"Unknown [provider] key(s) {', '.join(sorted(unknown))}; use {', '.join(sorted(_PROVIDER_KEYS))}."
                )
                raise UsageError(msg)
            options.update({k: v for k, v in value.items() if k in _PROVIDER_KEYS - {"params"}})
            params = value.get("params", {})
            if not isinstance(params, dict):
                msg = "A config's [provider.params] must be a table of sampling parameters, e.g. top_p = 0.9."
                raise UsageError(msg)
            if params:
                # As --param spells them: JSON reads back as the same value (parse_value decodes JSON);
                # the standard library's, which writes what TOML held (inf, big integers) for the check to refuse.
                options["params"] = tuple(f"{k}={json.dumps(v)}" for k, v in params.items())
        elif key == "policy" and isinstance(value, dict):
            options["policy"] = value.get("use")
        else:
            options[key] = value
    return options


def apply_config(ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    """``--config`` callback (eager): the file's values become the command's defaults."""
    if value is None:
        return None
    settings = dict(read_config(value).settings)
    # `try` and `check` record which command wrote the file; `eval`'s files and hand-written ones may omit it.
    wrote = settings.pop("command", ctx.command.name)
    if wrote not in COMMANDS_WITH_CONFIG:
        msg = f"{value} names command = {wrote!r}; a run config is one of {', '.join(COMMANDS_WITH_CONFIG)}'s."
        raise UsageError(msg)
    if wrote != ctx.command.name:
        msg = f"{value} was written by `nenyax {wrote}`; replay it with `nenyax {wrote} --config {value}`."
        raise UsageError(msg)
    if ctx.command.name == "eval":  # a typed record: its version and its keys are checked as run.toml's are
        EvalSettings.from_table(settings, str(value))
    settings.pop("schema_version", None)
    options = settings_to_options(settings)
    known = {p.name for p in ctx.command.params}
    unknown = set(options) - known
    if unknown:
        msg = f"{value} names {', '.join(sorted(unknown))}, which `nenyax {ctx.command.name}` does not take."
        raise UsageError(msg)
    ctx.default_map = {**(ctx.default_map or {}), **options}
    return value


_ORDER = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT, ParameterSource.DEFAULT_MAP)
ENVIRONMENT_RANK = _ORDER.index(ParameterSource.ENVIRONMENT)


def rank(ctx: click.Context, name: str) -> int:
    """Where option `name`'s value came from: 0 the command line, 1 its variable, 2 a config file, 3 its default."""
    source = ctx.get_parameter_source(name)
    return _ORDER.index(source) if source in _ORDER else len(_ORDER)


def config_option(help_text: str) -> Callable[[F], F]:
    """The ``--config run.toml`` option of a command that replays run configs (eager: it sets the defaults)."""
    return click.option(
        "--config",
        type=click.Path(exists=True, path_type=Path),
        callback=apply_config,
        is_eager=True,
        expose_value=False,
        help=help_text,
    )
