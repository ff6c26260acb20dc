"""Entry-point module: declares the adapter without importing agent_env or the adapter itself."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``agentenv`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="agentenv",
        factory="nenyax.adapters.agentenv.adapter:AgentEnvAdapter",
        summary="AgentEnv bundles (agentenv-framework): each task an AgentEnv episode whose agent the policy plays",
    )
