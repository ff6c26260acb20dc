"""`load(uri)`: route a URI to the adapter of its format; `EnvironmentSpec`: what rebuilds it anywhere."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Mapping
from typing import Any

import attrs

from nenyax.core.contract.uri import parse_uri
from nenyax.core.engine.environment import Environment
from nenyax.core.errors import ManifestError, UnknownPluginError, UsageError, did_you_mean, did_you_mean_pool
from nenyax.core.install import pip_install
from nenyax.core.plugins.adapter import Adapter, LoadContext
from nenyax.core.plugins.registry import Registry, default_registry, from_portable

# Formats whose adapter ships from this repository (packages/), so a suggested `pip install` names a
# distribution that exists; a format not listed here gets no install suggestion at all.
KNOWN_ADAPTERS: dict[str, str] = {
    "agentenv": "nenyax-adapters-agentenv",
    "gymnasium": "nenyax-adapters-gymnasium",
    "harbor": "nenyax-adapters-harbor",
    "hf": "nenyax-adapters-datasets",
    "hud": "nenyax-adapters-hud",
    "karotte": "nenyax-adapters-karotte",
    "lm_eval": "nenyax-adapters-lm-eval",
    "nemo_gym": "nenyax-adapters-nemo-gym",
    "openenv": "nenyax-adapters-openenv",
    "ors": "nenyax-adapters-ors",
    "reasoning_gym": "nenyax-adapters-reasoning-gym",
    "verifiers": "nenyax-adapters-verifiers",
}


LIBRARY_EXTRAS: dict[str, str] = {"hud": "hud", "lm_eval": "lm-eval"}
"""Formats whose library is an optional extra of their adapter: the install names it, or the adapter
installs without the library and fails again on the next try."""

LIBRARY_BESIDE: dict[str, str] = {"verifiers": "'verifiers>=0.3,<0.5'"}
"""Formats whose library the adapter does not install (the user picks its version): the requirement to add."""

LIBRARY_PYTHON: dict[str, tuple[str, tuple[int, int]]] = {
    "harbor": ("harbor", (3, 12)),
    "karotte": ("karotte", (3, 12)),
}
"""Formats whose library needs a newer Python than Nenyax: the library and the Python it needs (the
adapter installs on an older one, without the library)."""


def install_hint(fmt: str, python: tuple[int, ...] = tuple(sys.version_info[:3])) -> str:
    """The sentences that install the adapter of `fmt` (a first-party format) and its library on `python`."""
    hint = f" Install its adapter with {pip_install(KNOWN_ADAPTERS[fmt], LIBRARY_EXTRAS.get(fmt))}."
    if fmt in LIBRARY_BESIDE:
        hint += f" It needs the {fmt} package too, installed beside it: `pip install {LIBRARY_BESIDE[fmt]}`."
    if fmt in LIBRARY_PYTHON and python[:2] < LIBRARY_PYTHON[fmt][1]:
        library, needed = LIBRARY_PYTHON[fmt]
        here, wanted = ".".join(map(str, python)), ".".join(map(str, needed))
        hint += f" {library} itself needs Python >= {wanted} (this is Python {here}): install both under {wanted}."
    return hint


def _unknown_format(fmt: str, names: list[str]) -> str:
    """The sentence for a format no installed adapter serves: a close installed name, else a real install."""
    hint = did_you_mean(fmt, names, "format")
    if "Did you mean" in hint:
        return hint
    close = did_you_mean_pool(fmt, KNOWN_ADAPTERS)
    if fmt in KNOWN_ADAPTERS:
        return hint + install_hint(fmt)
    if close:
        return hint + f" Did you mean {close[0]!r} (its adapter installs with {pip_install(KNOWN_ADAPTERS[close[0]])})?"
    return hint


def _plugins(value: Any) -> tuple[tuple[str, str], ...] | None:
    return None if value is None else tuple((str(name), str(ref)) for name, ref in value)


@attrs.frozen(kw_only=True)
class EnvironmentSpec:
    """What an environment was loaded from: enough to rebuild it in another process or on another machine.

    Plain data (a URI, the adapter's settings table, how to rebuild the plugin registry): it pickles and
    is JSON-able as `to_data()`, so an executor sends it to its workers and each calls `load()` there.
    The rebuilt environment has the same manifest (and digest) whenever the adapter is deterministic,
    which the ``trainable/fresh-process`` check measures.
    """

    uri: str
    """The URI as it was given to `load`."""
    config: dict[str, Any] = attrs.field(factory=dict, converter=dict, hash=False)
    """The adapter's settings table (`LoadContext.config`), as it was given to `load`."""
    plugins: tuple[tuple[str, str], ...] | None = attrs.field(default=None, converter=_plugins)
    """`Registry.portable_sources()` of the registry it was loaded with; None for the installed plugins."""

    def load(self) -> Environment:
        """Load the environment this spec describes, here."""
        return load(self)

    def to_data(self) -> dict[str, Any]:
        """The spec as JSON-able data (`from_data` reads it back)."""
        data: dict[str, Any] = {"uri": self.uri, "config": dict(self.config)}
        if self.plugins is not None:
            data["plugins"] = [list(p) for p in self.plugins]
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> EnvironmentSpec:
        """Read back what `to_data` wrote."""
        return cls(uri=data["uri"], config=data.get("config") or {}, plugins=data.get("plugins"))


def load(
    uri: str | EnvironmentSpec, *, registry: Registry | None = None, config: Mapping[str, Any] | None = None
) -> Environment:
    """Load the environment `uri` names (``<format>:<name>?k=v``) with its format's adapter.

    `registry` picks the plugins in use (the installed ones by default); `config` is handed to the
    adapter as its settings table. An `EnvironmentSpec` (``env.source`` of an environment loaded
    elsewhere) carries all three: ``load(spec)`` rebuilds that environment here. The environment
    returned keeps what it was loaded from as ``env.source``.
    """
    if isinstance(uri, EnvironmentSpec):
        if registry is not None or config is not None:
            msg = "An EnvironmentSpec carries its own registry and config; pass the spec alone to load()."
            raise UsageError(msg)
        spec = uri
        registry = None if spec.plugins is None else from_portable(list(spec.plugins))
        uri, config = spec.uri, spec.config
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
    env.source, env.source_problem = _source(uri, config, registry)
    return env


def _source(
    uri: str, config: Mapping[str, Any] | None, registry: Registry | None
) -> tuple[EnvironmentSpec | None, str | None]:
    """The spec of what was just loaded, or None and why it cannot be rebuilt elsewhere."""
    try:
        plugins = None if registry is None else registry.portable_sources()
    except (pickle.PicklingError, TypeError, AttributeError) as exc:  # a plugin object that does not pickle
        return None, f"it was loaded with a plugin object that cannot be pickled ({type(exc).__name__}: {exc})"
    return EnvironmentSpec(uri=uri, config=dict(config or {}), plugins=plugins), None
