"""Sampling parameters of one request, validated, and the per-request sampler that applies them.

Each request owns its own `torch.Generator`, so a seeded request samples the same tokens whether it
runs alone or micro-batched with others (up to float rounding between batch shapes).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping
from typing import Any

import attrs
import torch

from nenyax.core.errors import UsageError

DEFAULT_TEMPERATURE = 1.0
"""Sample from the model's own distribution (what an RL learner assumes unless told otherwise)."""
DEFAULT_MAX_TOKENS = 256
"""Enough for a short answer; a 135M model on 2 cores makes ~15 tokens/s per stream."""

_KNOWN = frozenset(
    {"temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "presence_penalty", "frequency_penalty", "n"}
)


def _number(params: Mapping[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = params.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        msg = f"The sampling parameter {key} must be a number, not {value!r}."
        raise UsageError(msg)
    if not low <= value <= high:
        msg = f"The sampling parameter {key} must lie between {low:g} and {high:g}, not {value!r}."
        raise UsageError(msg)
    return float(value)


def _integer(params: Mapping[str, Any], key: str, default: int | None, low: int) -> int | None:
    value = params.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        msg = f"The sampling parameter {key} must be an integer of at least {low}, not {value!r}."
        raise UsageError(msg)
    return value


def _top_p(params: Mapping[str, Any]) -> float:
    top_p = _number(params, "top_p", 1.0, 0.0, 1.0)
    if top_p == 0.0:  # an empty nucleus; vLLM rejects it too
        msg = "The sampling parameter top_p must be above 0 (use temperature 0 for greedy decoding)."
        raise UsageError(msg)
    return top_p


def _stops(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    stops = (value,) if isinstance(value, str) else value
    if not isinstance(stops, list | tuple) or not all(isinstance(s, str) and s for s in stops):
        msg = f"The sampling parameter stop must be a non-empty string or a list of them, not {value!r}."
        raise UsageError(msg)
    return tuple(stops)


@attrs.frozen(kw_only=True)
class Sampling:
    """Effective sampling parameters of one request (defaults filled in)."""

    temperature: float = DEFAULT_TEMPERATURE
    """0 means greedy (argmax)."""
    top_p: float = 1.0
    top_k: int = 0
    """0 (or -1, as vLLM spells it) keeps every token."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = None
    stop: tuple[str, ...] = ()
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Sampling:
        """Validate a request's sampling parameters; raise `UsageError` (one sentence) for a bad one."""
        unknown = set(params) - _KNOWN
        if unknown:
            msg = f"The local provider does not support the sampling parameter(s) {', '.join(sorted(unknown))}."
            raise UsageError(msg)
        n = params.get("n")
        if n not in (None, 1):
            msg = f"The local provider returns one completion per call (n={n!r}); run more rollouts instead."
            raise UsageError(msg)
        top_k = _integer(params, "top_k", 0, -1)
        return cls(
            temperature=_number(params, "temperature", DEFAULT_TEMPERATURE, 0.0, 100.0),
            top_p=_top_p(params),
            top_k=max(top_k or 0, 0),
            max_tokens=_integer(params, "max_tokens", DEFAULT_MAX_TOKENS, 1) or DEFAULT_MAX_TOKENS,
            seed=_integer(params, "seed", None, -(2**63)),
            stop=_stops(params.get("stop")),
            presence_penalty=_number(params, "presence_penalty", 0.0, -2.0, 2.0),
            frequency_penalty=_number(params, "frequency_penalty", 0.0, -2.0, 2.0),
        )

    def as_params(self) -> dict[str, Any]:
        """The parameters as recorded on the `ModelCall`: every effective value, defaults included."""
        out: dict[str, Any] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "max_tokens": self.max_tokens,
        }
        if self.seed is not None:
            out["seed"] = self.seed
        if self.stop:
            out["stop"] = list(self.stop)
        if self.presence_penalty:
            out["presence_penalty"] = self.presence_penalty
        if self.frequency_penalty:
            out["frequency_penalty"] = self.frequency_penalty
        return out


class Sampler:
    """Chooses the next token of one sequence from its raw logits, with its own random stream."""

    def __init__(self, sampling: Sampling) -> None:
        """Seed the stream from ``sampling.seed``, or from fresh OS entropy when unseeded."""
        self.sampling = sampling
        seed = sampling.seed if sampling.seed is not None else secrets.randbits(63)
        # torch takes seeds in [-2**63, 2**64); folding keeps any Python int valid and distinct enough.
        self.generator = torch.Generator().manual_seed(seed % 2**64)
        self._counts: dict[int, int] = {}

    def choose(self, logits: torch.Tensor) -> int:
        """Pick a token id from a 1-D float32 CPU tensor of raw logits."""
        s = self.sampling
        if s.presence_penalty or s.frequency_penalty:
            logits = logits.clone()
            for token, count in self._counts.items():
                logits[token] -= s.presence_penalty + s.frequency_penalty * count
        token = int(torch.argmax(logits)) if s.temperature == 0.0 else self._sample(logits / s.temperature)
        self._counts[token] = self._counts.get(token, 0) + 1
        return token

    def _sample(self, logits: torch.Tensor) -> int:
        s = self.sampling
        if 0 < s.top_k < logits.numel():
            kth = torch.topk(logits, s.top_k).values[-1]
            logits = logits.masked_fill(logits < kth, -math.inf)
        if s.top_p < 1.0:
            ordered, order = torch.sort(logits, descending=True)
            probs = torch.softmax(ordered, dim=-1)
            # Drop a token when the tokens ranked above it already reach top_p (the first always stays).
            drop = (torch.cumsum(probs, dim=-1) - probs) >= s.top_p
            drop[0] = False
            logits = logits.clone()
            logits[order[drop]] = -math.inf
        probs = torch.softmax(logits, dim=-1)
        return int(torch.multinomial(probs, 1, generator=self.generator))
