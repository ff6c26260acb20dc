"""The taskset: every task of a Nenyax environment as a verifiers v1 `Task`, scored from the episode's outcome.

verifiers finds a taskset by its module (``--env.taskset.id nenyax-verifiers`` imports ``nenyax_verifiers``):
the module's `__all__` exports this `Taskset`, the `Env` that plays it (`nenyax.trainers.verifiers.env`) and its
harness (`nenyax.trainers.verifiers.harness`). The Nenyax environment is loaded once per process.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from nenyax.core import Environment, UsageError, load
from nenyax.trainers.verifiers import outcome
from verifiers.v1 import Response, Trace  # resolved at run time: verifiers reads the hooks' annotations

TASKSET_ID = "nenyax-verifiers"
"""The id verifiers loads the taskset by (``--env.taskset.id``): the top-level module ``nenyax_verifiers``."""


@functools.cache
def environment(uri: str) -> Environment:
    """The Nenyax environment at `uri`, loaded once per process (every episode of a run shares it)."""
    return load(uri)


class NenyaxData(vf.TaskData):
    """One Nenyax task: the environment, its task id and the seed every episode of it starts from."""

    uri: str
    task_id: str | None
    seed: int
    mode: str
    """``step``, ``rollout`` or ``task``: step tasks are played by `NenyaxEnv` as the user, the others by
    `NenyaxHarness` in-process."""


class NenyaxConfig(vf.TasksetConfig):
    """``--env.taskset.uri`` (the Nenyax environment), and which of its tasks."""

    uri: str = ""
    """The Nenyax environment URI (``reasoning_gym:basic_arithmetic?size=20``)."""
    split: str | None = None
    """Which split's tasks (the environment's default when unset)."""
    limit: int | None = None
    """At most this many tasks."""
    seed: int = 0
    """The seed of every task's episodes: the copies of one task (``-r n``, a GRPO group) start alike."""


class NenyaxTask(vf.Task[NenyaxData]):
    """A Nenyax task; its reward is the episode's judged score, its metrics the judgment's components."""

    @property
    def key(self) -> str:
        """Stable over runs and positions: the environment, the task id and the seed."""
        ident = json.dumps([self.data.uri, self.data.task_id, self.data.seed])
        return hashlib.sha256(ident.encode()).hexdigest()

    @vf.intercept
    def keep_token_ids(self, response: Response, trace: Trace) -> None:
        """Keep the ids and logprobs the server returned with each reply (vLLM's ``return_token_ids`` shape,
        ``nenyax serve-model``) on ``trace.info``: verifiers' eval client drops them. Step mode only: in the other
        modes `NenyaxHarness` copies them from the episode's own record."""
        ids = outcome.token_ids(response.raw) if self.data.mode == "step" else None
        if ids is not None:
            trace.info.setdefault(outcome.CALLS_KEY, []).append(ids)

    @vf.metric
    async def nenyax(self, trace: Trace) -> dict[str, float]:
        """The judgment's components, ``passed`` and the number of steps (none for a failed episode)."""
        return outcome.metrics(trace.info)

    @vf.reward
    async def nenyax_score(self, trace: Trace) -> float:
        """The judged score; an episode that failed for a reason not the policy's raises (no reward)."""
        return outcome.score(trace.info)


class NenyaxTaskset(vf.Taskset[NenyaxTask, NenyaxConfig]):
    """Every task of a Nenyax environment, in the environment's order, each with a stable id.

    Made as verifiers does (``NenyaxTaskset(NenyaxConfig(uri=...))``), or from a URI:
    ``NenyaxTaskset("reasoning_gym:basic_arithmetic?size=20", limit=8)``.
    """

    def __init__(
        self,
        config: NenyaxConfig | str,
        *,
        split: str | None = None,
        limit: int | None = None,
        seed: int = 0,
    ) -> None:
        if isinstance(config, str):
            config = NenyaxConfig(id=TASKSET_ID, uri=config, split=split, limit=limit, seed=seed)
        if not config.uri:
            raise UsageError("Name the Nenyax environment: --env.taskset.uri <uri> (or NenyaxConfig(uri=...)).")
        super().__init__(config)

    @property
    def env(self) -> Environment:
        """The Nenyax environment the tasks come from."""
        return environment(self.config.uri)

    def load(self) -> Iterator[NenyaxTask]:
        env = self.env
        config = self.config
        mode = env.manifest.mode.value
        for task_id in env.task_ids(config.split, config.limit):
            data = NenyaxData(
                id=task_id,
                name=f"{config.uri}#{task_id}",
                # A step session speaks first (`NenyaxEnv` opens the exchange with it); a native loop or harness
                # builds its prompt as it plays, so the run is opened with a line naming the task.
                prompt=None if mode == "step" else f"Play task {task_id} of the Nenyax environment {config.uri}.",
                uri=config.uri,
                task_id=task_id,
                seed=config.seed,
                mode=mode,
            )
            yield NenyaxTask(data, config.task)


def task_config(uri: str, **fields: Any) -> dict[str, Any]:
    """The ``taskset`` table of a verifiers env config for `uri` (what ``--env.taskset.*`` sets)."""
    return {"id": TASKSET_ID, "uri": uri, **fields}
