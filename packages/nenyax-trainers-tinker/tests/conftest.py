"""Shared fixtures: the embedded SmolLM2's folder (tokenizer, renderer) and the sampling client over it."""

import pytest
from embedded_sampler import EmbeddedSamplingClient  # beside the tests, on `pythonpath`

from nenyax.providers.local.provider import LocalProvider

URI = "reasoning_gym:basic_arithmetic?size=2"
RENDERER = "qwen3_instruct"
"""The cookbook renderer for SmolLM2's chat format: plain ChatML, no thinking (checked in test_group_rollouts.py)."""


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def model_folder() -> str:
    """The embedded SmolLM2-135M-Instruct as a transformers folder: the tokenizer the renderer uses."""
    return str(LocalProvider().weights("smollm2-135m"))


@pytest.fixture
def client(model_folder):
    from tinker_cookbook.tokenizer_utils import get_tokenizer

    return EmbeddedSamplingClient(stop_ids={get_tokenizer(model_folder).eos_token_id})
