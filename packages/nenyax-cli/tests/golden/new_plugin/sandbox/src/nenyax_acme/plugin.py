"""The entry-point module: declares the sandbox `acme` without importing it, so discovery stays fast.

Keep it this small: nothing here may import the implementation (`nenyax_acme.sandbox`) or anything heavy.
"""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_sandboxes() -> PluginSpec:
    """The sandbox `acme`."""
    return PluginSpec(
        kind="sandbox",
        name="acme",
        factory="nenyax_acme.sandbox:AcmeSandbox",
        summary="bubblewrap, one namespace set per command (a template to edit)",
    )
