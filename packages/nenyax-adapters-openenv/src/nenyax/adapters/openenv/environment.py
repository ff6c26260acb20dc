"""A running OpenEnv server as a step environment, judged by the episode's return (or the server's judgment).

Its tasks are the server's own when it offers OpenEnv's Task API (``nenyax serve`` does): their ids as
the server lists them, each started by a reset with its split and index. Otherwise a task is a reset
seed, ``seed/<n>``.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from nenyax.adapters.openenv import codec
from nenyax.adapters.openenv.instances import Unbuildable
from nenyax.adapters.openenv.server import ServerInfo, fetch, reset_frame
from nenyax.adapters.openenv.session import OpenEnvSession, check_seed
from nenyax.core import BadURIError, Capabilities, Manifest, Mode, Split, StepEnvironment
from nenyax.core.toolkit.loops import LoopThread

if TYPE_CHECKING:
    from nenyax.adapters.openenv.options import ServerSpec

TASK_PREFIX = "seed/"
SEEDS_SPLIT = "seeds"
"""The one split of a server without the Task API."""
WIRES = {
    "0.10": "openenv 0.10: observations carry metadata (recorded in each step's info)",
    "0.3": "openenv-core 0.3: observations carry no metadata",
}
_POLICY_DRAWS = 8
"""Random actions drawn at load to see that the random policy's actions fit the schema."""


def _policy_support(info: ServerInfo) -> tuple[str, str]:
    """Whether the built-in null and random actions fit the schema ('ok' or the reason they do not, one sentence)."""
    action = info.action
    try:
        problems = action.problems(action.null_instance())
    except Unbuildable as exc:
        null = f"Nenyax cannot build a null action from the server's action schema: {exc}; no null policy."
    else:
        why = f"The schema's plainest action does not validate ({problems[0]}); no null policy." if problems else ""
        null = why or "ok"
    rng = random.Random(0)
    try:
        bad = next((p for p in (action.problems(action.random_instance(rng)) for _ in range(_POLICY_DRAWS)) if p), None)
    except Unbuildable as exc:
        rand = f"Nenyax cannot draw a random action from the server's action schema: {exc}; no random policy."
    else:
        rand = "ok" if bad is None else f"Random actions drawn from the schema fail it ({bad[0]}); no random policy."
    return null, rand


class OpenEnvEnvironment(StepEnvironment):
    """One OpenEnv server; task ids from its Task API, else ``seed/<n>`` (any seed is a valid task)."""

    def __init__(self, uri: str, spec: ServerSpec, info: ServerInfo) -> None:
        """Wrap what `fetch` learned about the server."""
        self.spec = spec
        self.info = info
        self.name = str(info.metadata.get("name") or spec.http)
        super().__init__(self._manifest(uri))

    @classmethod
    def connect(cls, uri: str, spec: ServerSpec) -> OpenEnvEnvironment:
        """Query and probe the server at `spec`, then wrap it."""
        return cls(uri, spec, fetch(spec))

    def _manifest(self, uri: str) -> Manifest:
        info, spec = self.info, self.spec
        null, rand = _policy_support(info)
        meta = {k: info.metadata.get(k) for k in ("name", "version", "author", "documentation_url")}
        observed = codec.observation_fields(info.observation_schema)
        reference = (
            f"The action held in the server's state field {spec.reference!r}, read after every observation."
            if spec.reference
            else "None: OpenEnv defines no oracle; add ?reference=<state field> when the server's state holds one."
        )
        return Manifest(
            uri=uri,
            format="openenv",
            format_version=info.wire,
            mode=Mode.STEP,
            name=self.name,
            description=" ".join(str(info.metadata.get("description") or "").split())[:500],
            splits=self._splits(),
            observation=f"A JSON object with {observed}." if observed else "A JSON object.",
            action=f"{info.action.describe()}; validated against the server's /schema before sending.",
            score_range=None,
            extra={
                "server": meta,
                "wire": WIRES[info.wire],
                "action_schema": info.action.schema,
                "seeds": info.seeds,
                "seeds_vary": info.seeds_vary,
                "tasks": info.tasks,
                "tasks_vary": info.tasks_vary,
                "state_readable": info.state_readable,
                "reset": spec.reset,
                "reference": reference,
                "null_action": null,
                "random_action": rand,
                "score": (
                    "The undiscounted sum of the episode's rewards (a missing reward counts 0), or the server's "
                    "own judgment when the final observation's metadata carries one."
                ),
            },
            capabilities=Capabilities(
                seeded=info.seeded,
                stable_task_ids=info.seeded,
                stochastic=spec.stochastic if spec.stochastic is not None else info.metadata.get("stochastic") is True,
                reference_policy=spec.reference is not None,
                null_policy=null == "ok",
                random_policy=rand == "ok",
                multi_turn=True,
                concurrent_sessions=True,
                max_turns=spec.max_turns,
            ),
        )

    # ---- tasks

    def _splits(self) -> tuple[Split, ...]:
        catalog = self.info.catalog
        if catalog is None:
            return (Split(name=SEEDS_SPLIT, count=self.spec.tasks),)
        return tuple(Split(name=name, count=len(tasks)) for name, tasks in catalog.splits.items())

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """The server's listed tasks of `split` (the first by default), else ``seed/0`` ... ``seed/<tasks-1>``."""
        names = [s.name for s in self.manifest.splits]
        if split is not None and split not in names:
            which = f"one split, {names[0]!r}" if len(names) == 1 else f"the splits {', '.join(map(repr, names))}"
            msg = f"{self.uri} has {which}, not {split!r}."
            raise BadURIError(msg)
        catalog = self.info.catalog
        if catalog is None:
            count = self.spec.tasks if limit is None else max(0, min(limit, self.spec.tasks))
            return [f"{TASK_PREFIX}{n}" for n in range(count)]
        tasks = catalog.splits[split or names[0]]
        return [t.id for t in (tasks if limit is None else tasks[: max(0, limit)])]

    def parse_task(self, task: str) -> int:
        """The reset seed of the seed task `task`; `BadURIError` for a malformed id."""
        digits = task[len(TASK_PREFIX) :] if isinstance(task, str) and task.startswith(TASK_PREFIX) else ""
        if not (digits.isascii() and digits.isdecimal()):
            msg = f"{task!r} is not a task of {self.uri}; its task ids look like 'seed/0'."
            raise BadURIError(msg)
        return check_seed(int(digits))

    def _episode(self, task: str | None, seed: int | None) -> tuple[str | None, int, dict[str, Any]]:
        """The task id, seed and reset data of an episode of `task` from `seed`."""
        catalog = self.info.catalog
        if catalog is None:
            # A task's own seed wins over `seed`, as for every seeded format.
            number = self.parse_task(task) if task is not None else 0 if seed is None else check_seed(seed)
            return f"{TASK_PREFIX}{number}", number, reset_frame(self.spec, number, None)
        number = 0 if seed is None else check_seed(seed)
        if task is None:  # the server picks a task from the seed, as OpenEnv's guide asks of it
            return None, number, reset_frame(self.spec, number, None)
        return task, number, reset_frame(self.spec, number, catalog.find(task, self.uri))

    async def asession(self, task: str | None = None, seed: int | None = None) -> OpenEnvSession:
        """Open a WebSocket session and reset it onto `task` (its split and index, or its seed) and `seed` (else 0)."""
        session = OpenEnvSession(self, *self._episode(task, seed))
        await session.start()
        return session

    def session(self, task: str | None = None, seed: int | None = None) -> OpenEnvSession:
        """Synchronous `asession`: the session's connection lives on its own loop thread until `close`."""
        session = OpenEnvSession(self, *self._episode(task, seed))
        runner = LoopThread("nenyax-openenv-session")
        try:
            runner.run(session.start())
        except BaseException:
            runner.close()
            raise
        session._runner = runner
        return session
