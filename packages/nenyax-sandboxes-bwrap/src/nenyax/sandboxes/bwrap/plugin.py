"""Entry-point module: declares the backend without importing it."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_sandboxes() -> PluginSpec:
    """The ``bwrap`` sandbox."""
    return PluginSpec(
        kind="sandbox",
        name="bwrap",
        factory="nenyax.sandboxes.bwrap.backend:BwrapSandbox",
        summary="bubblewrap namespaces on this machine: the host read-only, cgroup limits, no daemon",
    )
