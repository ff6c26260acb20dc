"""Shared fixtures: one real SmolLM2-135M-Instruct, loaded once per test session.

The first run converts the packaged GGUF into the user cache (~20-30 s); later runs reload the
cached float32 folder in about a second.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch

from nenyax.core.contract.chat import ChatRequest
from nenyax.core.contract.trajectory import ModelCall
from nenyax.providers.local.engine import Engine
from nenyax.providers.local.provider import LocalProvider

MODEL = "smollm2-135m"

# The real vLLM's tests run in `nox -s vllm`, which builds vLLM's server venv and names its interpreter in
# NENYAX_VLLM_PYTHON; the package's own session does not collect them.
collect_ignore = [] if os.environ.get("NENYAX_VLLM_PYTHON") else ["vllm"]


@pytest.fixture(scope="session")
def provider() -> LocalProvider:
    """The provider under test; every test shares its (single) loaded model."""
    return LocalProvider()


@pytest.fixture(scope="session")
def engine(provider: LocalProvider) -> Engine:
    """The loaded engine behind `provider`, for its model and tokenizer."""
    engine = provider.engine(MODEL)
    engine.load()
    return engine


@pytest.fixture(scope="session")
def tokenizer(engine: Engine) -> Any:
    """A tokenizer loaded independently from the model folder, as any consumer of a trajectory would."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(engine.folder, local_files_only=True)


@pytest.fixture(scope="session")
def ask(provider: LocalProvider) -> Callable[..., ModelCall]:
    """``ask("question", **params)``: one user message to the default model, synchronously."""

    def ask(content: str, **params: Any) -> ModelCall:
        request = ChatRequest(model=MODEL, messages=({"role": "user", "content": content},), params=params)
        return asyncio.run(provider.complete(request))

    return ask


@pytest.fixture(scope="session")
def teacher_forced(engine: Engine) -> Callable[[Sequence[int], Sequence[int]], list[float]]:
    """``teacher_forced(prompt_ids, completion_ids)``: each completion token's logprob in one plain forward pass.

    One unpadded sequence, no KV cache, no sampling: an independent route to the same numbers.
    """

    def teacher_forced(prompt: Sequence[int], completion: Sequence[int]) -> list[float]:
        ids = torch.tensor([[*prompt, *completion]])
        with torch.inference_mode():
            logits = engine.model(input_ids=ids).logits[0].float()
        logprobs = torch.log_softmax(logits, dim=-1)
        start = len(prompt) - 1
        return [float(logprobs[start + i, token]) for i, token in enumerate(completion)]

    return teacher_forced
