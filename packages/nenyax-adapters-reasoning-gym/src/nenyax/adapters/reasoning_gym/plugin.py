"""Entry-point module: declares the adapter without importing reasoning-gym."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``reasoning_gym`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="reasoning_gym",
        factory="nenyax.adapters.reasoning_gym.adapter:ReasoningGymAdapter",
        summary="reasoning-gym procedural datasets with their native verifiers",
    )
