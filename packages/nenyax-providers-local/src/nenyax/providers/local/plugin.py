"""Entry-point module: declares the ``local`` provider without importing torch or transformers."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_providers() -> PluginSpec:
    """The ``local`` provider (``Endpoint("local:smollm2-135m")``, ``Endpoint("local:/path/to/hf-dir")``)."""
    return PluginSpec(
        kind="provider",
        name="local",
        factory="nenyax.providers.local.provider:LocalProvider",
        summary="an in-process model (SmolLM2-135M-Instruct or a local HF folder) with exact tokens and logprobs",
    )
