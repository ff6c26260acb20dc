"""The embedded SmolLM2-135M behind `nenyax serve-model`: the inference engine SkyRL's generator would reach
(an OpenAI-compatible server returning vLLM's token ids and logprobs)."""

from __future__ import annotations

import pytest

from nenyax_testsupport.served_model import served_model


def _import_skyrl() -> None:
    """skyrl's generator and output-check modules (torch, ray): imported while the engine loads its model."""
    import skyrl.train.generators.base
    import skyrl.train.utils.trainer_utils  # noqa: F401


@pytest.fixture(scope="session")
def engine_url():
    """The engine's URL as SkyRL's ``get_endpoint_url()`` gives it (without ``/v1``)."""
    with served_model(meanwhile=_import_skyrl) as url:
        yield url.removesuffix("/v1")


@pytest.fixture(scope="session")
def tokenizer():
    from transformers import AutoTokenizer

    from nenyax.providers.local.provider import LocalProvider

    return AutoTokenizer.from_pretrained(LocalProvider().weights("smollm2-135m"), local_files_only=True)
