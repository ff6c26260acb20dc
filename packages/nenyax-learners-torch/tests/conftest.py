"""Shared fixtures: the embedded model's folder (through the provider registry) and a tiny model of its vocabulary."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from nenyax.core.plugins.registry import default_registry


@pytest.fixture(scope="session")
def smollm_folder() -> Path:
    """The embedded SmolLM2-135M-Instruct's Hugging Face folder (converted once into the Nenyax cache)."""
    provider = default_registry().create("provider", "local")
    return Path(provider.weights("smollm2-135m"))


@pytest.fixture(scope="session")
def tokenizer(smollm_folder: Path):  # type: ignore[no-untyped-def]
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm_folder, local_files_only=True)


@pytest.fixture(scope="session")
def make_tiny():  # type: ignore[no-untyped-def]
    """Builds a randomly initialised Llama (see `tiny_llama`)."""
    return tiny_llama


def tiny_llama(vocab_size: int, seed: int = 0):  # type: ignore[no-untyped-def]
    """A randomly initialised Llama of SmolLM2's vocabulary and a few hundred thousand parameters (no Hub)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=128,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config).float()
