"""Sampling parameters of one request, validated, and the per-request sampler that applies them.

Each request owns its own random stream, so a seeded request samples the same tokens whether it
runs alone or micro-batched with others (up to float rounding between batch shapes).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from nenyax.core import SAMPLING_KEYS
from nenyax.core.errors import UsageError

DEFAULT_TEMPERATURE = 1.0
"""Sample from the model's own distribution (what an RL learner assumes unless told otherwise)."""
DEFAULT_MAX_TOKENS = 256
"""Enough for a short answer; a 135M model on 2 cores makes ~15 tokens/s per stream."""

_KNOWN = SAMPLING_KEYS  # the local model takes every sampling parameter an Endpoint passes on


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


def _choices(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not value or not all(isinstance(c, str) and c for c in value):
        msg = f"The sampling parameter guided_choice must be a non-empty list of non-empty strings, not {value!r}."
        raise UsageError(msg)
    return tuple(value)


@attrs.frozen(kw_only=True)
class Sampling:
    """Effective sampling parameters of one request (defaults filled in)."""

    temperature: float = DEFAULT_TEMPERATURE
    """0 means greedy (argmax)."""
    top_p: float = 1.0
    top_k: int = 0
    """0 (or -1, as vLLM spells it) keeps every token."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    min_tokens: int = 0
    """No EOS and no stop string before this many tokens (vLLM's meaning)."""
    seed: int | None = None
    stop: tuple[str, ...] = ()
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    guided_choice: tuple[str, ...] = ()
    """The reply must be exactly one of these strings (constrained decoding; vLLM's ``guided_choice``)."""

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
        max_tokens = _integer(params, "max_tokens", DEFAULT_MAX_TOKENS, 1) or DEFAULT_MAX_TOKENS
        min_tokens = _integer(params, "min_tokens", 0, 0) or 0
        if min_tokens > max_tokens:
            msg = f"The sampling parameter min_tokens ({min_tokens}) cannot exceed max_tokens ({max_tokens})."
            raise UsageError(msg)
        guided_choice = _choices(params.get("guided_choice"))
        if guided_choice and min_tokens:
            msg = "The sampling parameters guided_choice and min_tokens cannot be combined: a choice ends the reply."
            raise UsageError(msg)
        return cls(
            temperature=_number(params, "temperature", DEFAULT_TEMPERATURE, 0.0, 100.0),
            top_p=_top_p(params),
            top_k=max(top_k or 0, 0),
            max_tokens=max_tokens,
            min_tokens=min_tokens,
            guided_choice=guided_choice,
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
        if self.min_tokens:
            out["min_tokens"] = self.min_tokens
        if self.seed is not None:
            out["seed"] = self.seed
        if self.stop:
            out["stop"] = list(self.stop)
        if self.presence_penalty:
            out["presence_penalty"] = self.presence_penalty
        if self.frequency_penalty:
            out["frequency_penalty"] = self.frequency_penalty
        if self.guided_choice:
            out["guided_choice"] = list(self.guided_choice)
        return out


class Sampler:
    """Chooses the next token of one sequence from its raw logits, with its own random stream.

    Works in NumPy on one thread: per-row work on a ~50k vocabulary is too small for torch's
    intra-op thread pool, which on a busy 2-core machine made each sampling step 20x slower.
    """

    def __init__(self, sampling: Sampling) -> None:
        """Seed the stream from ``sampling.seed``, or from fresh OS entropy when unseeded."""
        self.sampling = sampling
        seed = sampling.seed if sampling.seed is not None else secrets.randbits(64)
        self.rng = np.random.Generator(np.random.PCG64(seed % 2**64))  # any Python int maps to a valid seed
        self._counts: dict[int, int] = {}

    def choose(self, logits: np.ndarray, allowed: Sequence[int] | None = None, banned: Collection[int] = ()) -> int:
        """Pick a token id from a 1-D array of raw logits, only among `allowed` (when given), never `banned`."""
        s = self.sampling
        x = logits.astype(np.float64)
        if allowed is not None:
            keep = np.fromiter(allowed, dtype=np.int64)
            masked = np.full_like(x, -np.inf)
            masked[keep] = x[keep]
            x = masked
        if banned:
            x[np.fromiter(banned, dtype=np.int64)] = -np.inf
        if self._counts and (s.presence_penalty or s.frequency_penalty):
            tokens = np.fromiter(self._counts, dtype=np.int64)
            counts = np.fromiter(self._counts.values(), dtype=np.float64)
            x[tokens] -= s.presence_penalty + s.frequency_penalty * counts
        token = int(np.argmax(x)) if s.temperature == 0.0 else self._sample(x / s.temperature)
        self._counts[token] = self._counts.get(token, 0) + 1
        return token

    def _sample(self, x: np.ndarray) -> int:
        s = self.sampling
        if 0 < s.top_k < x.size:
            kth = np.partition(x, -s.top_k)[-s.top_k]
            x[x < kth] = -np.inf
        weights = np.exp(x - x.max())
        if s.top_p < 1.0:
            weights = _nucleus(weights, s.top_p)
        cdf = np.cumsum(weights)
        # Inverse-CDF draw: the first token whose cumulative weight exceeds u (zero weights never win).
        index = int(np.searchsorted(cdf, self.rng.random() * cdf[-1], side="right"))
        if index >= x.size:  # u rounded up to the total: take the last token with any weight
            index = int(np.flatnonzero(weights)[-1])
        return index


_NUCLEUS_CANDIDATES = 1024


def _nucleus(weights: np.ndarray, top_p: float) -> np.ndarray:
    """Zero every weight outside the smallest set of top tokens whose probability reaches `top_p`."""
    total = weights.sum()
    # Sorting the whole vocabulary costs ~5 ms; the nucleus almost always lies in the top 1024.
    if weights.size > _NUCLEUS_CANDIDATES:
        candidates = np.argpartition(-weights, _NUCLEUS_CANDIDATES - 1)[:_NUCLEUS_CANDIDATES]
        if weights[candidates].sum() < top_p * total:
            candidates = np.arange(weights.size)
    else:
        candidates = np.arange(weights.size)
    candidates = candidates[np.argsort(-weights[candidates], kind="stable")]
    probs = weights[candidates] / total
    # Keep a token while the tokens ranked above it have not yet reached top_p (the first always stays).
    keep = candidates[(np.cumsum(probs) - probs) < top_p]
    nucleus = np.zeros_like(weights)
    nucleus[keep] = weights[keep]
    return nucleus


def top_logprobs(logits: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The `k` most likely tokens under the raw logits, with their log-probabilities, most likely first."""
    x = logits.astype(np.float64)
    top = x.max()
    norm = top + np.log(np.exp(x - top).sum())
    k = min(k, x.size)
    best = np.argpartition(-x, k - 1)[:k]
    best = best[np.argsort(-x[best], kind="stable")]
    return [(int(i), float(x[i] - norm)) for i in best]


def logprob(logits: np.ndarray, token: int) -> float:
    """The raw log-probability of `token`: log-softmax of unprocessed logits, in float64."""
    x = logits.astype(np.float64)
    top = x.max()
    return float(x[token] - top - np.log(np.exp(x - top).sum()))
