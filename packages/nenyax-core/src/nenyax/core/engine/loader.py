"""`load(uri)`: route a URI to the adapter of its format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nenyax.core.contract.uri import parse_uri
from nenyax.core.engine.environment import Environment
from nenyax.core.errors import ManifestError, UnknownPluginError, did_you_mean
from nenyax.core.plugins.adapter import Adapter, LoadContext
from nenyax.core.plugins.registry import Registry, default_registry


def load(uri: str, *, registry: Registry | None = None, config: Mapping[str, Any] | None = None) -> Environment:
    """Load the environment `uri` names (``<format>:<name>?k=v``) with its format's adapter.

    `registry` picks the plugins in use (the installed ones by default); `config` is handed to the
    adapter as its settings table.
    """
    parsed = parse_uri(uri)
    reg = registry or default_registry()
    names = reg.names("adapter")
    if parsed.format not in names:
        hint = did_you_mean(parsed.format, names, "format")
        if "Did you mean" not in hint:
            hint += f" Install its adapter, e.g. `pip install nenyax-adapters-{parsed.format.replace('_', '-')}`."
        msg = f"No adapter for format {parsed.format!r} is installed." + hint
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
