"""What the conformance kit checks: one plugin, looked up in a registry."""

from __future__ import annotations

from typing import Any

import attrs

from nenyax.core.plugins.registry import Registered, Registry, default_registry


@attrs.define
class Subject:
    """A plugin under test, with its registry (installed entry points, or in-memory for tests)."""

    kind: str
    name: str
    registry: Registry
    installed: bool
    """True when the registry reads installed entry points (enables the subprocess laziness check)."""
    _instance: Any = None

    @classmethod
    def from_environment(cls, kind: str, name: str) -> Subject:
        """The installed plugin `name` of `kind`."""
        return cls(kind=kind, name=name, registry=default_registry(), installed=True)

    @classmethod
    def from_registry(cls, kind: str, name: str, registry: Registry) -> Subject:
        """A plugin in an explicit (usually in-memory) registry."""
        return cls(kind=kind, name=name, registry=registry, installed=False)

    @property
    def entry(self) -> Registered:
        """The registry's record of the plugin (raises when it is not registered)."""
        return self.registry.get(self.kind, self.name)

    def instance(self) -> Any:
        """The object the plugin's factory returns (created once)."""
        if self._instance is None:
            self._instance = self.registry.create(self.kind, self.name)
        return self._instance
