"""From recorded trajectories to padded tensors: the exact token ids and sampler logprobs, never re-tokenised.

A *sample* is one `ModelCall` of a trajectory (a multi-turn episode gives one per call, each carrying the
trajectory's weight: its advantage, or 1 for supervised targets). A batch lays samples out as TRL does:
prompts left-padded to the longest prompt, completions right-padded to the longest completion, so the
completion's logits are the last positions of the forward pass (``logits_to_keep``), with position ids
counted over real tokens only (a left-padded prompt sits at the positions the sampler gave it).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

import torch
from nenyax.core import Trajectory
from nenyax.core.errors import UsageError


@attrs.frozen
class Sample:
    """One model call to train on."""

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    old_logprobs: tuple[float, ...]
    """The sampler's raw logprob of each completion token (the behaviour policy)."""
    weight: float
    """The advantage (policy-gradient learners), or 1 (supervised targets)."""
    owner: int = 0
    """Which trajectory of the update the call belongs to (DPO sums a trajectory's calls)."""


def samples_of(trajectory: Trajectory, weight: float, owner: int = 0) -> list[Sample]:
    """Every model call of `trajectory` with a completion, weighted by `weight`.

    Raise `UsageError` for a call recorded without token ids or logprobs: these learners train on exactly what
    the sampler produced, so its provider must record them (the embedded ``local`` provider does).
    """
    samples = []
    for call in trajectory.model_calls:
        prompt, completion, logprobs = call.prompt_token_ids, call.completion_token_ids, call.logprobs
        if prompt is None or completion is None or logprobs is None or len(logprobs) != len(completion):
            msg = (
                f"A model call of task {trajectory.task_id!r} ({call.provider}:{call.model}) was recorded without "
                "token ids and logprobs, which the torch learners train on; sample with a provider that records "
                "them, such as the learner's own policy."
            )
            raise UsageError(msg)
        if completion:
            samples.append(Sample(tuple(prompt), tuple(completion), tuple(logprobs), weight, owner))
    return samples


@attrs.frozen
class Batch:
    """Padded tensors of some samples (B rows; P prompt and C completion positions)."""

    input_ids: torch.Tensor
    """(B, P + C): left-padded prompt, then right-padded completion."""
    attention_mask: torch.Tensor
    position_ids: torch.Tensor
    completion_ids: torch.Tensor
    """(B, C)."""
    completion_mask: torch.Tensor
    """(B, C) float: 1 on completion tokens."""
    old_logprobs: torch.Tensor
    """(B, C) float: the sampler's logprobs (0 on padding)."""
    weights: torch.Tensor
    """(B,) float."""
    owners: torch.Tensor
    """(B,) long."""

    @property
    def completion_length(self) -> int:
        return int(self.completion_ids.size(1))


def collate(samples: Sequence[Sample], *, pad_id: int, device: torch.device | str = "cpu") -> Batch:
    """`samples` as one padded `Batch` on `device`."""
    width_p = max(len(s.prompt_ids) for s in samples)
    width_c = max(len(s.completion_ids) for s in samples)
    rows, masks, completions, completion_masks, olds = [], [], [], [], []
    for s in samples:
        pad_p, pad_c = width_p - len(s.prompt_ids), width_c - len(s.completion_ids)
        rows.append([pad_id] * pad_p + list(s.prompt_ids) + list(s.completion_ids) + [pad_id] * pad_c)
        masks.append([0] * pad_p + [1] * (len(s.prompt_ids) + len(s.completion_ids)) + [0] * pad_c)
        completions.append(list(s.completion_ids) + [pad_id] * pad_c)
        completion_masks.append([1.0] * len(s.completion_ids) + [0.0] * pad_c)
        olds.append(list(s.old_logprobs) + [0.0] * pad_c)
    attention = torch.tensor(masks, dtype=torch.long)
    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    return Batch(
        input_ids=torch.tensor(rows, dtype=torch.long, device=device),
        attention_mask=attention.to(device),
        position_ids=positions.to(device),
        completion_ids=torch.tensor(completions, dtype=torch.long, device=device),
        completion_mask=torch.tensor(completion_masks, dtype=torch.float32, device=device),
        old_logprobs=torch.tensor(olds, dtype=torch.float32, device=device),
        weights=torch.tensor([s.weight for s in samples], dtype=torch.float32, device=device),
        owners=torch.tensor([s.owner for s in samples], dtype=torch.long, device=device),
    )


def chunks(samples: Sequence[Sample], size: int) -> list[list[Sample]]:
    """`samples` in micro-batches of at most `size`, sorted by length first so each pads little."""
    ordered = sorted(samples, key=lambda s: len(s.prompt_ids) + len(s.completion_ids))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]
