"""The batched decoding loop: left-padded prefill, a KV cache, one sampler per sequence.

Written out rather than calling ``model.generate`` because every sequence in a micro-batch keeps
its own sampling parameters and random stream, and because the raw (pre-temperature) logprob of
each sampled token is wanted, as vLLM reports it by default.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs
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


def generate(
    model: Any,
    seqs: Sequence[Row],
    *,
    pad_id: int,
    eos_ids: frozenset[int],
    decode: Callable[[list[int]], str],
    cache_kwarg: str,
) -> None:
    """Generate every sequence to completion in one batch, filling in tokens, logprobs and finish reasons.

    A sequence ends at an EOS token (kept, finish ``stop``), at the token that completes a stop
    string (kept, so text and tokens agree; finish ``stop``) or at ``max_new`` tokens (``length``).
    Finished sequences leave the batch, so a long straggler does not pay for the short ones.
    """
    from transformers import DynamicCache

    device = model.device
    width = max(len(s.prompt_ids) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, width - len(seq.prompt_ids) :] = torch.tensor(seq.prompt_ids)
        mask[row, width - len(seq.prompt_ids) :] = 1
    # Positions count real tokens only, so a left-padded prompt sees the same positions as unpadded.
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    cache = DynamicCache(config=model.config)

    def forward(tokens: torch.Tensor) -> torch.Tensor:
        out = model(
            input_ids=tokens.to(device),
            attention_mask=mask.to(device),
            position_ids=positions.to(device),
            use_cache=True,
            logits_to_keep=1,
            **{cache_kwarg: cache},
        )
        return out.logits[:, -1, :].float().cpu().numpy()

    live = list(range(len(seqs)))  # batch row -> index into seqs
    with torch.inference_mode():
        logits = forward(ids)
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
                rows = torch.tensor(keep)
                cache.batch_select_indices(rows.to(device))
                mask, positions = mask[rows], positions[rows]
                live = [live[r] for r in keep]
            mask = torch.cat([mask, torch.ones((len(live), 1), dtype=torch.long)], dim=1)
            positions = positions[:, -1:] + 1
            logits = forward(torch.tensor(tokens).unsqueeze(1))


def score_prompt(model: Any, prompt_ids: Sequence[int], top_k: int) -> list[tuple[float, list[tuple[int, float]]]]:
    """One forward pass over a prompt: for each token after the first, its raw logprob given the tokens
    before it and the `top_k` most likely tokens there (what an ``echo`` completion reports)."""
    with torch.inference_mode():
        ids = torch.tensor([list(prompt_ids)], device=model.device)
        logits = model(input_ids=ids).logits[0, :-1, :].float().cpu().numpy()
    return [
        (logprob(logits[i], prompt_ids[i + 1]), top_logprobs(logits[i], top_k) if top_k else [])
        for i in range(len(prompt_ids) - 1)
    ]
