"""`nenyax --version`: core, CLI and every installed plugin distribution, from metadata alone."""

from __future__ import annotations

from importlib import metadata

from nenyax.cli._version import __version__


def installed_versions() -> list[tuple[str, str]]:
    """(distribution, version) for nenyax-core, nenyax-cli, then each distribution with a `nenyax` entry point.

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
    return rows + sorted(plugins)
