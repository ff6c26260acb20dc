"""The entry-point module: declares the tracer `acme` without importing it, so discovery stays fast.

Keep it this small: nothing here may import the implementation (`nenyax_acme.tracer`) or anything heavy.
"""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_tracers() -> PluginSpec:
    """The tracer `acme`."""
    return PluginSpec(
        kind="tracer",
        name="acme",
        factory="nenyax_acme.tracer:AcmeTracer",
        summary="core's GenAI spans to an OTLP/HTTP collector, counted (a template to edit)",
    )
