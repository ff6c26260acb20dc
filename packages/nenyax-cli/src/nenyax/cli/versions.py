"""`nenyax --version`: core, CLI and every installed plugin distribution, from metadata alone."""

from __future__ import annotations

from importlib import metadata

from nenyax.cli._version import __version__

SERVERS: dict[str, tuple[str, str]] = {"nenyax-server-openenv": ("openenv", "nenyax serve")}
"""Distributions a command reaches through an import seam rather than an entry point (servers are not a
plugin kind): distribution -> (name, the command that uses it)."""


def installed_servers() -> list[dict[str, str]]:
    """Each installed distribution of `SERVERS`, from its metadata: name, distribution, version, used_by."""
    rows = []
    for dist, (name, used_by) in SERVERS.items():
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
        rows.append({"name": name, "distribution": dist, "version": version, "used_by": used_by})
    return rows


def installed_versions() -> list[tuple[str, str]]:
    """(distribution, version) for nenyax-core, nenyax-cli, then each distribution with a `nenyax` entry
    point or named in `SERVERS`.

    Reads package metadata only: no plugin module is imported, so a broken plugin still shows its version.
    """
    rows = [("nenyax-cli", __version__)]
    try:
        rows.insert(0, ("nenyax-core", metadata.version("nenyax-core")))
    except metadata.PackageNotFoundError:  # a source checkout on sys.path without metadata
        from nenyax.core._version import __version__ as core_version

        rows.insert(0, ("nenyax-core", core_version))
    seen = {name for name, _ in rows}
    plugins = set()
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if name in seen or not any(ep.group == "nenyax" for ep in dist.entry_points):
            continue
        plugins.add((name, dist.version))
    plugins.update((row["distribution"], row["version"]) for row in installed_servers())
    return rows + sorted(plugins)
