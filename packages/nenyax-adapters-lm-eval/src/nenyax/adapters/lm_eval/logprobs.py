"""Loglikelihoods from legacy-completions ``logprobs`` of an echoed prompt (what the proxy returns).

The prompt is sent as text (context + continuation) and the proxy has no tokenizer to share, so the
continuation's tokens are found by character offset: every token that ends past the context's last
character is the continuation's (a token straddling the boundary counts as the continuation's, as a
tokenizer that merges across it would score it). The prompt's first token has no logprob (nothing
precedes it); it is left out of a rolling loglikelihood.
"""

from __future__ import annotations

from typing import Any

from nenyax.core import EnvironmentFailure


def _logprobs(body: dict[str, Any]) -> dict[str, Any]:
    choices = body.get("choices") or []
    logprobs = choices[0].get("logprobs") if choices and isinstance(choices[0], dict) else None
    if not isinstance(logprobs, dict) or not logprobs.get("tokens"):
        msg = "The model returned no prompt logprobs: loglikelihood tasks need a model that scores its prompt."
        raise EnvironmentFailure(msg)
    return logprobs


def continuation(body: dict[str, Any], context_chars: int) -> tuple[float, bool]:
    """(sum of the continuation's token logprobs, whether each of its tokens was the most likely one)."""
    logprobs = _logprobs(body)
    tokens, values = logprobs["tokens"], logprobs["token_logprobs"]
    offsets = logprobs.get("text_offset") or []
    tops = logprobs.get("top_logprobs") or [None] * len(tokens)
    total, greedy, counted = 0.0, True, 0
    for token, value, offset, top in zip(tokens, values, offsets, tops, strict=False):
        if offset + len(token) <= context_chars:
            continue
        if value is None:  # an empty context: the first token cannot be scored
            continue
        total += float(value)
        counted += 1
        if top:
            greedy = greedy and max(top, key=top.get) == token
    if counted == 0:
        raise EnvironmentFailure("The echoed prompt has no scored token after the context.")
    return total, greedy


def rolling(body: dict[str, Any]) -> float:
    """The sum of every scored prompt token's logprob (all but the first)."""
    values = _logprobs(body)["token_logprobs"]
    return float(sum(v for v in values if v is not None))
