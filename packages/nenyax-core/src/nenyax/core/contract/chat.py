"""A chat request as every provider receives it (the response is a `ModelCall`)."""

from __future__ import annotations

from typing import Any

import attrs

SAMPLING_KEYS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "min_tokens",
        "seed",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "n",
        "guided_choice",
    }
)
"""Sampling parameters an Endpoint passes through to its provider."""


@attrs.frozen(kw_only=True)
class ChatRequest:
    """One chat completion request, provider-neutral (OpenAI's message and tool shapes)."""

    model: str
    """The model name as the provider knows it."""
    messages: tuple[dict[str, Any], ...]
    """Chat messages: ``{"role": ..., "content": ...}`` (plus tool calls / tool results)."""
    tools: tuple[dict[str, Any], ...] = ()
    """OpenAI-style tool schemas offered to the model."""
    params: dict[str, Any] = attrs.field(factory=dict)
    """Sampling parameters (temperature, top_p, max_tokens, seed, stop...)."""
    logprobs: bool = True
    """Ask for per-token logprobs (and token ids where the server can return them)."""
