"""Environments of the three modes: the bases every adapter's environment derives from.

Who drives the loop decides the mode. A `StepEnvironment` is driven by Nenyax's own loop
(``session()`` then ``act()``); a `RolloutEnvironment` runs its own loop and calls the model
through Nenyax's recording proxy; a `TaskEnvironment` has a harness run an agent on a graded task
in a sandbox, the agent's model reached through the same proxy. `rollout()` works the same on all
three: it goes one way down, to `nenyax.core.engine.runner`, with the policy resolved once.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nenyax.core.contract import serde
from nenyax.core.contract.events import Observers, observers_of
from nenyax.core.contract.manifest import Manifest, Mode
from nenyax.core.contract.trajectory import Group, Trajectory
from nenyax.core.engine.executors import Executor
from nenyax.core.engine.native_episode import NativeEpisode, NativeResult
from nenyax.core.engine.policies import as_policy
from nenyax.core.engine.session import Session
from nenyax.core.engine.sinks import JsonlSink
from nenyax.core.errors import UnsupportedPolicyError

if TYPE_CHECKING:
    from nenyax.core.engine.judging import GroupBarrier, Judging
    from nenyax.core.engine.loader import EnvironmentSpec


Tasks = Sequence[str] | int | None
"""Task ids, a count of the first task ids, or None for every task."""


class Environment(abc.ABC):
    """An environment of any mode, loaded from a URI by an adapter."""

    mode: Mode
    """The mode every environment of this base has (checked against the manifest)."""
    source: EnvironmentSpec | None = None
    """What `load` loaded this from (URI, load config, plugins): ``load(env.source)`` rebuilds it anywhere.

    None for an environment built directly rather than by `load`, or whose plugins cannot travel
    (`source_problem` says why); such an environment plays only in this process.
    """
    source_problem: str | None = None
    """Why `source` is None although `load` built this environment (a plugin object that does not pickle)."""

    def __init__(self, manifest: Manifest) -> None:
        """Wrap `manifest`; subclasses add what they need to run episodes."""
        if manifest.mode is not self.mode:
            msg = f"{manifest.uri} declares mode {manifest.mode.value} but is a {type(self).__name__}."
            raise TypeError(msg)
        self.manifest = manifest
        self._digest: str | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.manifest.uri} ({self.manifest.mode.value})>"

    @property
    def uri(self) -> str:
        """The URI this environment was loaded from."""
        return self.manifest.uri

    @property
    def digest(self) -> str:
        """The manifest's digest, computed once (every trajectory records it)."""
        if self._digest is None:
            self._digest = serde.digest(self.manifest)
        return self._digest

    @abc.abstractmethod
    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """Stable task ids of `split` (the first split by default), at most `limit` of them."""

    async def arollout(
        self,
        policy: Any,
        task: str | None = None,
        seed: int | None = None,
        *,
        group_id: str | None = None,
        sample: int = 0,
        timeout: float | None = None,
        observers: Iterable[Any] | Observers | None = None,
        judges: Sequence[str] | Judging | GroupBarrier = (),
        score: str | None = None,
    ) -> Trajectory:
        """Play one episode with `policy` and return its judged trajectory.

        A failed episode is returned with its status, never raised; only user mistakes raise.
        `sample` numbers repeats of the same task (it seeds the built-in random policy); past
        `timeout` seconds the episode ends with status ``timeout``. `observers` get the episode's
        events as they happen (`nenyax.core.contract.events`). `judges` (each ``NAME[?options]``) judge
        it beside the format's own verifier, its score composed as `score` says (`nenyax.core.engine.judging`);
        for many episodes, build them once (``Judging.build(judges, score)``) and pass that.
        """
        # The runner loads on the first episode: it brings the recording proxy (an aiohttp server), which
        # importing an environment base (an adapter, `nenyax --help`) never needs.
        from nenyax.core.engine import runner
        from nenyax.core.engine.judging import judging_of

        judging, owned = judging_of(judges, score)
        try:
            return await runner.run_episode(
                self,
                as_policy(policy),
                task=task,
                seed=seed,
                group_id=group_id,
                sample=sample,
                timeout=timeout,
                observers=observers_of(observers),
                judging=judging,
            )
        finally:
            if owned and judging is not None:
                await judging.aclose()

    def rollout(
        self,
        policy: Any,
        task: str | None = None,
        seed: int | None = None,
        *,
        timeout: float | None = None,
        observers: Iterable[Any] | Observers | None = None,
        judges: Sequence[str] | Judging | GroupBarrier = (),
        score: str | None = None,
    ) -> Trajectory:
        """Synchronous `arollout`; also works inside a running event loop (Jupyter)."""
        from nenyax.core.engine import runner
        from nenyax.core.engine.judging import judging_of

        judging, _owned = judging_of(judges, score)  # closed for this call's loop either way
        return runner.rollout_sync(
            self, policy, task=task, seed=seed, timeout=timeout, observers=observers, judging=judging
        )

    async def arollouts(
        self,
        policy: Any,
        tasks: Tasks = None,
        *,
        n: int = 1,
        concurrency: int = 16,
        sink: JsonlSink | str | Path | None = None,
        timeout: float | None = None,
        observers: Iterable[Any] | None = None,
        backend: str | Executor | None = None,
        workers: int | None = None,
        judges: Sequence[str] | Judging | GroupBarrier = (),
        score: str | None = None,
    ) -> list[Trajectory]:
        """Run `n` episodes of each task with bounded concurrency, streaming each to `sink` as it finishes.

        With ``n > 1`` the episodes of one task share a ``group_id`` (see `groups`). `observers` get
        every episode's events; the sink is written before they see an episode end. ``backend="process"``
        plays them on `workers` processes of this machine (default: one per CPU), each rebuilding this
        environment from `source`; the trajectories are the same, and only this process writes `sink`.
        `judges` and `score` as `arollout`'s (they judge in this process, whatever the backend).
        """
        from nenyax.core.engine import runner
        from nenyax.core.engine.judging import judging_of

        judging, owned = judging_of(judges, score)
        try:
            return await runner.run_many(
                self,
                as_policy(policy),
                tasks,
                n=n,
                concurrency=concurrency,
                sink=sink,
                timeout=timeout,
                observers=observers,
                backend=backend,
                workers=workers,
                judging=judging,
            )
        finally:
            if owned and judging is not None:
                await judging.aclose()

    def rollouts(
        self,
        policy: Any,
        tasks: Tasks = None,
        *,
        n: int = 1,
        concurrency: int = 16,
        sink: JsonlSink | str | Path | None = None,
        timeout: float | None = None,
        observers: Iterable[Any] | None = None,
        backend: str | Executor | None = None,
        workers: int | None = None,
        judges: Sequence[str] | Judging | GroupBarrier = (),
        score: str | None = None,
    ) -> list[Trajectory]:
        """Synchronous `arollouts`."""
        from nenyax.core.engine import runner
        from nenyax.core.engine.judging import judging_of

        pol = as_policy(policy)
        judging, _owned = judging_of(judges, score)  # released with this call's loop either way
        work = self.arollouts(
            pol,
            tasks,
            n=n,
            concurrency=concurrency,
            sink=sink,
            timeout=timeout,
            observers=observers,
            backend=backend,
            workers=workers,
            judges=judging or (),
        )
        return runner.run_closing(work, pol, *([judging] if judging is not None else []))

    def groups(
        self,
        policy: Any,
        tasks: Tasks = None,
        *,
        n: int = 2,
        concurrency: int = 16,
        sink: JsonlSink | str | Path | None = None,
        timeout: float | None = None,
        observers: Iterable[Any] | None = None,
        backend: str | Executor | None = None,
        workers: int | None = None,
        judges: Sequence[str] | Judging | GroupBarrier = (),
        score: str | None = None,
    ) -> list[Group]:
        """`n` episodes of each task, as one `Group` per task (same task, same policy revision)."""
        trajectories = self.rollouts(
            policy,
            tasks,
            n=n,
            concurrency=concurrency,
            sink=sink,
            timeout=timeout,
            observers=observers,
            backend=backend,
            workers=workers,
            judges=judges,
            score=score,
        )
        from nenyax.core.engine import runner

        return runner.group(trajectories)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources held by the environment."""


class StepEnvironment(Environment):
    """A step-mode environment: Nenyax's loop drives `session()` and `act()`."""

    mode = Mode.STEP

    @abc.abstractmethod
    def session(self, task: str | None = None, seed: int | None = None) -> Session:
        """Start an episode of `task` (a task id) from `seed`; raise `BadURIError` for an unknown task id."""

    async def asession(self, task: str | None = None, seed: int | None = None) -> Session:
        """Async twin of `session`; override for environments that do I/O."""
        return self.session(task=task, seed=seed)

    @property
    def synchronous(self) -> bool:
        """True when sessions open without I/O (`asession` is not overridden).

        The engine then runs a single `rollout` with a synchronous policy without an event loop.
        """
        return type(self).asession is StepEnvironment.asession


class RolloutEnvironment(Environment):
    """A rollout-mode environment: its own loop drives the model through an OpenAI-compatible URL.

    Nenyax opens a recording-proxy route per episode; every call the loop makes there is answered
    by the policy (a remote `Endpoint` is forwarded, an in-process policy is answered directly) and
    recorded in that episode's trajectory, with token ids and logprobs where the policy has them.
    """

    mode = Mode.ROLLOUT

    @abc.abstractmethod
    def run(self, episode: NativeEpisode) -> NativeResult | Awaitable[NativeResult]:
        """Run the native loop for `episode` against ``episode.base_url``; return its judgment.

        A coroutine (``async def run``) runs on the engine's event loop; a plain function (a synchronous
        harness such as lm-eval's) runs on a worker thread, so the proxy answering it is never blocked.

        Raise `InfraFailure`, `VerifierFailure` or `EnvironmentFailure` (or anything else, taken as
        the environment's failure) when it breaks; a model call that failed is classified by the
        proxy and wins over whatever the loop made of it.
        """

    def reference_reply(self, task_id: str | None, messages: list[dict[str, Any]]) -> str | dict[str, Any]:
        """What the built-in `reference` policy answers to a model call (the gold answer, a tool call...)."""
        msg = f"{self.uri} has no reference (oracle) policy."
        raise UnsupportedPolicyError(msg)


class TaskEnvironment(Environment):
    """A task-mode environment: a harness runs an agent on a graded task inside a `sandbox` plugin.

    The sandbox backend is chosen when the environment is loaded (from the URI or config, through
    the registry in the adapter's `LoadContext`). Built-in policies become the harness's own agents
    (``reference`` -> the task's solution, ``null`` -> an agent that does nothing); a model policy
    becomes the harness's chat agent, pointed at the episode's recording-proxy URL.
    """

    mode = Mode.TASK

    @abc.abstractmethod
    async def run(self, episode: NativeEpisode) -> NativeResult:
        """Run ``episode.agent`` on the task in a fresh sandbox, grade it, and return the judgment."""
