"""The model options try, eval, check and train share: ``--param KEY=VALUE`` (values written as in a URI query),
``--constrain``, and how they meet ``--policy`` and a config file."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from nenyax.cli.run_config import ENVIRONMENT_RANK, rank
from nenyax.core import DEFAULT_MODEL, ModelSettings, UsageError
from nenyax.core.contract.chat import SAMPLING_KEYS
from nenyax.core.contract.uri import parse_value
from nenyax.core.engine.policies import BUILTIN_POLICIES, POLICY_ALIASES
from nenyax.core.errors import did_you_mean_pool

F = TypeVar("F", bound=Callable[..., Any])


def plugin_options(pairs: tuple[str, ...], example: str) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs as a plugin factory's keyword options (values read as in a URI: 1e-5 is a
    number; ``-`` in a key is ``_``). `example` is one pair shown when a pair is malformed."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            msg = f"Write --option as KEY=VALUE (for example {example}), not {pair!r}."
            raise UsageError(msg)
        options[key.strip().replace("-", "_")] = parse_value(text)
    return options


def sampling_params(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``("top_p=0.9", "stop=[\\"\\\\n\\"]")`` -> ``{"top_p": 0.9, "stop": ["\\n"]}``; one sentence for a bad pair."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            msg = f"Write --param as KEY=VALUE (for example top_p=0.9), not {pair!r}."
            raise UsageError(msg)
        if key not in SAMPLING_KEYS:
            close = did_you_mean_pool(key, SAMPLING_KEYS)
            hint = f"Did you mean {' or '.join(close)}?" if close else f"Use one of {', '.join(sorted(SAMPLING_KEYS))}."
            msg = f"--param {key} is not a sampling parameter. {hint}"
            raise UsageError(msg)
        value = parse_value(text)
        if value is None:
            msg = f"--param {key}=null sends nothing; leave --param {key} out to keep the default."
            raise UsageError(msg)
        _check_sendable(key, value)
        out[key] = value
    return out


def _check_sendable(key: str, value: Any) -> None:
    """Refuse what a JSON request body cannot carry as written (and run.toml could not give back)."""
    if value is None:
        msg = f"--param {key} holds a null; write the value without it."
        raise UsageError(msg)
    if isinstance(value, float) and not math.isfinite(value):
        msg = f"--param {key} must hold finite numbers only, not {value!r}."
        raise UsageError(msg)
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        msg = f"--param {key} holds an integer beyond 64 bits ({value}); no server reads it."
        raise UsageError(msg)
    if isinstance(value, list | tuple):
        for item in value:
            _check_sendable(key, item)
    elif isinstance(value, dict):
        for item in value.values():
            _check_sendable(key, item)


def merged_params(ctx: click.Context, given: tuple[str, ...]) -> dict[str, Any]:
    """`--param` values over a config file's ``[provider.params]``, key by key (the command line wins).

    Click hands a multiple option either the command line's values or the file's, never both.
    """
    if ctx.get_parameter_source("params") is not ParameterSource.COMMANDLINE:
        return sampling_params(tuple(given or ()))
    from_file = tuple((ctx.default_map or {}).get("params", ()))
    return {**sampling_params(from_file), **sampling_params(tuple(given))}


MODEL_OPTIONS = ("model", "base_url", "api_key_env", "params", "constrain")
"""The options that describe a model; any of them set means the command plays one."""


def policy_or_model(ctx: click.Context, opts: dict[str, Any]) -> str | None:
    """Which of `--policy` and the model options wins when both are set: the one from the higher level of
    precedence (command line > environment variable > config file), "policy" or "model"; None when only one
    kind is set. Both from the same level is a user mistake, said in one sentence.
    """
    # An exported NENYAX_BASE_URL or NENYAX_API_KEY_ENV says where a model would be, not that one is wanted.
    model_set = [
        name
        for name in MODEL_OPTIONS
        if opts.get(name) and not (name in ("base_url", "api_key_env") and rank(ctx, name) == ENVIRONMENT_RANK)
    ]
    if not opts.get("policy") or not model_set:
        return None
    policy_rank = rank(ctx, "policy")
    model_rank = min(rank(ctx, name) for name in model_set)
    if policy_rank == model_rank:
        flags = ", ".join("--" + name.replace("_", "-") for name in model_set)
        msg = f"Pass either --policy or a model ({flags}), not both."
        raise UsageError(msg)
    return "policy" if policy_rank < model_rank else "model"


def _policy_name(_ctx: click.Context, _param: click.Parameter, name: str | None) -> str | None:
    return POLICY_ALIASES.get(name, name) if name is not None else None


model_option = click.option(
    "--model",
    "-m",
    envvar="NENYAX_MODEL",
    default=None,
    help=f"provider:model to play with (default {DEFAULT_MODEL}); also NENYAX_MODEL.",
)
"""``--model``, the same in every command that takes a model (try, eval, check, train)."""

param_option = click.option(
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="Another sampling parameter for the model (top_p=0.9, seed=3, min_tokens=100); repeatable.",
)
constrain_option = click.option(
    "--constrain/--no-constrain",
    default=False,
    help="Let the model reply only with one of the valid actions, where there are few (constrained decoding).",
)


def judge_options(scored: str = "the score") -> Callable[[F], F]:
    """``--judge`` (repeatable) and ``--score``, declared once for eval, try and train (see core's judging)."""

    def decorate(command: F) -> F:
        command = click.option(
            "--score",
            help=f"How {scored} is composed: native (default), a judge's label, sum?LABEL=W&..., gate?on=L&then=L.",
        )(command)
        return click.option(
            "--judge",
            "judges",
            multiple=True,
            help="A judge beside the environment's own verifier, NAME?option=value (repeatable): 'llm?rubric=...'.",
        )(command)

    return decorate


def model_options(*, policy: bool = True, constrain: bool = True) -> Callable[[F], F]:
    """The model options, declared once: the same names, defaults and variables in try, eval and check.

    ``--model`` (NENYAX_MODEL), ``--policy`` (NENYAX_POLICY; a built-in policy instead of a model, where the
    command plays one), ``--max-tokens``, ``--temperature``, ``--param``, ``--constrain``, ``--base-url``
    (NENYAX_BASE_URL) and ``--api-key-env`` (NENYAX_API_KEY_ENV). `policy_or_model` settles which plays.
    """
    options = [
        model_option,
        *(
            [
                click.option(
                    "--policy",
                    envvar="NENYAX_POLICY",
                    type=click.Choice(sorted([*BUILTIN_POLICIES, *POLICY_ALIASES])),
                    default=None,
                    callback=_policy_name,
                    help="Play a built-in policy instead of a model (oracle is reference); also NENYAX_POLICY.",
                )
            ]
            if policy
            else []
        ),
        click.option("--max-tokens", type=int, default=256, show_default=True, help="Most tokens per model reply."),
        click.option("--temperature", type=float, default=0.7, show_default=True, help="Sampling temperature."),
        param_option,
        *([constrain_option] if constrain else []),
        click.option(
            "--base-url", envvar="NENYAX_BASE_URL", default=None, help="Base URL of an OpenAI-compatible server."
        ),
        click.option(
            "--api-key-env", envvar="NENYAX_API_KEY_ENV", default=None, help="Environment variable holding the API key."
        ),
    ]

    def decorate(command: F) -> F:
        for option in reversed(options):  # listed in --help in the order above
            command = option(command)
        return command

    return decorate


def provider_table(
    model: str | None,
    *,
    max_tokens: int,
    temperature: float,
    params: dict[str, Any],
    base_url: str | None,
    api_key_env: str | None,
    constrain: bool,
    chosen: frozenset[str] = frozenset({"max_tokens", "temperature"}),
) -> dict[str, Any]:
    """A model's settings as run.toml's ``[provider]`` table (what `settings_to_options` reads back).

    A ``--param`` naming max_tokens or temperature wins over those options; the other sampling
    parameters sit in ``params``. Unset values are left out. Of max_tokens and temperature, those not
    in `chosen` (the command's own defaults, not the user's) go to ``[provider.defaults]``: they apply
    only where a native loop asks for none, where the user's choices win over the loop's.
    """
    spec = model or DEFAULT_MODEL
    use, _, name = spec.partition(":")
    if not name:
        msg = f"Name the model as '<provider>:<model>', not {spec!r}."
        raise UsageError(msg)
    rest = dict(params)
    table: dict[str, Any] = {"use": use, "model": name}
    defaults = {}
    for key, value in (("max_tokens", max_tokens), ("temperature", temperature)):
        if key in rest:
            table[key] = rest.pop(key)
        elif key in chosen:
            table[key] = value
        else:
            defaults[key] = value
    table.update({k: v for k, v in (("base_url", base_url), ("api_key_env", api_key_env)) if v is not None})
    if constrain:
        table["constrain"] = True
    if rest:
        table["params"] = rest
    if defaults:
        table["defaults"] = defaults
    return table


def model_settings(model: str | None, **options: Any) -> ModelSettings:
    """`provider_table` as the typed ``[provider]`` settings a run records."""
    return ModelSettings(**provider_table(model, **options))


def chosen_options(ctx: click.Context, names: tuple[str, ...] = ("max_tokens", "temperature")) -> frozenset[str]:
    """Which of `names` the user set (command line, environment or config file), not the command's defaults."""
    return frozenset(n for n in names if ctx.get_parameter_source(n) is not ParameterSource.DEFAULT)
