"""How the engine hands groups to a learner: only what may be trained on ever reaches `update`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from nenyax.core.contract.trajectory import Group


def trainable_groups(groups: Sequence[Group]) -> list[Group]:
    """Each group cut to its trainable members (``ok``, ``policy_error``); groups left empty are dropped.

    An infrastructure failure, a timeout or a broken verifier says nothing about the policy, so it is
    never a training signal (and never a reward of 0).
    """
    kept = []
    for group in groups:
        members = group.trainable
        if members:
            kept.append(group if len(members) == len(group.trajectories) else attrs.evolve(group, trajectories=members))
    return kept


def update(learner: Any, groups: Sequence[Group]) -> Mapping[str, float]:
    """``learner.update`` on the trainable part of `groups` (nothing is called when none is left)."""
    kept = trainable_groups(groups)
    if not kept:
        return {}
    return learner.update(kept)  # type: ignore[no-any-return]


def group_advantages(group: Group, *, scale: str = "group", epsilon: float = 1e-4) -> list[float]:
    """Each member's advantage: its score minus the group's mean, over the group's std with ``scale="group"``
    (GRPO's, TRL's ``scale_rewards="group"``), or unscaled with ``scale="none"`` (Dr. GRPO).

    The std is the sample std (Bessel-corrected, as ``torch.std`` and TRL compute it); an unjudged member
    scores 0 only here, where its status already made it trainable (a ``policy_error``: the policy broke
    the episode, which is the policy's fault). A group of one has advantage 0.
    """
    if scale not in ("group", "none"):
        msg = f"scale must be 'group' or 'none', not {scale!r}."
        raise ValueError(msg)
    scores = [t.judgment.score if t.judgment is not None else 0.0 for t in group.trajectories]
    n = len(scores)
    if n < 2:
        return [0.0] * n
    mean = sum(scores) / n
    centred = [s - mean for s in scores]
    if scale == "none":
        return centred
    std = (sum(c * c for c in centred) / (n - 1)) ** 0.5
    return [c / (std + epsilon) for c in centred]
