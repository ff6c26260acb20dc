"""Where episodes run: the executor interface under `runner.run_jobs`, and the backends that implement it.

This module's docstrings are the specification. `run_jobs` decides *which* episodes to play (a list of
`Job`s) and what happens to each finished trajectory (the sink, the caller's tally); an executor
decides *where* they are played:

- ``"asyncio"`` (the default, `nenyax.core.engine.runner.AsyncioPool`): on this process's event loop, at
  most `Plan.concurrency` at once, one recording proxy for the run.
- ``"process"`` (`nenyax.core.engine.process_pool.ProcessPool`): on N worker processes of this machine.
  Each rebuilds the environment from ``env.source`` and the policy from its travel form once, plays the
  jobs it is dealt (with the asyncio pool, inside the worker), and streams each finished trajectory
  back; only this process writes the sink.
- ``"ray"`` (in the ``nenyax-ray`` distribution): on Ray actors, on this machine or a cluster (its
  ``address=``); each rebuilds the environment and the policy the same way, and a worker lost mid-episode
  has that episode played again on another one.

Core's two backends are named here by import string (`CORE_BACKENDS`); another distribution adds one by
entry point (group ``nenyax.executors``, `nenyax.core.plugins.seams`), so core never names its module.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import attrs

from nenyax.core.contract.events import NO_OBSERVERS, EpisodeEnded, EpisodeStarted, Observers
from nenyax.core.contract.trajectory import Status, Timing, Trajectory
from nenyax.core.errors import UsageError, WorkerLostError, did_you_mean, plural
from nenyax.core.plugins import seams

if TYPE_CHECKING:
    from nenyax.core.engine.environment import Environment
    from nenyax.core.engine.policies import Policy


class Job(NamedTuple):
    """One episode to play: which task, its group id, and which repeat of the task it is."""

    task: str | None
    group_id: str | None
    sample: int


TrajectoryFinished = Callable[[int, Trajectory], None]
"""``on_trajectory(index, trajectory)``: the one callback an executor hands every trajectory to.

`index` is the job's position in `Plan.jobs`. It is called in the process and on the event loop that
awaits `Executor.play`, exactly once per job that produced a trajectory, as soon as that trajectory
exists (never batched at the end). A trajectory with status ``interrupted`` (Ctrl-C) is handed over too,
before the interrupt is re-raised. This is the seam the engine's event stream (episode ended) hangs on.
"""


@attrs.frozen(kw_only=True)
class Plan:
    """What an executor is asked to play."""

    env: Environment
    """The environment, loaded in this process; an executor that plays elsewhere rebuilds it from
    ``env.source`` (an `EnvironmentSpec`)."""
    policy: Policy
    """The resolved policy; one that plays elsewhere travels as `nenyax.core.engine.travel.PolicyTicket`."""
    jobs: Sequence[Job]
    """Every episode to play, each exactly once."""
    concurrency: int = 16
    """Episodes under way at once per event loop (per worker, for a pool of processes)."""
    timeout: float | None = None
    """Seconds each episode may take (status ``timeout`` past it)."""
    judging: Any = None
    """The judges put on the environment (`nenyax.core.engine.judging.Judging`, or a run's `GroupBarrier`), or
    None: each finished episode goes through them before it ends. They judge in this process: an executor
    playing elsewhere judges each trajectory as it comes back, before its events are published (`Dealer`)."""
    observers: Observers = NO_OBSERVERS
    """Who gets the episodes' events (the run's sink first). An executor playing in this process hands
    them to each episode, which publishes every event; one playing elsewhere publishes, in this process,
    each episode's start and end as its trajectory comes back (`publish_played_elsewhere`)."""


def publish_played_elsewhere(observers: Observers, trajectory: Trajectory) -> None:
    """An episode another process played: its `EpisodeStarted` and `EpisodeEnded`, published here.

    The events inside the episode (model calls, steps, tool calls) stay in the trajectory; they are
    not streamed across processes. An essential observer's failure (the sink's) is raised, as in-process.
    """
    if observers.episode_started:
        started = trajectory.timing.started if trajectory.timing is not None else 0.0
        event = EpisodeStarted(
            trajectory_id=trajectory.id,
            env_uri=trajectory.env_uri,
            task_id=trajectory.task_id,
            seed=trajectory.seed,
            sample=trajectory.sample,
            group_id=trajectory.group_id,
            policy=trajectory.policy,
            started=started,
        )
        observers.publish(observers.episode_started, event)
    if observers.episode_ended:
        observers.publish(observers.episode_ended, EpisodeEnded(trajectory=trajectory), stop_on_essential=True)


def default_workers() -> int:
    """One worker per CPU this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def hand_over(plan: Plan, on_trajectory: TrajectoryFinished, index: int, trajectory: Trajectory) -> None:
    """The one place a dealer hands over a trajectory that came back (or was lost) from elsewhere.

    Its events are published here first (the sink writes it), then `on_trajectory` gets it; an essential
    observer's failure (a full disk) is raised, and the dealer stops the run, as in-process.
    """
    publish_played_elsewhere(plan.observers, trajectory)
    on_trajectory(index, trajectory)


def lost_trajectory(plan: Plan, job: Job, *, started: float, error: str) -> Trajectory:
    """The ``infra_error`` trajectory of `job`, lost with the worker playing it since `started`.

    `error` is the sentence a reader sees: which worker, what happened to it, whether it was replayed.
    """
    env = plan.env
    return Trajectory(
        env_uri=env.uri,
        manifest_digest=env.digest,
        mode=env.manifest.mode,
        task_id=job.task,
        seed=None,
        policy=plan.policy.info,
        status=Status.INFRA_ERROR,
        judgment=None,
        timing=Timing(started=started, ended=time.time()),
        error=error,
        group_id=job.group_id,
        sample=job.sample,
    )


def workers_lost(what: str, died: int, detail: str, unplayed: int) -> WorkerLostError:
    """The one `WorkerLostError` sentence ending a run whose `died` workers (`what`: their noun) took episodes.

    `detail` says what became of the episodes under way there (in parentheses, or after a semicolon).
    """
    noun = plural(what) if died != 1 else what
    return WorkerLostError(
        f"{died} {noun} died during the run {detail}, and {unplayed} episode(s) were not played "
        "(run them again, e.g. `nenyax eval --resume`)."
    )


class Dealer:
    """The skeleton of an executor that deals a plan's jobs to workers elsewhere (processes, Ray actors).

    `run` plays (`play`, the backend's own dealing), stops every worker on Ctrl-C (`interrupt`), always
    closes (`close`), then raises the first failure, or one `WorkerLostError` (`lost`) when episodes were
    left unplayed (`unplayed`). Every trajectory goes through `hand_over`; a failure (a user mistake, a
    sink that cannot write) through `fail`, which stops new deals.
    """

    def __init__(self, plan: Plan, on_trajectory: TrajectoryFinished) -> None:
        """Nothing is dealt until `run`."""
        self.plan, self.on_trajectory = plan, on_trajectory
        self.failed: list[BaseException] = []
        self.interrupting = False
        self.judging: set[asyncio.Task[None]] = set()
        """Trajectories that came back and are being judged here (the plan's judges) before they are handed over."""

    async def run(self) -> None:
        """Play every job (see `Executor.play` for the contract)."""
        try:
            try:
                await self.play()
                await self._judged()
            except (asyncio.CancelledError, KeyboardInterrupt):
                self.interrupting = True
                await self.interrupt()
                raise
        finally:
            await self.close()
            if self.judging:  # stopped early: what came back is still judged and written, never dropped
                await asyncio.shield(self._judged())
        self.settle()
        if self.failed:
            raise self.failed[0]
        if self.unplayed():
            raise self.lost()

    def hand_over(self, index: int, trajectory: Trajectory) -> None:
        """Hand a trajectory that came back (or was lost) over; a sink that fails stops the run, as in-process.
        With judges on the plan it is judged here first (a task of this loop: a judge may call a model)."""
        if self.plan.judging is None:
            self._hand_over(index, trajectory)
            return
        task = asyncio.get_running_loop().create_task(self._judge(index, trajectory))
        self.judging.add(task)
        task.add_done_callback(self.judging.discard)

    def _hand_over(self, index: int, trajectory: Trajectory) -> None:
        try:
            hand_over(self.plan, self.on_trajectory, index, trajectory)
        except BaseException as exc:  # noqa: BLE001 - the sink failed (a full disk): raised once the run stops
            self.fail(exc)

    async def _judge(self, index: int, trajectory: Trajectory) -> None:
        try:
            judged = await self.plan.judging.apply(trajectory)
        except BaseException as exc:  # noqa: BLE001 - judges fail as a trajectory's status; this is anything else
            self.fail(exc)
            return
        self._hand_over(index, judged)

    async def _judged(self) -> None:
        """Wait for every trajectory being judged. Where the run did not play every job, the groups that will
        never complete are judged as they stand (`GroupBarrier.flush`)."""
        flush = getattr(self.plan.judging, "flush", None)
        if flush is not None and (self.failed or self.interrupting or self.unplayed()):
            await asyncio.sleep(0)  # the trajectories handed over last reach their group first
            await flush()
        # Waited on by what is still running: a finished task leaves the set by a callback the loop runs later,
        # and gathering finished tasks does not yield to it (Python 3.12+), so a loop on the set would spin.
        while running := [task for task in self.judging if not task.done()]:
            await asyncio.wait(running)

    def fail(self, exc: BaseException) -> None:
        """Record a failure: no new episodes are dealt, and the first is raised when the run stops."""
        self.failed.append(exc)

    async def play(self) -> None:
        """Start the workers and deal until every job came back or nothing more can be played."""
        raise NotImplementedError

    async def interrupt(self) -> None:
        """Ctrl-C: every worker hands its episodes over as interrupted, or is stopped after a grace period."""
        raise NotImplementedError

    async def close(self) -> None:
        """Stop every worker and release what the run holds (also after a failure or an interrupt)."""
        raise NotImplementedError

    def settle(self) -> None:
        """After `close`: account for what no worker will play (nothing to do by default)."""

    def unplayed(self) -> int:
        """How many jobs were never played to the end."""
        raise NotImplementedError

    def lost(self) -> WorkerLostError:
        """The one sentence ending a run that lost workers with episodes left (`workers_lost`)."""
        raise NotImplementedError


class Executor(Protocol):
    """Plays the jobs of a `Plan` somewhere and hands every finished trajectory back, exactly once."""

    name: str
    """The backend name it is selected by (``asyncio``, ``process``...)."""

    async def play(self, plan: Plan, on_trajectory: TrajectoryFinished) -> None:
        """Play every job of `plan` exactly once; call `on_trajectory` with each finished trajectory.

        The contract every backend keeps:

        - Refuse before any episode starts what cannot run there: an environment or a policy that
          cannot travel is one `CannotTravelError` sentence naming it.
        - A failed episode is a trajectory with its status, never an exception. A user mistake raised
          by an episode (`UsageError`) stops new episodes; those under way finish and are handed over,
          then the first mistake is re-raised.
        - An episode lost to the backend (a worker process that died mid-episode) is handed over as an
          ``infra_error`` trajectory saying so, never dropped; if the run cannot go on, what was not
          played is said in one `WorkerLostError`.
        - Ctrl-C (cancellation of `play`, or KeyboardInterrupt) stops every worker; the episodes under
          way are handed over as ``interrupted`` trajectories where the backend can still get them,
          and the interrupt is re-raised.
        - Every episode's events reach `plan.observers` in the caller's process, the sink's first: in
          the episode itself when it plays here, by `publish_played_elsewhere` when it comes back
          from elsewhere. Only the caller's process writes anything.
        """
        ...


CORE_BACKENDS: dict[str, str] = {
    "asyncio": "nenyax.core.engine.runner:AsyncioPool",
    "process": "nenyax.core.engine.process_pool:ProcessPool",
}
"""Core's own backends: name -> ``"module:Class"``; the class takes ``workers=`` (None: its default), and
``address=`` if it reaches other machines."""


def backends() -> dict[str, str]:
    """Every backend installed: core's, then those other distributions name by entry point."""
    return {**seams.installed(seams.EXECUTORS), **CORE_BACKENDS}


def backend_names() -> list[str]:
    """The backends one may name: those installed, and those a known distribution would add (said when missing)."""
    return sorted({*backends(), *seams.KNOWN[seams.EXECUTORS]})


DEFAULT_BACKEND = "asyncio"
"""The backend `run_jobs` and `env.rollouts` use when none is named."""


def executor_for(
    backend: str | Executor | None = None, *, workers: int | None = None, address: str | None = None
) -> Executor:
    """The executor of `backend` (a name in `backends()`, or an executor object), with `workers` processes.

    `address` says where a backend that reaches other machines connects (``ray``: ``auto``, ``host:port``
    or ``ray://host:port``; None: a local instance).
    """
    if backend is not None and not isinstance(backend, str):
        if workers is not None or address is not None:
            msg = "workers= and address= configure a named backend; an executor object brings its own."
            raise UsageError(msg)
        return backend
    name = backend or DEFAULT_BACKEND
    # Core's own need no look-up of the installed distributions (the default path of every `rollouts`).
    found_backends = CORE_BACKENDS if name in CORE_BACKENDS else backends()
    if name not in found_backends:
        install = seams.distribution_of(seams.EXECUTORS, name)
        if install is not None:
            msg = f"The {name} backend is not installed; pip install {install}."
        else:
            msg = f"Unknown backend {name!r}." + did_you_mean(name, backend_names(), "backend")
        raise UsageError(msg)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        msg = f"workers must be an integer of at least 1, got {workers!r}."
        raise UsageError(msg)
    if address is not None and name != "ray":
        msg = f"address= says where a Ray cluster is; backend={name!r} plays on this machine (use backend='ray')."
        raise UsageError(msg)
    module, _, attr = found_backends[name].partition(":")
    found = importlib.import_module(module)  # installed: a missing dependency's own message says which
    cls: Any = getattr(found, attr)
    options = {} if address is None else {"address": address}
    return cls(workers=workers, **options)  # type: ignore[no-any-return]
