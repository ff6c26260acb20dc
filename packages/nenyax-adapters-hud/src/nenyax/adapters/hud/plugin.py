"""Entry-point module: declares the adapter without importing hud or the adapter itself."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``hud`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="hud",
        factory="nenyax.adapters.hud.adapter:HudAdapter",
        summary="HUD tasksets (@env.template tasks), run by hud's LocalRuntime and its OpenAI-compatible chat agent",
    )
