"""The `learner` kind: improves a policy from groups of trajectories, and can go back a round.

The train loop (``nenyax train``) runs rounds: ``revision = learner.save()``, roll out groups with
``learner.policy()``, ``learner.update(groups)``, evaluate held-out tasks, and ``learner.restore(revision)``
when held-out did not improve. `update` is only ever given trainable trajectories (status ``ok`` or
``policy_error``): the engine filters the groups first (`nenyax.core.engine.learning.update`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from nenyax.core.contract.trajectory import Group
    from nenyax.core.engine.policies import Policy


@runtime_checkable
class Learner(Protocol):
    """Anything with `policy()` and `update(groups)`, plus `save`/`restore` for keep-or-revert."""

    def policy(self) -> Policy:
        """The current policy; its ``info.revision`` names the learner's current revision."""
        ...

    def update(self, groups: Sequence[Group]) -> Mapping[str, float]:
        """Learn from `groups` (trainable members only); return metrics such as loss."""
        ...

    def save(self) -> str:
        """Snapshot the current state; return its revision (a checkpoint path, a hash, a tag)."""
        ...

    def restore(self, revision: str) -> None:
        """Return to a revision that `save` returned."""
        ...

    def close(self) -> None:
        """Release models, devices and files."""
        ...
