"""Entry-point module: declares the adapter without importing karotte or the adapter itself."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``karotte`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="karotte",
        factory="nenyax.adapters.karotte.adapter:KarotteAdapter",
        summary="Karotte environments (karotte create-env projects), run by `karotte run` on podman or docker",
    )
