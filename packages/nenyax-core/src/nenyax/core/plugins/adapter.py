"""The `adapter` kind: loads URIs of one format into environments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from nenyax.core.plugins.registry import Registry

if TYPE_CHECKING:
    from nenyax.core.contract.uri import EnvURI
    from nenyax.core.engine.environment import Environment


@attrs.frozen(kw_only=True)
class LoadContext:
    """What `load` hands an adapter besides the URI, so no adapter reaches for a global registry."""

    registry: Registry
    """The plugins in use: an adapter finds its judges, sandboxes and providers here."""
    config: Mapping[str, Any] = attrs.field(factory=dict)
    """Settings from the run config's table for this format (``[adapters.<format>]``), if any."""


@attrs.frozen(kw_only=True)
class Listing:
    """One environment an adapter can load, as `nenyax list` shows it."""

    uri: str
    """A URI that loads it."""
    description: str = ""
    """One line, where the format has one (a dataset's docstring, a file's size); else empty."""
    unavailable: str | None = None
    """Why it cannot load here (a sentence: a library gone, a dependency missing); None when it can.
    An adapter lists such an entry, marked, rather than hide what its format registers."""


@attrs.frozen(kw_only=True)
class AdapterCapabilities:
    """What an adapter declares beyond loading (its ``capabilities`` attribute); the kit checks each claim."""

    listing: bool = False
    """It has `Lister.listing`: it can say what it can load here (`nenyax list` calls it)."""


@runtime_checkable
class Lister(Protocol):
    """The ``listing`` capability of an adapter: what it can load on this machine."""

    def listing(self, where: str | None = None) -> Sequence[Listing]:
        """What the adapter can load here (the datasets a library registers, the files a folder holds).

        `where` narrows it (e.g. a folder). A listing that also takes ``imports: tuple[str, ...]`` is
        handed the modules of ``nenyax list --import`` not yet imported, to import itself (so it can
        tell which entries each one adds).
        """
        ...


@runtime_checkable
class Adapter(Protocol):
    """Loads URIs of one format into environments.

    Optional capabilities are declared in ``capabilities`` (`AdapterCapabilities`): an adapter
    declaring ``listing`` also implements `Lister` (`nenyax list` says "cannot list" for the others).
    """

    def load(self, uri: EnvURI, context: LoadContext) -> Environment:
        """Return the environment `uri` names (a Step-, Rollout- or TaskEnvironment).

        Raise `BadURIError` (one sentence saying what exists instead) when it names none, and load
        eagerly enough that a bad option fails here, not in the first episode.
        """
        ...

    def examples(self) -> Sequence[str]:
        """A few URIs of this format that load here, for conformance checks and help text."""
        ...
