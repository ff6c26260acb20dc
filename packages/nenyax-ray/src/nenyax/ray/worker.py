"""The Ray worker: one actor that rebuilds the environment and the policy once and plays the episodes it is sent.

Each actor is an async Ray actor (its methods run on one event loop of its own), so the episodes sent to
it play at once on that loop, exactly as the in-process asyncio pool plays them: `run_episode`, with a
recording proxy of the actor's own for rollout- and task-mode episodes (an Endpoint's calls go from here
straight to the model server). Every method returns a plain tuple, never raises: what an episode raised
travels back as a value the driver re-raises, so a Ray error the driver sees always means the actor (its
process, its node) was lost.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import ray

from nenyax.core import CallablePolicy, EnvironmentSpec, Mode, Policy, RecordingProxy, Trajectory
from nenyax.core.errors import CannotTravelError, NenyaxError
from nenyax.core.toolkit.dealer import Job, PolicyTicket
from nenyax.core.toolkit.episodes import run_episode
from nenyax.core.toolkit.failures import describe

BATCH_MAX = 16
"""Most replies in one streamed batch."""
BATCH_WINDOW_S = 0.02
"""How long a batch stays open after its first reply for others to join it."""


def portable(exc: BaseException, *, rebuilding: bool = False) -> BaseException:
    """`exc` if it pickles (the driver re-raises it as it was), else the same sentence in a NenyaxError."""
    if rebuilding and not isinstance(exc, NenyaxError):
        msg = f"A Ray worker could not rebuild the environment or the policy: {describe(exc)}."
        return CannotTravelError(msg)
    try:
        pickle.loads(pickle.dumps(exc))
    except (pickle.PicklingError, TypeError, AttributeError, ValueError):  # its arguments do not travel
        return NenyaxError(describe(exc))
    return exc


class Player:
    """One worker: the environment and the policy, rebuilt once, and the episodes under way on its loop."""

    def __init__(
        self,
        spec_data: dict[str, Any],
        ticket: PolicyTicket,
        function: bytes | None,
        timeout: float | None,
    ) -> None:
        """Keep what `load` rebuilds from (nothing heavy runs here: a failure is said by `load`)."""
        self.spec_data, self.ticket, self.function, self.timeout = spec_data, ticket, function, timeout
        self.env: Any = None
        self.policy: Policy | None = None
        self.proxy: RecordingProxy | None = None
        self.under_way: set[asyncio.Future[tuple[str, Any]]] = set()

    async def load(self) -> tuple[Any, ...]:
        """Rebuild the environment and the policy: ``("ready", pid, host)`` or ``("broken", error)``."""
        try:
            self.env = EnvironmentSpec.from_data(self.spec_data).load()
            self.policy = self._policy()
            if self.env.manifest.mode is not Mode.STEP:
                self.proxy = await RecordingProxy().start()
        except BaseException as exc:  # noqa: BLE001 - said once on the driver, as the run's error
            return ("broken", portable(exc, rebuilding=True))
        return ("ready", os.getpid(), socket.gethostname())

    def _policy(self) -> Policy:
        if self.function is None:
            return self.ticket.build()
        # A function of the driver's script (``__main__``), which no worker can import: it came by value.
        fn = ray.cloudpickle.loads(self.function)
        return CallablePolicy(fn, speaks_text=self.ticket.speaks_text, name=self.ticket.label)

    async def play(self, job: Job) -> tuple[str, Any]:
        """Play one episode: ``("done", trajectory)``, ``("interrupted", trajectory)`` or ``("raised", error)``."""
        # A task of its own, which `interrupt` cancels; whatever the episode raises is caught inside it
        # (an interrupted episode raises a KeyboardInterrupt, which would stop the actor's whole loop).
        episode = asyncio.ensure_future(self._episode(job))
        self.under_way.add(episode)
        try:
            return await episode
        except asyncio.CancelledError:  # cancelled before it started: nothing was recorded
            return ("cancelled", None)
        finally:
            self.under_way.discard(episode)

    async def play_many(self, jobs: list[tuple[int, Job]]) -> AsyncIterator[list[tuple[int, tuple[str, Any]]]]:
        """Play `jobs` (``(index, job)``) at once; yield what finished as ``[(index, reply), ...]`` (see `play`).

        Called as a Ray streaming generator: each batch reaches the driver as it is yielded. A batch closes
        at `BATCH_MAX` replies or `BATCH_WINDOW_S` after its first, so one-step episodes finishing back to
        back cost the driver one object, not one call, each; a long episode's reply waits at most the window.
        """
        running = {asyncio.ensure_future(self.play(job)): index for index, job in jobs}
        while running:
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            batch = [(running.pop(f), f.result()) for f in done]
            closes = time.monotonic() + BATCH_WINDOW_S
            while running and len(batch) < BATCH_MAX and (left := closes - time.monotonic()) > 0:
                done, _ = await asyncio.wait(running, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                batch += [(running.pop(f), f.result()) for f in done]
            yield batch

    async def _episode(self, job: Job) -> tuple[str, Any]:
        task, group_id, sample = job
        try:
            trajectory = await run_episode(
                self.env,
                self.policy,  # type: ignore[arg-type]
                task=task,
                group_id=group_id,
                sample=sample,
                timeout=self.timeout,
                proxy=self.proxy,
            )
        except BaseException as exc:  # noqa: BLE001 - whatever an episode raises (Ctrl-C included) goes to the driver
            interrupted = getattr(exc, "trajectory", None)
            if isinstance(interrupted, Trajectory):
                return ("interrupted", interrupted)
            if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
                return ("cancelled", None)
            return ("raised", portable(exc))
        return ("done", trajectory)

    async def interrupt(self) -> int:
        """Ctrl-C on the driver: cancel every episode under way (each `play` then hands back what it played)."""
        for episode in list(self.under_way):
            episode.cancel()
        return len(self.under_way)

    async def close(self) -> None:
        """Release the proxy and the environment (before the actor is killed)."""
        if self.proxy is not None:
            await self.proxy.close()
            self.proxy = None
        if self.env is not None:
            self.env.close()
            self.env = None
