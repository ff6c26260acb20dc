"""Entry-point module: declares the ``local`` and ``tokens`` providers without importing torch or transformers."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_providers() -> list[PluginSpec]:
    """The ``local`` provider (``Endpoint("local:smollm2-135m")``, ``Endpoint("local:/path/to/hf-dir")``) and
    the ``tokens`` provider (``Endpoint("tokens:/path/to/hf-dir", base_url="http://127.0.0.1:8000")``)."""
    return [
        PluginSpec(
            kind="provider",
            name="local",
            factory="nenyax.providers.local.provider:LocalProvider",
            summary="an in-process model (SmolLM2-135M-Instruct or a local HF folder) with exact tokens and logprobs",
        ),
        PluginSpec(
            kind="provider",
            name="tokens",
            factory="nenyax.providers.local.token_server:TokenServerProvider",
            summary="a token-in/token-out server (vLLM, SGLang): the chat template here, each turn on the exact ids",
        ),
    ]
