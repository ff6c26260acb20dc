"""Entry-point module: declares the adapter without importing gymnasium."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``gymnasium`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="gymnasium",
        factory="nenyax.adapters.gymnasium.adapter:GymnasiumAdapter",
        summary="Gymnasium environments (registered ids or env classes) with a text codec for chat models",
    )
