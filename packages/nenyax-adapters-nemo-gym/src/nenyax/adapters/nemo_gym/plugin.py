"""Entry-point module: declares the adapter without importing aiohttp or the adapter itself."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``nemo_gym`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="nemo_gym",
        factory="nenyax.adapters.nemo_gym.adapter:NemoGymAdapter",
        summary="NeMo Gym resources servers over HTTP (/seed_session, tools, /verify)",
    )
