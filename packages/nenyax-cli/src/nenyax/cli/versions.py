"""`nenyax --version`: core, CLI and every installed plugin distribution, from metadata alone."""

from __future__ import annotations

from importlib import metadata

from nenyax.cli._version import __version__
from nenyax.core.plugins import seams

USED_BY = {seams.SERVERS: "nenyax serve", seams.EXECUTORS: "nenyax eval --backend"}
"""Who uses each entry-point group of seams (`nenyax.core.plugins.seams`): servers and backends are no plugin kind."""


def installed_servers() -> list[dict[str, str]]:
    """Servers and backends other distributions install: name, distribution, version, used_by."""
    rows = []
    for dist in metadata.distributions():
        for ep in dist.entry_points:
            if ep.group in USED_BY:
                used_by = USED_BY[ep.group]
                rows.append(
                    {
                        "name": ep.name,
                        "distribution": dist.metadata["Name"],
                        "version": dist.version,
                        "used_by": used_by,
                    }
                )
    return sorted(rows, key=lambda row: (row["used_by"], row["name"]))


def installed_versions() -> list[tuple[str, str]]:
    """(distribution, version) for nenyax-core, nenyax-cli, then each distribution with a `nenyax` entry
    point, a server or a backend.

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
