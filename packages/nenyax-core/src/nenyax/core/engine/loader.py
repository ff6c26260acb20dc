"""`load(uri)`: route a URI to the adapter of its format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nenyax.core.contract.uri import parse_uri
from nenyax.core.engine.environment import Environment
from nenyax.core.errors import ManifestError, UnknownPluginError, did_you_mean, did_you_mean_pool
from nenyax.core.plugins.adapter import Adapter, LoadContext
from nenyax.core.plugins.registry import Registry, default_registry

# Formats whose adapter ships from this repository (packages/), so a suggested `pip install` names a
# distribution that exists; a format not listed here gets no install suggestion at all.
KNOWN_ADAPTERS: dict[str, str] = {
    "gymnasium": "nenyax-adapters-gymnasium",
    "hf": "nenyax-adapters-datasets",
    "nemo_gym": "nenyax-adapters-nemo-gym",
    "openenv": "nenyax-adapters-openenv",
    "ors": "nenyax-adapters-ors",
    "reasoning_gym": "nenyax-adapters-reasoning-gym",
}


def _unknown_format(fmt: str, names: list[str]) -> str:
    """The sentence for a format no installed adapter serves: a close installed name, else a real install."""
    hint = did_you_mean(fmt, names, "format")
    if "Did you mean" in hint:
        return hint
    close = did_you_mean_pool(fmt, KNOWN_ADAPTERS)
    if fmt in KNOWN_ADAPTERS:
        return hint + f" Its adapter is installed with `pip install {KNOWN_ADAPTERS[fmt]}`."
    if close:
        return hint + f" Did you mean {close[0]!r} (installed with `pip install {KNOWN_ADAPTERS[close[0]]}`)?"
    return hint


def load(uri: str, *, registry: Registry | None = None, config: Mapping[str, Any] | None = None) -> Environment:
    """Load the environment `uri` names (``<format>:<name>?k=v``) with its format's adapter.

    `registry` picks the plugins in use (the installed ones by default); `config` is handed to the
    adapter as its settings table.
    """
    parsed = parse_uri(uri)
    reg = registry or default_registry()
    names = reg.names("adapter")
    if parsed.format not in names:
        msg = f"No adapter for format {parsed.format!r} is installed." + _unknown_format(parsed.format, names)
        raise UnknownPluginError(msg)
    adapter = reg.create("adapter", parsed.format)
    if not isinstance(adapter, Adapter):
        msg = f"The {parsed.format!r} adapter's factory returned {type(adapter).__name__}, which is not an Adapter."
        raise ManifestError(msg)
    env = adapter.load(parsed, LoadContext(registry=reg, config=dict(config or {})))
    if not isinstance(env, Environment):
        msg = f"The {parsed.format!r} adapter returned {type(env).__name__} for {uri!r}, not an Environment."
        raise ManifestError(msg)
    if env.manifest.format != parsed.format:
        msg = f"The {parsed.format!r} adapter returned a manifest of format {env.manifest.format!r}."
        raise ManifestError(msg)
    return env
