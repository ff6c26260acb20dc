"""Entry-point module: declares the adapter without importing harbor or the adapter itself."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``harbor`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="harbor",
        factory="nenyax.adapters.harbor.adapter:HarborAdapter",
        summary="Harbor task folders (task.toml, tests/test.sh), run by harbor's own trials and agents in a sandbox",
    )
