"""Core's own entry-point module: the ``openai`` provider and the ``return`` judge, declared lazily like any plugin."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_providers() -> PluginSpec:
    """Any OpenAI-compatible chat server."""
    return PluginSpec(
        kind="provider",
        name="openai",
        factory="nenyax.core.models.openai_provider:OpenAIProvider",
        summary="any OpenAI-compatible chat server (token ids and logprobs when it returns them)",
    )


@hookimpl
def nenyax_register_judges() -> PluginSpec:
    """The episode's return, for step environments whose rewards are the signal."""
    return PluginSpec(
        kind="judge",
        name="return",
        factory="nenyax.core.engine.judges:ReturnJudge",
        summary="the undiscounted sum of step rewards (passed at the env's reward threshold)",
    )
