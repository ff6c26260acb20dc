"""Entry-point module: declares the adapter without importing aiohttp or jsonschema."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``openenv`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="openenv",
        factory="nenyax.adapters.openenv.adapter:OpenEnvAdapter",
        summary="A running OpenEnv server (openenv 0.10 or openenv-core 0.3) over its /ws protocol",
    )
