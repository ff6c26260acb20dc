"""What an ``agentenv:`` URI names: a bundle (a folder, or a bundle an installed package ships), and its options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from nenyax.core import BadURIError, EnvURI
from nenyax.core.toolkit.options import Option, Options

OPTIONS = Options(
    "agentenv",
    Option("task", str, help="Only this task of the bundle (its file name under tasks/, without .json)."),
    Option("max_turns", int, default=8, positive=True, help="Model calls the agent may make per prompt."),
    Option("turn_timeout", float, positive=True, help="Seconds each prompt may take (AgentEnv's own when unset)."),
)
"""The query keys (and ``[adapters.agentenv]`` config keys) the adapter reads; any other is refused."""


@attrs.frozen(kw_only=True)
class AgentEnvSpec:
    """A parsed ``agentenv:<bundle>?...`` URI."""

    uri: str
    bundle: str
    """A bundle folder, or the name of a bundle an installed package ships (AgentEnv's own lookup)."""
    task: str | None = None
    max_turns: int = 8
    turn_timeout: float | None = None


def parse_spec(uri: EnvURI, config: Mapping[str, Any] | None = None) -> AgentEnvSpec:
    """The URI's bundle and options; the run config's ``[adapters.agentenv]`` table gives defaults."""
    target = uri.target.strip()
    if not target:
        raise BadURIError("Name an AgentEnv bundle: 'agentenv:<bundle folder>' or 'agentenv:<installed bundle name>'.")
    read = OPTIONS.read(uri, defaults=config)
    return AgentEnvSpec(
        uri=uri.raw, bundle=target, task=read["task"], max_turns=read["max_turns"], turn_timeout=read["turn_timeout"]
    )
