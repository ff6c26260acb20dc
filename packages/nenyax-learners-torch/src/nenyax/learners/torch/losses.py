"""The learners' losses, as pure tensor functions (no model, no trainer, no device choice).

Each one is checked against TRL 1.16's own implementation on identical tensors, loss and gradients
(``tests/test_losses_match_trl.py``). Shapes: ``B`` sequences, ``T`` completion positions; a ``mask`` is 1 on
the completion tokens a loss counts and 0 on padding; per-token log-probabilities are raw (the model's
log-softmax before any sampling temperature), as the embedded provider records the sampler's.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F

Aggregation = Literal["grpo", "dr_grpo", "dapo", "bnpo"]
AGGREGATIONS: tuple[str, ...] = ("grpo", "dr_grpo", "dapo", "bnpo")
Level = Literal["token", "sequence"]


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """``log_softmax(logits)[..., target]`` per position: ``logits`` (B, T, V) predicts ``targets`` (B, T).

    Row by row, so the (B, T, V) log-softmax is never held whole (as TRL's ``selective_log_softmax``).
    """
    rows = [
        row_logits.float().log_softmax(-1).gather(-1, row_targets.unsqueeze(-1)).squeeze(-1)
        for row_logits, row_targets in zip(logits, targets, strict=True)
    ]
    return torch.stack(rows)


def aggregate(
    per_token: torch.Tensor,
    mask: torch.Tensor,
    aggregation: Aggregation,
    *,
    max_completion_length: int | None = None,
    num_items: float | torch.Tensor | None = None,
) -> torch.Tensor:
    """Reduce a (B, T) per-token loss to a scalar, as GRPO's loss types do.

    - ``grpo``: each sequence's mean over its tokens, then the mean over sequences.
    - ``dr_grpo``: the sum over tokens / (B * `max_completion_length`) (a constant: no length bias).
    - ``dapo``: the sum over tokens / `num_items`, the active tokens of the *global* batch (all
      micro-batches of one update; this batch's when None).
    - ``bnpo``: the sum over tokens / the active tokens of this (local) batch.
    """
    masked = per_token * mask
    if aggregation == "grpo":
        return (masked.sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
    if aggregation == "bnpo":
        return masked.sum() / mask.sum().clamp(min=1.0)
    if aggregation == "dr_grpo":
        length = max_completion_length if max_completion_length is not None else per_token.size(-1)
        return masked.sum() / (per_token.size(0) * length)
    if aggregation == "dapo":
        items = mask.sum() if num_items is None else torch.as_tensor(num_items, dtype=per_token.dtype)
        return masked.sum() / items.clamp(min=1.0)
    msg = f"aggregation must be one of {', '.join(AGGREGATIONS)}, not {aggregation!r}."
    raise ValueError(msg)


def importance_log_weights(
    logprobs: torch.Tensor, old_logprobs: torch.Tensor, mask: torch.Tensor, level: Level
) -> torch.Tensor:
    """log(pi/pi_old): per token (B, T), or the masked mean per sequence (B, 1) for GSPO's ``sequence``."""
    log_ratio = logprobs - old_logprobs
    if level == "token":
        return log_ratio
    if level == "sequence":
        return ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    msg = f"importance sampling level must be 'token' or 'sequence', not {level!r}."
    raise ValueError(msg)


def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(pi || ref) per token: exp(ref - lp) - (ref - lp) - 1 (always >= 0)."""
    diff = ref_logprobs - logprobs
    return torch.exp(diff) - diff - 1


def policy_gradient_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    aggregation: Aggregation = "dapo",
    level: Level = "token",
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
    delta: float | None = None,
    beta: float = 0.0,
    ref_logprobs: torch.Tensor | None = None,
    kl_bias_correction: bool = True,
    max_completion_length: int | None = None,
    num_items: float | torch.Tensor | None = None,
) -> torch.Tensor:
    """GRPO's clipped surrogate (TRL's ``GRPOTrainer`` loss), for ``grpo``/``dr_grpo``/``dapo``/``bnpo`` and GSPO.

    ``-min(r * A, clip(r, 1 - epsilon_low, 1 + epsilon_high) * A)`` per token, where ``r`` is the importance
    weight at `level` (``sequence`` = GSPO) and `advantages` is (B,) or (B, T); `delta` additionally caps
    ``r`` from above (two-sided clipping). With `beta` > 0 the k3 KL to `ref_logprobs` is added per token,
    multiplied by ``r`` when `kl_bias_correction` (TRL's ``use_bias_correction_kl``). Then `aggregate`.
    """
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)
    ratio = torch.exp(importance_log_weights(logprobs, old_logprobs, mask, level))
    clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)
    unclipped = torch.clamp(ratio, max=delta) if delta is not None else ratio
    per_token = -torch.min(unclipped * advantages, clipped * advantages)
    if beta != 0.0:
        if ref_logprobs is None:
            msg = "beta > 0 needs the reference model's log-probabilities (ref_logprobs)."
            raise ValueError(msg)
        kl = k3_kl(logprobs, ref_logprobs)
        if kl_bias_correction:
            kl = kl * ratio
        per_token = per_token + beta * kl
    return aggregate(
        per_token.expand_as(mask), mask, aggregation, max_completion_length=max_completion_length, num_items=num_items
    )


def rloo_advantages(
    rewards: torch.Tensor,
    group_size: int,
    *,
    beta: float = 0.0,
    kl: torch.Tensor | None = None,
    normalize: bool = False,
) -> torch.Tensor:
    """RLOO's advantages (TRL's ``RLOOTrainer``): each reward minus the mean of the *other* members of its group.

    `rewards` (B,) holds consecutive groups of `group_size`. With `beta` > 0 the reward is first penalised by
    ``beta * kl``, `kl` (B,) being each sequence's summed first-order log ratio ``sum(old - ref)`` (RLOO puts
    KL in the reward, not in the loss). `normalize` standardises the advantages over the batch.
    """
    if beta != 0.0:
        if kl is None:
            msg = "beta > 0 needs each sequence's summed log ratio to the reference (kl)."
            raise ValueError(msg)
        rewards = rewards - beta * kl
    if group_size < 2:
        return torch.zeros_like(rewards)
    grouped = rewards.view(-1, group_size)
    baselines = (grouped.sum(dim=1, keepdim=True) - grouped) / (group_size - 1)
    advantages = (grouped - baselines).view(-1)
    if normalize:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-4)
    return advantages


def rloo_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
) -> torch.Tensor:
    """RLOO's clipped surrogate on whole sequences: the ratio of summed log-probabilities, mean over sequences."""
    log_ratio = (logprobs * mask).sum(1) - (old_logprobs * mask).sum(1)
    ratio = torch.exp(log_ratio)
    clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)
    return (-torch.min(ratio * advantages, clipped * advantages)).mean()


def sequence_logprobs(logprobs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Each sequence's summed log-probability over its masked tokens, (B,)."""
    return (logprobs * mask).sum(-1)


def dpo_sigmoid_loss(
    chosen_logps: torch.Tensor,
    rejected_logps: torch.Tensor,
    ref_chosen_logps: torch.Tensor,
    ref_rejected_logps: torch.Tensor,
    *,
    beta: float = 0.1,
) -> torch.Tensor:
    """DPO's sigmoid loss (TRL's ``DPOTrainer``, ``loss_type="sigmoid"``) on summed sequence log-probabilities:
    ``-log sigmoid(beta * ((chosen - ref_chosen) - (rejected - ref_rejected)))``, mean over pairs."""
    delta = (chosen_logps - ref_chosen_logps) - (rejected_logps - ref_rejected_logps)
    return -F.logsigmoid(beta * delta).mean()


def nll_loss(logprobs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Supervised fine-tuning's negative log-likelihood, the mean over every masked token of the batch
    (RFT: the best member of each group taken as the target)."""
    return -(logprobs * mask).sum() / mask.sum().clamp(min=1.0)
