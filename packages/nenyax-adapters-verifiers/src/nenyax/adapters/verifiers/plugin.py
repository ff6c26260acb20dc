"""Entry-point module: declares the adapter without importing verifiers or the adapter itself."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``verifiers`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="verifiers",
        factory="nenyax.adapters.verifiers.adapter:VerifiersAdapter",
        summary="Prime Intellect verifiers environments (legacy 0.3 API and v1 tasksets), run through their own loop",
    )
