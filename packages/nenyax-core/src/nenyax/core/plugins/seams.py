"""Backends and servers another distribution provides, found by entry point like every plugin.

They are not plugin kinds (no hook, no conformance kit): a distribution names each under an entry-point
group of its own, the name pointing at an import string that is resolved only when it is used::

    [project.entry-points."nenyax.executors"]   # where episodes run: `backend="ray"`, `--backend ray`
    ray = "nenyax.ray.executor:RayExecutor"

    [project.entry-points."nenyax.servers"]     # what `nenyax serve` serves with
    openenv = "nenyax.server.openenv:serve"

Core never names another distribution's module: it names only the distribution to install for a seam
that is missing (`KNOWN`), as it does for adapters.
"""

from __future__ import annotations

import importlib.metadata as md

EXECUTORS = "nenyax.executors"
"""The entry-point group of executors: name -> ``"module:Class"`` taking ``workers=`` (and ``address=``)."""

SERVERS = "nenyax.servers"
"""The entry-point group of servers: name -> ``"module:function"`` (`nenyax serve` uses ``openenv``)."""

KNOWN: dict[str, dict[str, str]] = {
    EXECUTORS: {"ray": "nenyax-ray"},
    SERVERS: {"openenv": "nenyax-server-openenv"},
}
"""Per group, the seams published distributions provide: name -> the distribution to install."""


def installed(group: str) -> dict[str, str]:
    """``{name: "module:attr"}`` of every entry point in `group` (metadata only: nothing is imported)."""
    return {ep.name: ep.value for ep in md.entry_points(group=group)}


def distribution_of(group: str, name: str) -> str | None:
    """The published distribution that provides seam `name` of `group`, or None when none is known."""
    return KNOWN.get(group, {}).get(name)
