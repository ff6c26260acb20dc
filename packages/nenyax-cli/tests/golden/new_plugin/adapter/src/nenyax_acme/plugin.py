"""The entry-point module: declares the adapter `acme` without importing it, so discovery stays fast.

Keep it this small: nothing here may import the implementation (`nenyax_acme.adapter`) or anything heavy.
"""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The adapter `acme`."""
    return PluginSpec(
        kind="adapter",
        name="acme",
        factory="nenyax_acme.adapter:AcmeAdapter",
        summary="the acme format: words to spell backwards (a template to edit)",
    )
