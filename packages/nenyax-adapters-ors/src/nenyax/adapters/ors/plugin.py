"""Entry-point module: declares the ``ors`` adapter without importing aiohttp."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``ors`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="ors",
        factory="nenyax.adapters.ors.adapter:OrsAdapter",
        summary="a running ORS (Open Reward Standard) server over HTTP: its tools become the session's actions",
    )
