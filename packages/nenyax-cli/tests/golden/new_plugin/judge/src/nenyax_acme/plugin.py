"""The entry-point module: declares the judge `acme` without importing it, so discovery stays fast.

Keep it this small: nothing here may import the implementation (`nenyax_acme.judge`) or anything heavy.
"""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_judges() -> PluginSpec:
    """The judge `acme`."""
    return PluginSpec(
        kind="judge",
        name="acme",
        factory="nenyax_acme.judge:AcmeJudge",
        summary="exact match, ignoring case and surrounding space (a template to edit)",
    )
