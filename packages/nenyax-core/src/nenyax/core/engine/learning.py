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
