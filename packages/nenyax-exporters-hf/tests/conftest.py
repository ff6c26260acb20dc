"""A tiny causal LM built from a config on this machine (no Hub): two Llama layers, a few thousand weights.

Its tokenizer is the embedded model's (SmolLM2), where a `nenyax` run cached it under
~/.cache/nenyax/models, since the recorded token ids are SmolLM2's; otherwise one built here with
`tokenizers` (a word-level vocabulary and a ChatML template), enough for TRL to render messages.
"""

from __future__ import annotations

from pathlib import Path

import pytest

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def cached_tokenizer_dir() -> Path | None:
    """The folder of a SmolLM2 tokenizer the embedded model cached, if any."""
    root = Path.home() / ".cache" / "nenyax" / "models"
    found = sorted(root.glob("SmolLM2-135M-Instruct*/tokenizer.json"))
    return found[-1].parent if found else None


def tokenizer():
    """The SmolLM2 tokenizer if cached, else a word-level one built here."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    cached = cached_tokenizer_dir()
    if cached is not None:
        tok = AutoTokenizer.from_pretrained(cached)
    else:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        built = Tokenizer(models.WordLevel(unk_token="<unk>"))
        built.pre_tokenizer = pre_tokenizers.Whitespace()
        special = ["<unk>", "<pad>", "<|im_start|>", "<|im_end|>"]
        built.train_from_iterator(["user assistant system tool"], trainers.WordLevelTrainer(special_tokens=special))
        tok = PreTrainedTokenizerFast(
            tokenizer_object=built, unk_token="<unk>", pad_token="<pad>", eos_token="<|im_end|>"
        )
        tok.chat_template = CHATML
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def model(vocab_size: int):
    """A two-layer Llama of hidden size 16, randomly initialised, on the CPU."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=1024,
    )
    return LlamaForCausalLM(config)


@pytest.fixture
def tiny_tokenizer():
    """`tokenizer()`."""
    return tokenizer()


@pytest.fixture
def tiny_model():
    """`model`, called with the vocabulary size."""
    return model
