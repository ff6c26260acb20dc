"""Environments and step-mode sessions: the interface every adapter implements."""

from __future__ import annotations

import abc
import random
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from nenyax.core._sync import run_sync
from nenyax.core.errors import PolicyFailure, UnsupportedPolicyError
from nenyax.core.manifest import Manifest, Mode
from nenyax.core.trajectory import Judgment, Step, Trajectory

if TYPE_CHECKING:
    from nenyax.core.runs import Sink

T = TypeVar("T")


class Session(abc.ABC):
    """One step-mode episode in progress: ``observation`` -> ``act(action)`` until ``done``.

    Subclasses implement `observation`, `done`, `act` and `judge`; the built-in policies need
    `reference_action`, `null_action` and `random_action`; model policies need the text codec
    (`render`, `parse_action`).
    """

    task_id: str | None = None
    """Stable id of the task this session plays."""
    seed: int | None = None
    """Seed the session started from."""

    @property
    @abc.abstractmethod
    def observation(self) -> Any:
        """The current native observation."""

    @property
    @abc.abstractmethod
    def done(self) -> bool:
        """True once the episode is over (terminated or truncated)."""

    @abc.abstractmethod
    def act(self, action: Any) -> Step:
        """Apply `action`; return the step (observation it was chosen from, reward, flags)."""

    @abc.abstractmethod
    def judge(self, steps: Sequence[Step]) -> Judgment:
        """Judge the finished episode; raise `VerifierFailure` when the verifier itself fails."""

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release resources held by the session."""

    async def aact(self, action: Any) -> Step:
        """Async twin of `act`; override for environments that do I/O."""
        return self.act(action)

    async def aclose(self) -> None:
        """Async twin of `close`."""
        self.close()

    # ---- text codec: how a chat model sees and drives this environment

    def render(self) -> list[dict[str, Any]]:
        """Chat messages presenting the current observation (the system prompt on the first turn)."""
        msg = "This environment has no text codec, so a chat model cannot play it."
        raise UnsupportedPolicyError(msg)

    def parse_action(self, text: str) -> Any:
        """Turn a model's reply into an action; raise `PolicyFailure` when it cannot be parsed."""
        if not isinstance(text, str):
            msg = f"Expected the model's reply as text, got {type(text).__name__}."
            raise PolicyFailure(msg)
        return text

    # ---- built-in policies

    def reference_action(self) -> Any:
        """The oracle's action for the current observation."""
        msg = "This environment has no reference (oracle) policy."
        raise UnsupportedPolicyError(msg)

    def null_action(self) -> Any:
        """An action that does nothing useful (empty answer, no-op)."""
        msg = "This environment has no null action."
        raise UnsupportedPolicyError(msg)

    def random_action(self, rng: random.Random) -> Any:
        """A random valid action (for text environments: a garbage answer)."""
        msg = "This environment has no random action."
        raise UnsupportedPolicyError(msg)


class Environment(abc.ABC):
    """An environment of any mode, loaded from a URI by an adapter."""

    def __init__(self, manifest: Manifest) -> None:
        """Wrap `manifest`; subclasses add what they need to run episodes."""
        self.manifest = manifest

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.manifest.uri} ({self.manifest.mode.value})>"

    @property
    def uri(self) -> str:
        """The URI this environment was loaded from."""
        return self.manifest.uri

    @abc.abstractmethod
    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """Stable task ids of `split` (the first split by default), at most `limit` of them."""

    @abc.abstractmethod
    async def arollout(
        self,
        policy: Any,
        task: str | None = None,
        seed: int | None = None,
        *,
        group_id: str | None = None,
        sample: int = 0,
        timeout: float | None = None,
    ) -> Trajectory:
        """Play one episode with `policy` and return its judged trajectory.

        A failed episode is returned with its status, never raised; only user mistakes raise.
        `sample` numbers repeats of the same task (it seeds the built-in random policy); past
        `timeout` seconds the episode ends with status ``timeout``.
        """

    def rollout(
        self, policy: Any, task: str | None = None, seed: int | None = None, *, timeout: float | None = None
    ) -> Trajectory:
        """Synchronous `arollout`; also works inside a running event loop (Jupyter)."""
        return run_sync(_closing(policy, self.arollout(policy, task=task, seed=seed, timeout=timeout)))

    async def arollouts(
        self,
        policy: Any,
        tasks: Sequence[str] | int | None = None,
        *,
        n: int = 1,
        concurrency: int = 16,
        sink: Sink | str | Path | None = None,
        timeout: float | None = None,
    ) -> list[Trajectory]:
        """Run `n` episodes of each task with bounded concurrency, streaming each to `sink`."""
        from nenyax.core.rollout import run_many

        return await run_many(self, policy, tasks, n=n, concurrency=concurrency, sink=sink, timeout=timeout)

    def rollouts(
        self,
        policy: Any,
        tasks: Sequence[str] | int | None = None,
        *,
        n: int = 1,
        concurrency: int = 16,
        sink: Sink | str | Path | None = None,
        timeout: float | None = None,
    ) -> list[Trajectory]:
        """Synchronous `arollouts`."""
        work = self.arollouts(policy, tasks, n=n, concurrency=concurrency, sink=sink, timeout=timeout)
        return run_sync(_closing(policy, work))

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources held by the environment."""


async def _closing(policy: Any, work: Awaitable[T]) -> T:
    """Await `work`, then release what `policy` holds for this loop (a sync call's loop ends here)."""
    try:
        return await work
    finally:
        aclose = getattr(policy, "aclose", None)
        if aclose is not None:
            await aclose()


class StepEnvironment(Environment):
    """A step-mode environment: Nenyax's loop drives `session()` and `act()`."""

    @abc.abstractmethod
    def session(self, task: str | None = None, seed: int | None = None) -> Session:
        """Start an episode of `task` (a task id) from `seed`; raise `BadURIError` for an unknown task id."""

    async def asession(self, task: str | None = None, seed: int | None = None) -> Session:
        """Async twin of `session`; override for environments that do I/O."""
        return self.session(task=task, seed=seed)

    async def arollout(
        self,
        policy: Any,
        task: str | None = None,
        seed: int | None = None,
        *,
        group_id: str | None = None,
        sample: int = 0,
        timeout: float | None = None,
    ) -> Trajectory:
        """Play one episode through the step loop."""
        from nenyax.core.rollout import run_step_episode

        if self.manifest.mode is not Mode.STEP:
            msg = f"{self.uri} declares mode {self.manifest.mode.value} but is a StepEnvironment."
            raise TypeError(msg)
        return await run_step_episode(
            self, policy, task=task, seed=seed, group_id=group_id, sample=sample, timeout=timeout
        )
