"""The `acme` learner: remembers each task's best-scoring actions. This is the file to make your own.

A learner is anything with `policy()` and `update(groups)`, plus `save`/`restore` so that `nenyax train` can
keep a round only when held-out tasks improve (and go back otherwise, in a fresh process too). This one is
tabular: `update` keeps, for each task, the actions of its best-scoring episode so far; its policy replays
them on that task and plays a random action elsewhere (so it explores, and improves only on tasks it has
seen: held-out tasks stay new to it). It plays step-mode environments (it acts on native observations). For
a model, `update` trains it on the groups' token ids and logprobs (each model call carries them) and `save`
writes its weights under the folder it is given.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nenyax.core import Group, PolicyInfo, Turn, UnsupportedPolicyError, UsageError

MEMORY = "memory.json"
"""What `save` writes: each task's best score, its actions and the episodes seen, as JSON (a revision is a folder)."""


class MemoryPolicy:
    """Plays the remembered actions of a task, and random actions on tasks it has not seen."""

    speaks_text = False

    def __init__(self, memory: Mapping[str, Mapping[str, Any]], revision: str) -> None:
        """Play from `memory` (task id -> best score, its actions, episodes seen), as of `revision`."""
        self.memory = memory
        self.info = PolicyInfo(kind="acme", name="acme", revision=revision)

    async def act(self, turn: Turn) -> Any:
        """The remembered action for this turn of this task, else a random one."""
        if turn.session is None:
            msg = "The acme learner plays step-mode environments only (it acts on native observations)."
            raise UnsupportedPolicyError(msg)
        actions = self.memory.get(turn.session.task_id or "", {}).get("actions", [])
        return actions[turn.index] if turn.index < len(actions) else turn.session.random_action(turn.rng)


class AcmeLearner:
    """The `acme` learner (what the plugin's factory returns)."""

    def __init__(self, model: str | None = None) -> None:
        """Start knowing nothing. `model` is every learner's option; this one trains no model."""
        if model is not None:
            msg = f"The acme learner trains no model, so it cannot take {model!r}; leave --model out."
            raise UsageError(msg)
        self.memory: dict[str, dict[str, Any]] = {}

    @property
    def revision(self) -> str:
        """The current state's name: a digest of the memory (the same memory, the same revision)."""
        return "memory-" + hashlib.sha256(self._dump().encode()).hexdigest()[:12]

    def _dump(self) -> str:
        return json.dumps(self.memory, sort_keys=True)

    def policy(self) -> MemoryPolicy:
        """The current policy; its ``info.revision`` is the learner's revision."""
        return MemoryPolicy(json.loads(self._dump()), self.revision)  # a copy: later updates do not change it

    def update(self, groups: Sequence[Group]) -> dict[str, float]:
        """Keep each task's best-scoring episode's actions (the engine passes trainable episodes only), and
        count the episodes seen of each task."""
        improved = 0
        for group in groups:
            for trajectory in group.trajectories:
                task = self.memory.setdefault(trajectory.task_id or "", {"score": None, "actions": [], "seen": 0})
                task["seen"] += 1
                if trajectory.judgment is None or not trajectory.steps:
                    continue  # a policy error: no actions to remember
                if task["score"] is None or trajectory.judgment.score > task["score"]:
                    task.update(score=trajectory.judgment.score, actions=[step.action for step in trajectory.steps])
                    improved += 1
        return {"improved": float(improved), "tasks_known": float(len(self.memory))}

    def save(self, directory: Path) -> str:
        """Write the memory under `directory` (it exists, empty); the folder is the revision `restore` takes."""
        (directory / MEMORY).write_text(self._dump() + "\n", encoding="utf-8")
        return str(directory)

    def restore(self, revision: str) -> None:
        """Go back to what `save` wrote in the folder `revision` (in this process or another)."""
        saved = Path(revision) / MEMORY
        try:
            self.memory = json.loads(saved.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            msg = f"{revision} holds no memory saved by the acme learner ({saved.name} cannot be read)."
            raise UsageError(msg) from exc

    def close(self) -> None:
        """Nothing to release: a model's learner frees its devices here (safe to call twice)."""
