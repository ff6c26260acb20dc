"""A chat request as every provider receives it (the response is a `ModelCall`), and its text-completion twin."""

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
"""Sampling parameters an `Endpoint` takes as keywords (the user's own, which win over a native loop's)."""

WIRE_KEYS = frozenset({"model", "messages", "tools", "stream", "stream_options", "logprobs", "n", "return_token_ids"})
"""Chat request fields that are not parameters: they shape the request itself (`ChatRequest`'s own fields,
streaming, ``n``, which the recording proxy serves as ``n`` recorded calls, and vLLM's ``return_token_ids``:
the proxy returns the ids wherever they were recorded, asked or not)."""


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
    """Every other field the caller set: sampling parameters (temperature, top_p, max_tokens, seed, stop...)
    and the rest of OpenAI's request (``tool_choice``, ``top_logprobs``, ``response_format``,
    ``logit_bias``...). A provider honours them or refuses the request (`RequestRefused`), never drops one."""
    logprobs: bool = True
    """Ask for per-token logprobs (and token ids where the server can return them)."""
    episode_seed: int | None = None
    """A sampling seed the episode derived for this call (from its task, seed, sample and the call's place in
    it, `EpisodeRecorder`): an `Endpoint` sends it as ``seed`` to a provider that takes one, unless the request
    or the user already set a seed, so the same episode samples the same tokens again."""


@attrs.frozen(kw_only=True)
class TextRequest:
    """One raw text completion (``/v1/completions``): a prompt continued as it is, with no chat template."""

    model: str
    prompt: str | tuple[int, ...]
    """The prompt text, or its token ids."""
    params: dict[str, Any] = attrs.field(factory=dict)
    """As `ChatRequest.params` (``max_tokens`` 0 with `echo` scores the prompt without generating)."""
    echo: bool = False
    """Also score the prompt: the call's `ModelCall.prompt_logprobs` (what loglikelihood evaluations need)."""
    top_logprobs: int = 0
    """How many most likely alternatives to report per token (OpenAI's ``logprobs=N``)."""
    episode_seed: int | None = None
    """As `ChatRequest.episode_seed`."""


@attrs.frozen(kw_only=True)
class Delta:
    """One piece of a streamed reply, as the provider produced it."""

    text: str = ""
    token_ids: tuple[int, ...] = ()
    logprobs: tuple[float, ...] = ()
    tokens: tuple[str, ...] = ()
    """The text of each token in `token_ids`, when known."""
    tool_calls: tuple[dict[str, Any], ...] = ()
    """OpenAI streamed tool-call fragments (``index``, ``id``, ``function.name``/``arguments`` pieces)."""
