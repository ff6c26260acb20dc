"""Core's own entry-point module: the built-in ``openai`` provider (declared lazily, like any plugin)."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_providers() -> PluginSpec:
    """Any OpenAI-compatible chat server."""
    return PluginSpec(
        kind="provider",
        name="openai",
        factory="nenyax.core.openai_provider:OpenAIProvider",
        summary="any OpenAI-compatible chat server (token ids and logprobs when it returns them)",
    )
