"""``--param KEY=VALUE``: further sampling parameters, values written as in a URI query."""

from __future__ import annotations

from typing import Any

import click

from nenyax.core import UsageError
from nenyax.core.contract.chat import SAMPLING_KEYS
from nenyax.core.contract.uri import parse_value
from nenyax.core.errors import did_you_mean_pool


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
        out[key] = parse_value(text)
    return out


# The model options `try` and `eval` share, spelled once.
param_option = click.option(
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="Another sampling parameter for the model (top_p=0.9, seed=3, min_tokens=100); repeatable.",
)
constrain_option = click.option(
    "--constrain",
    is_flag=True,
    default=False,
    help="Let the model reply only with one of the valid actions, where there are few (constrained decoding).",
)
