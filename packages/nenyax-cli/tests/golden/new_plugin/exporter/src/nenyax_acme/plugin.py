"""The entry-point module: declares the exporter `acme` without importing it, so discovery stays fast.

Keep it this small: nothing here may import the implementation (`nenyax_acme.exporter`) or anything heavy.
"""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_exporters() -> PluginSpec:
    """The exporter `acme`."""
    return PluginSpec(
        kind="exporter",
        name="acme",
        factory="nenyax_acme.exporter:AcmeExporter",
        summary="one JSON array per destination (a template to edit)",
    )
