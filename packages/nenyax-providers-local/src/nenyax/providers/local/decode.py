"""The batched decoding loop: left-padded prefill, a KV cache, one sampler per sequence.

Written out rather than calling ``model.generate`` because every sequence in a micro-batch keeps
its own sampling parameters and random stream, and because the raw (pre-temperature) logprob of
each sampled token is wanted, as vLLM reports it by default.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import attrs
import numpy as np
import torch

from nenyax.providers.local.constrain import ChoiceConstraint
from nenyax.providers.local.sampling import Sampler, logprob, top_logprobs


@attrs.define
class Row:
    """One request in a batch: its prompt, its sampler, and what has been generated so far."""

    prompt_ids: list[int]
    sampler: Sampler
    max_new: int
    """max_tokens, lowered where the context window leaves less room."""
    completion: list[int] = attrs.Factory(list)
    logprobs: list[float] = attrs.Factory(list)
    finish_reason: str | None = None
    min_new: int = 0
    """min_tokens: EOS and stop strings are ignored until this many tokens are out."""
    constraint: ChoiceConstraint | None = None
    """guided_choice: the reply must be one of these token sequences."""
    abandoned: threading.Event = attrs.Factory(threading.Event)
    """Set when nobody waits for this reply any more (a timeout, Ctrl-C): it leaves the batch at the next token."""
    top_k: int = 0
    """How many most likely alternatives to keep per sampled token (``top_logprobs``)."""
    alternatives: list[list[tuple[int, float]]] = attrs.Factory(list)
    on_token: Callable[[int, float], None] | None = None
    """Called on the decoding thread with each sampled token and its logprob (streaming)."""


def _finish_reason(seq: Row, token: int, eos_ids: frozenset[int], decode: Callable[[list[int]], str]) -> str | None:
    if len(seq.completion) < seq.min_new:
        return "length" if len(seq.completion) >= seq.max_new else None
    if token in eos_ids:
        return "stop"
    stops = seq.sampler.sampling.stop
    # The whole completion is decoded (not just the last token) because a stop string can span
    # tokens and byte-level tokens only form characters together.
    if stops and any(stop in decode(seq.completion) for stop in stops):
        return "stop"
    if len(seq.completion) >= seq.max_new:
        return "length"
    return None


class Batch(Protocol):
    """A model's decoding state for one batch of left-padded prompts (rows leave as they finish)."""

    def prefill(self) -> np.ndarray:
        """Run the prompts; each row's next-token logits, [rows, vocab] float32."""

    def step(self, tokens: list[int]) -> np.ndarray:
        """Feed one token per remaining row; their next-token logits."""

    def keep(self, rows: list[int]) -> None:
        """Only these rows (indices into the current batch) go on."""


class HFBatch:
    """`Batch` over a Hugging Face causal LM and its DynamicCache."""

    def __init__(self, model: Any, ids: torch.Tensor, mask: torch.Tensor, cache_kwarg: str) -> None:
        """Prepare to decode the left-padded prompts `ids` (`mask` 1 on real tokens) with `model`."""
        from transformers import DynamicCache

        self.model, self.ids, self.mask, self.cache_kwarg = model, ids, mask, cache_kwarg
        # Positions count real tokens only, so a left-padded prompt sees the same positions as unpadded.
        self.positions = (mask.cumsum(-1) - 1).clamp(min=0)
        self.cache = DynamicCache(config=model.config)

    def _forward(self, tokens: torch.Tensor) -> np.ndarray:
        device = self.model.device
        out = self.model(
            input_ids=tokens.to(device),
            attention_mask=self.mask.to(device),
            position_ids=self.positions.to(device),
            use_cache=True,
            logits_to_keep=1,
            **{self.cache_kwarg: self.cache},
        )
        logits: np.ndarray = out.logits[:, -1, :].float().cpu().numpy()
        return logits

    def prefill(self) -> np.ndarray:
        """Run the prompts; each row's next-token logits."""
        return self._forward(self.ids)

    def step(self, tokens: list[int]) -> np.ndarray:
        """Feed one token per remaining row; their next-token logits."""
        self.mask = torch.cat([self.mask, torch.ones((len(tokens), 1), dtype=torch.long)], dim=1)
        self.positions = self.positions[:, -1:] + 1
        return self._forward(torch.tensor(tokens).unsqueeze(1))

    def keep(self, rows: list[int]) -> None:
        """Only these rows go on."""
        index = torch.tensor(rows)
        self.cache.batch_select_indices(index.to(self.model.device))
        self.mask, self.positions = self.mask[index], self.positions[index]


def left_padded(seqs: Sequence[Row], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The prompts of `seqs` as one left-padded [rows, width] id tensor and its 0/1 mask."""
    width = max(len(s.prompt_ids) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, width - len(seq.prompt_ids) :] = torch.tensor(seq.prompt_ids)
        mask[row, width - len(seq.prompt_ids) :] = 1
    return ids, mask


def generate(
    batch: Batch,
    seqs: Sequence[Row],
    *,
    eos_ids: frozenset[int],
    decode: Callable[[list[int]], str],
) -> None:
    """Generate every sequence to completion in one `batch`, filling in tokens, logprobs and finish reasons.

    A sequence ends at an EOS token (kept, finish ``stop``), at the token that completes a stop
    string (kept, so text and tokens agree; finish ``stop``) or at ``max_new`` tokens (``length``).
    Finished sequences leave the batch, so a long straggler does not pay for the short ones.
    """
    live = list(range(len(seqs)))  # batch row -> index into seqs
    with torch.inference_mode():
        logits = batch.prefill()
        while True:
            keep: list[int] = []
            tokens: list[int] = []
            for row, index in enumerate(live):
                seq = seqs[index]
                if seq.abandoned.is_set():  # cancelled by its caller: stop paying for it
                    seq.finish_reason = "cancelled"
                    continue
                allowed = None if seq.constraint is None else seq.constraint.allowed(seq.completion)
                banned = eos_ids if len(seq.completion) < seq.min_new else ()
                token = seq.sampler.choose(logits[row], allowed, banned)
                seq.completion.append(token)
                seq.logprobs.append(logprob(logits[row], token))
                if seq.top_k:
                    seq.alternatives.append(top_logprobs(logits[row], seq.top_k))
                seq.finish_reason = _finish_reason(seq, token, eos_ids, decode)
                if seq.on_token is not None:
                    seq.on_token(token, seq.logprobs[-1])
                if seq.finish_reason is None:
                    keep.append(row)
                    tokens.append(token)
            if not keep:
                return
            if len(keep) < len(live):
                batch.keep(keep)
                live = [live[r] for r in keep]
            logits = batch.step(tokens)


def hf_logits(model: Any, ids: Sequence[int]) -> np.ndarray:
    """Logits at every position of one unpadded sequence, [len(ids), vocab] float32."""
    with torch.inference_mode():
        tokens = torch.tensor([list(ids)], device=model.device)
        logits: np.ndarray = model(input_ids=tokens).logits[0].float().cpu().numpy()
    return logits


def score_prompt(
    logits: np.ndarray, prompt_ids: Sequence[int], top_k: int
) -> list[tuple[float, list[tuple[int, float]]]]:
    """For each prompt token after the first, its raw logprob given the tokens before it and the
    `top_k` most likely tokens there (what an ``echo`` completion reports), from the prompt's `logits`."""
    return [
        (logprob(logits[i], prompt_ids[i + 1]), top_logprobs(logits[i], top_k) if top_k else [])
        for i in range(len(prompt_ids) - 1)
    ]
