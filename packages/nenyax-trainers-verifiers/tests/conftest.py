"""`nenyax serve-model`: the embedded SmolLM2-135M behind an OpenAI-compatible server that returns the token ids
and logprobs it sampled (vLLM's ``return_token_ids`` shape): what verifiers' runner plays against here."""

from __future__ import annotations

import pytest

from nenyax_testsupport.served_model import served_model


@pytest.fixture(scope="session")
def served():
    with served_model() as url:
        yield url
