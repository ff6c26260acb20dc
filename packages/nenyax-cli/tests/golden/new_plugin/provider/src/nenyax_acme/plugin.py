"""The entry-point module: declares the provider `acme` without importing it, so discovery stays fast.

Keep it this small: nothing here may import the implementation (`nenyax_acme.provider`) or anything heavy.
"""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_providers() -> PluginSpec:
    """The provider `acme`."""
    return PluginSpec(
        kind="provider",
        name="acme",
        factory="nenyax_acme.provider:AcmeProvider",
        summary="an in-process model that echoes the last message (a template)",
    )
