"""The `learner` kind: improves a policy from groups of trajectories, and can go back a round.

The train loop (``nenyax train``, `nenyax.core.engine.training`) runs rounds: roll out groups with
``learner.policy()``, ``revision = learner.save(directory)``, ``learner.update(groups)``, evaluate
held-out tasks, and ``learner.restore(revision)`` when held-out did not improve. `update` is only ever
given trainable trajectories (status ``ok`` or ``policy_error``): the engine filters the groups first
(`nenyax.core.engine.learning.update`).

A revision is a string that `restore` accepts in *another process*: a new learner built by the same
factory with the same options, given the revision, is in the state `save` captured (``nenyax train
--resume`` relies on it). Everything a revision needs lives under the directory `save` was given
(the run directory's ``checkpoints/``), never only in memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pathlib import Path

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

    def save(self, directory: Path) -> str:
        """Write the current state under `directory` (it exists, empty); return its revision.

        The revision is usually ``str(directory)``; `restore` must accept it in a fresh process.
        """
        ...

    def restore(self, revision: str) -> None:
        """Return to a revision that `save` returned (in this process or another)."""
        ...

    def close(self) -> None:
        """Release models, devices and files."""
        ...
