"""What the conformance kit checks: one plugin, looked up in a registry, built with the options it is given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from nenyax.core.plugins.interfaces import declared
from nenyax.core.plugins.registry import Registered, Registry, default_registry


@attrs.define
class Subject:
    """A plugin under test, with its registry (installed entry points, or in-memory for tests).

    ``Subject("provider", "openai", options={"base_url": "http://127.0.0.1:8000/v1"})`` builds the
    plugin as ``factory(**options)`` (`nenyax.core.kinds.FACTORY_CONVENTION`): a plugin that needs a
    setting to start (a key, a server) is checked with the options a user would give it.
    """

    kind: str
    name: str
    registry: Registry = attrs.field(factory=default_registry)
    installed: bool = True
    """True when the registry reads installed entry points (enables the subprocess laziness check)."""
    options: Mapping[str, Any] = attrs.field(factory=dict)
    """Keyword options the factory is called with."""
    shared: dict[str, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False)
    """What a kind's checks share about this plugin, by key: one real exchange (a provider's model call)
    read by several checks, so a slow plugin is asked once."""
    _instance: Any = None

    @classmethod
    def from_environment(cls, kind: str, name: str, options: Mapping[str, Any] | None = None) -> Subject:
        """The installed plugin `name` of `kind`."""
        return cls(kind=kind, name=name, registry=default_registry(), installed=True, options=dict(options or {}))

    @classmethod
    def from_registry(
        cls, kind: str, name: str, registry: Registry, options: Mapping[str, Any] | None = None
    ) -> Subject:
        """A plugin in an explicit (usually in-memory) registry."""
        return cls(kind=kind, name=name, registry=registry, installed=False, options=dict(options or {}))

    @property
    def entry(self) -> Registered:
        """The registry's record of the plugin (raises when it is not registered)."""
        return self.registry.get(self.kind, self.name)

    def instance(self) -> Any:
        """The object ``factory(**options)`` returns (created once)."""
        if self._instance is None:
            self._instance = self.registry.create(self.kind, self.name, **self.options)
        return self._instance

    def declared(self) -> frozenset[str]:
        """The capabilities the plugin's instance declares (what gates the kit's capability checks)."""
        return declared(self.instance())
