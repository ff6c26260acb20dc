"""A running OpenEnv server as a step environment: one task per reset seed, judged by the episode's return."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from nenyax.adapters.openenv import codec
from nenyax.adapters.openenv._loop import LoopThread
from nenyax.adapters.openenv.server import ServerInfo, fetch
from nenyax.adapters.openenv.session import OpenEnvSession, check_seed
from nenyax.core import BadURIError, Capabilities, Manifest, Mode, Split, StepEnvironment

if TYPE_CHECKING:
    from nenyax.adapters.openenv.adapter import ServerSpec

TASK_PREFIX = "seed/"
WIRES = {
    "0.10": "openenv 0.10: observations carry metadata (recorded in each step's info)",
    "0.3": "openenv-core 0.3: observations carry no metadata",
}
_POLICY_DRAWS = 8
"""Random actions drawn at load to see that the random policy's actions fit the schema."""


def _policy_support(info: ServerInfo) -> tuple[str, str]:
    """Whether the built-in null and random actions fit the schema ('ok' or the reason they do not)."""
    action = info.action
    problems = action.problems(action.null_instance())
    null = "ok" if not problems else f"The schema's plainest action does not validate ({problems[0]}); no null policy."
    rng = random.Random(0)
    bad = next((p for p in (action.problems(action.random_instance(rng)) for _ in range(_POLICY_DRAWS)) if p), None)
    rand = "ok" if bad is None else f"Random actions drawn from the schema fail it ({bad[0]}); no random policy."
    return null, rand


class OpenEnvEnvironment(StepEnvironment):
    """One OpenEnv server; task ids ``seed/<n>`` (any seed is a valid task)."""

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
            splits=(Split(name="seeds", count=spec.tasks),),
            observation=f"A JSON object with {observed}." if observed else "A JSON object.",
            action=f"{info.action.describe()}; validated against the server's /schema before sending.",
            score_range=None,
            extra={
                "server": meta,
                "wire": WIRES[info.wire],
                "action_schema": info.action.schema,
                "seeds": info.seeds,
                "seeds_vary": info.seeds_vary,
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
                reference_policy=spec.reference is not None,
                null_policy=null == "ok",
                random_policy=rand == "ok",
                multi_turn=True,
                concurrent_sessions=True,
                max_turns=spec.max_turns,
            ),
        )

    # ---- tasks

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """``seed/0`` ... ``seed/<tasks-1>``."""
        if split not in (None, "seeds"):
            msg = f"{self.uri} has one split, 'seeds', not {split!r}."
            raise BadURIError(msg)
        count = self.spec.tasks if limit is None else max(0, min(limit, self.spec.tasks))
        return [f"{TASK_PREFIX}{n}" for n in range(count)]

    def parse_task(self, task: str) -> int:
        """The reset seed of `task`; `BadURIError` for a malformed id."""
        digits = task[len(TASK_PREFIX) :] if isinstance(task, str) and task.startswith(TASK_PREFIX) else ""
        if not (digits.isascii() and digits.isdecimal()):
            msg = f"{task!r} is not a task of {self.uri}; its task ids look like 'seed/0'."
            raise BadURIError(msg)
        return check_seed(int(digits))

    def _seed(self, task: str | None, seed: int | None) -> int:
        # A task's own seed wins over `seed`, as for every seeded format.
        if task is not None:
            return self.parse_task(task)
        return 0 if seed is None else check_seed(seed)

    async def asession(self, task: str | None = None, seed: int | None = None) -> OpenEnvSession:
        """Open a WebSocket session and reset it from `task`'s seed (else `seed`, else 0)."""
        session = OpenEnvSession(self, self._seed(task, seed))
        await session.start()
        return session

    def session(self, task: str | None = None, seed: int | None = None) -> OpenEnvSession:
        """Synchronous `asession`: the session's connection lives on its own loop thread until `close`."""
        session = OpenEnvSession(self, self._seed(task, seed))
        runner = LoopThread()
        try:
            runner.run(session.start())
        except BaseException:
            runner.stop()
            raise
        session._runner = runner
        return session
