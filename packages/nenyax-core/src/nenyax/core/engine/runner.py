"""Where every rollout goes: one episode in any mode, many episodes with bounded concurrency, groups.

The way down is one way: `Environment.rollout(s)` -> `as_policy` (the policy, once per run) -> this
module -> the mode's loop (`step_loop` or `native_loop`) -> the session or the native loop. Nothing
here imports the environment classes: the mode in the manifest decides.

Every episode starts here: its `EpisodeRecorder` (so its trajectory id) is made before the mode's loop
runs, and its `EpisodeStarted` and `EpisodeEnded` events are published here, once each
(`nenyax.core.contract.events`). The sink of `run_jobs` is one of the run's observers.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Awaitable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from nenyax.core.contract.events import NO_OBSERVERS, EpisodeEnded, EpisodeStarted, Observers, observers_of
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Group, Status, Trajectory, new_id
from nenyax.core.contract.uri import MAX_SEED
from nenyax.core.engine.executors import Executor, Job, Plan, TrajectoryFinished, executor_for
from nenyax.core.engine.native_loop import run_native_episode
from nenyax.core.engine.policies import NEVER_SUSPEND, CallablePolicy, Policy, as_policy
from nenyax.core.engine.sinks import JsonlSink, open_sink
from nenyax.core.engine.step_loop import run_step_episode, run_step_episode_now
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import EpisodeInterrupted, UsageError
from nenyax.core.models.proxy import RecordingProxy
from nenyax.core.models.recorder import EpisodeRecorder

if TYPE_CHECKING:
    from nenyax.core.engine.environment import Environment
    from nenyax.core.engine.judging import GroupBarrier, Judging

T = TypeVar("T")


def check_seed(seed: Any) -> None:
    """Refuse a seed that is not an integer from 0 to 2**63 - 1, in one sentence."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        msg = f"A seed must be an integer from 0 to {MAX_SEED}, got {seed!r}."
        raise UsageError(msg)


def check_task(task: Any) -> None:
    """Refuse a task id that is not a non-empty string (None means the environment's first task)."""
    if task is None:
        return
    if not isinstance(task, str) or not task:
        msg = f"A task must be a task id (a non-empty string, as task_ids() gives them), got {task!r}."
        raise UsageError(msg)


def check_timeout(timeout: Any) -> None:
    """Refuse a timeout that is not a positive number of seconds."""
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
        msg = f"A timeout must be a positive number of seconds, got {timeout!r}."
        raise UsageError(msg)


def _begin(
    env: Environment,
    pol: Policy,
    observers: Observers,
    *,
    task: str | None,
    seed: int | None,
    sample: int,
    group_id: str | None,
) -> tuple[EpisodeRecorder, float]:
    """The episode's record, made as it starts (its trajectory id exists from here on), and its start time."""
    recorder = EpisodeRecorder(observers)
    started = time.time()
    if observers.episode_started:
        event = EpisodeStarted(
            trajectory_id=recorder.id,
            env_uri=env.uri,
            task_id=task,
            seed=seed,
            sample=sample,
            group_id=group_id,
            policy=pol.info,
            started=started,
        )
        observers.publish(observers.episode_started, event)
    return recorder, started


def _end(observers: Observers, trajectory: object) -> None:
    """Publish the episode's end: the sink (essential) first, whose failure is raised."""
    if observers.episode_ended and isinstance(trajectory, Trajectory):
        observers.publish(observers.episode_ended, EpisodeEnded(trajectory=trajectory), stop_on_essential=True)


async def run_episode(
    env: Environment,
    pol: Policy,
    *,
    task: str | None = None,
    seed: int | None = None,
    group_id: str | None = None,
    sample: int = 0,
    timeout: float | None = None,
    proxy: RecordingProxy | None = None,
    observers: Observers = NO_OBSERVERS,
    begun: tuple[EpisodeRecorder, float] | None = None,
    judging: Judging | GroupBarrier | None = None,
    gate: asyncio.Semaphore | None = None,
) -> Trajectory:
    """Play one episode of `env` with the resolved policy `pol`, in whatever mode `env` has.

    The episode starts and ends on `observers` here (`begun`: it has started already, with that
    recorder and start time). A user mistake raises and ends no episode; Ctrl-C ends it ``interrupted``.
    `judging`'s judges judge the finished episode before it ends (`nenyax.core.engine.judging`). `gate`, where
    given, is held while the episode plays and released before it is judged (a run whose finished episodes
    wait for their group bounds the episodes playing with it, not the ones waiting).
    """
    check_seed(seed)
    check_task(task)
    check_timeout(timeout)
    if gate is None:  # the usual case, on the hot path: no context manager to enter
        trajectory = await _play(env, pol, task, seed, group_id, sample, timeout, proxy, observers, begun)
    else:
        async with gate:
            trajectory = await _play(env, pol, task, seed, group_id, sample, timeout, proxy, observers, begun)
    if judging is not None:
        trajectory = await judging.apply(trajectory)
    _end(observers, trajectory)
    return trajectory


async def _play(
    env: Environment,
    pol: Policy,
    task: str | None,
    seed: int | None,
    group_id: str | None,
    sample: int,
    timeout: float | None,
    proxy: RecordingProxy | None,
    observers: Observers,
    begun: tuple[EpisodeRecorder, float] | None,
) -> Trajectory:
    """The episode played and judged by its format, not yet ended on `observers` (see `run_episode`)."""
    if begun is None:
        begun = _begin(env, pol, observers, task=task, seed=seed, sample=sample, group_id=group_id)
    recorder, started = begun
    try:
        if env.manifest.mode is Mode.STEP:
            trajectory = await run_step_episode(
                env,  # type: ignore[arg-type]
                pol,
                task=task,
                seed=seed,
                group_id=group_id,
                sample=sample,
                timeout=timeout,
                recorder=recorder,
                started=started,
            )
        else:
            trajectory = await run_native_episode(
                env,  # type: ignore[arg-type]
                pol,
                task=task,
                seed=seed,
                group_id=group_id,
                sample=sample,
                timeout=timeout,
                proxy=proxy,
                recorder=recorder,
                started=started,
            )
    except EpisodeInterrupted as stopped:
        _end(observers, stopped.trajectory)  # what the episode had played is kept, marked interrupted
        raise
    return trajectory


# ---------------------------------------------------------------- the synchronous path


def _runs_without_a_loop(env: Environment, pol: Policy, timeout: float | None) -> bool:
    # A policy whose act() never suspends (a plain function, a built-in) on a synchronous session needs
    # no event loop at all: creating one per call (asyncio.run) cost more than a whole short episode.
    if timeout is not None or not getattr(env, "synchronous", False):
        return False
    return (isinstance(pol, CallablePolicy) and pol.sync_fn is not None) or type(pol) in NEVER_SUSPEND


def rollout_sync(
    env: Environment,
    policy: Any,
    *,
    task: str | None,
    seed: int | None,
    timeout: float | None,
    observers: Iterable[Any] | Observers | None = None,
    judging: Judging | GroupBarrier | None = None,
) -> Trajectory:
    """`Environment.rollout`: without an event loop where the episode never waits on I/O (and no judge
    of `judging` may call a model)."""
    pol = as_policy(policy)
    watchers = observers_of(observers)
    if judging is not None:
        work = run_episode(env, pol, task=task, seed=seed, timeout=timeout, observers=watchers, judging=judging)
        return run_sync(_closing(pol, _closing(judging, work)))
    if _runs_without_a_loop(env, pol, timeout):
        check_seed(seed)
        check_task(task)
        begun = _begin(env, pol, watchers, task=task, seed=seed, sample=0, group_id=None)
        recorder, started = begun
        try:
            traj = run_step_episode_now(env, pol, task=task, seed=seed, recorder=recorder, started=started)  # type: ignore[arg-type]
        except EpisodeInterrupted as stopped:
            _end(watchers, stopped.trajectory)
            raise
        if traj is not None:
            _end(watchers, traj)
            return traj
        work = run_episode(env, pol, task=task, seed=seed, timeout=timeout, observers=watchers, begun=begun)
        return run_sync(_closing(pol, work))
    work = run_episode(env, pol, task=task, seed=seed, timeout=timeout, observers=watchers)
    return run_sync(_closing(pol, work))


async def _closing(policy: Any, work: Awaitable[T]) -> T:
    """Await `work`, then release what `policy` holds for this loop (a sync call's loop ends here)."""
    try:
        return await work
    finally:
        aclose = getattr(policy, "aclose", None)
        if aclose is not None:
            await aclose()


# ---------------------------------------------------------------- many episodes


async def run_many(
    env: Environment,
    pol: Policy,
    tasks: Sequence[str] | int | None,
    *,
    n: int = 1,
    concurrency: int = 16,
    sink: JsonlSink | str | Path | None = None,
    timeout: float | None = None,
    observers: Iterable[Any] | None = None,
    backend: str | Executor | None = None,
    workers: int | None = None,
    judging: Judging | GroupBarrier | None = None,
) -> list[Trajectory]:
    """Run `n` episodes per task, at most `concurrency` at once, writing each to `sink` as it finishes.

    An environment that does not claim `concurrent_sessions` runs one episode at a time (per worker
    process, with ``backend="process"``: each has its own instance). With ``n > 1`` the episodes of a
    task share a group id. If one episode raises (a user mistake), the others finish and are written
    before it is re-raised. `observers`, `backend` and `workers` are `run_jobs`'s.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        msg = f"n must be an integer of at least 1, got {n!r}."
        raise UsageError(msg)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        msg = f"concurrency must be an integer of at least 1, got {concurrency!r}."
        raise UsageError(msg)
    check_timeout(timeout)
    if isinstance(tasks, str):
        msg = f"tasks must be a list of task ids or a count, not the string {tasks!r}; write [{tasks!r}]."
        raise UsageError(msg)
    if isinstance(tasks, bool) or (isinstance(tasks, int) and tasks < 0):
        msg = f"tasks must be a task count of at least 0 or a list of task ids, got {tasks!r}."
        raise UsageError(msg)
    if tasks is not None and not isinstance(tasks, int) and not isinstance(tasks, Sequence | Iterable):
        msg = f"tasks must be a task count or a list of task ids, got {tasks!r}."
        raise UsageError(msg)
    ids = env.task_ids(limit=tasks) if tasks is None or isinstance(tasks, int) else list(tasks)
    for task in ids:
        check_task(task)
    jobs: list[Job] = []
    for task in ids:
        group_id = new_id() if n > 1 else None
        jobs.extend(Job(task, group_id, k) for k in range(n))
    return await run_jobs(
        env,
        pol,
        jobs,
        concurrency=concurrency,
        sink=sink,
        timeout=timeout,
        observers=observers,
        backend=backend,
        workers=workers,
        judging=judging,
    )


async def run_jobs(
    env: Environment,
    pol: Policy,
    jobs: Sequence[Job],
    *,
    concurrency: int = 16,
    sink: JsonlSink | str | Path | None = None,
    timeout: float | None = None,
    observers: Iterable[Any] | None = None,
    keep: bool = True,
    backend: str | Executor | None = None,
    workers: int | None = None,
    judging: Judging | GroupBarrier | None = None,
) -> list[Trajectory]:
    """Play exactly these episodes, at most `concurrency` at once, writing each to `sink` as it finishes.

    `run_many` is this with every sample of every task; a resumed run passes only the ones missing.
    `observers` get every episode's events (`nenyax.core.contract.events`); the sink is one of them,
    called first, so an observer's ``on_episode_ended`` (a progress display, a running tally) sees an
    episode once it is on disk. With ``keep=False`` nothing is kept and the list returned is empty:
    the sink and the observers are where the episodes went, and a long run's memory stays flat.
    `backend` picks where the episodes are played (`nenyax.core.engine.executors`: ``"asyncio"`` in
    this process, the default, or ``"process"`` on `workers` processes); the trajectories, the sink
    and the observers' episode events are the same whichever it is. `judging`'s judges judge each
    finished episode before it is written, in this process whatever the backend.
    """
    executor = executor_for(backend, workers=workers)
    if not env.manifest.capabilities.concurrent_sessions:
        concurrency = 1
    if isinstance(observers, str | bytes) or (observers is not None and not isinstance(observers, Iterable)):
        msg = f"observers must be a list of observers, not {observers!r}; write observers=[{observers!r}]."
        raise UsageError(msg)
    watching = list(observers or ())
    out_sink = open_sink(sink)
    if out_sink is not None and not any(o is out_sink for o in watching):
        watching.insert(0, out_sink)
    watchers = Observers(watching)  # once per run: each episode only looks its subscribers up
    results: list[Trajectory | None] = [None] * len(jobs) if keep else []

    # What the caller gets back; the sink and the observers have had each episode from the executor.
    def trajectory_finished(index: int, traj: Trajectory) -> None:
        if keep and traj.status is not Status.INTERRUPTED:
            results[index] = traj

    # Group judges see a group once all of it has finished: this run's groups, by id, and their sizes.
    sizes = Counter(job.group_id for job in jobs if job.group_id is not None)
    plan = Plan(
        env=env,
        policy=pol,
        jobs=jobs,
        concurrency=concurrency,
        timeout=timeout,
        observers=watchers,
        judging=judging.grouped(sizes) if judging is not None else None,
    )
    try:
        await executor.play(plan, trajectory_finished)
    finally:
        if out_sink is not None and not isinstance(sink, JsonlSink):
            out_sink.close()
    return [t for t in results if t is not None]


class AsyncioPool:
    """The default executor: every episode on this process's event loop, one recording proxy for the run."""

    name = "asyncio"

    def __init__(self, workers: int | None = None) -> None:
        """An in-process pool has no worker processes to size: `workers` must be None or 1."""
        if workers not in (None, 1):
            msg = f"backend='asyncio' plays in this process; workers={workers!r} needs backend='process'."
            raise UsageError(msg)

    async def play(self, plan: Plan, on_trajectory: TrajectoryFinished) -> None:
        """Play `plan` with `plan.concurrency` coroutines pulling from one iterator of jobs (see `Executor.play`)."""
        env, pol, timeout = plan.env, plan.policy, plan.timeout
        pending = iter(enumerate(plan.jobs))
        failed: list[BaseException] = []
        # A finished episode waiting for its group (a group judge's `GroupBarrier`) holds its worker: enough
        # workers that a group's episodes all start, and a gate so that no more than `concurrency` play at once.
        largest = getattr(plan.judging, "largest", 1)
        count = min(max(plan.concurrency, largest), len(plan.jobs))
        gate = asyncio.Semaphore(plan.concurrency) if count > plan.concurrency else None
        flush = getattr(plan.judging, "flush", None)
        proxy = None if env.manifest.mode is Mode.STEP else await RecordingProxy().start()

        # A fixed pool of workers pulling from one iterator: no semaphore with thousands of waiters
        # (whose bookkeeping is O(waiters) per acquire in asyncio), and memory bounded by `concurrency`.
        async def worker() -> None:
            for index, (task, group_id, sample) in pending:
                if failed:
                    return  # stop taking new episodes; the ones under way still finish and are written
                try:
                    traj = await run_episode(
                        env,
                        pol,
                        task=task,
                        group_id=group_id,
                        sample=sample,
                        timeout=timeout,
                        proxy=proxy,
                        observers=plan.observers,  # every event, the sink's episode-ended first
                        judging=plan.judging,
                        gate=gate,
                    )
                except BaseException as exc:  # noqa: BLE001 - Ctrl-C included: its interrupted episode was published as it ended
                    failed.append(exc)
                    if flush is not None and not isinstance(exc, asyncio.CancelledError):
                        await flush()  # the groups now never completing are judged as they stand
                    return
                on_trajectory(index, traj)
                if index % 64 == 63:
                    # An episode that never waits (a synchronous env and policy) never yields to the loop:
                    # yield now and then, so an interrupt or a cancellation lands mid-run, not at its end.
                    await asyncio.sleep(0)

        try:
            await asyncio.gather(*(worker() for _ in range(count)))
        finally:
            if proxy is not None:
                await proxy.close()
        if failed:
            raise failed[0]


def run_closing(work: Awaitable[T], *holders: Any) -> T:
    """Run `work` on a loop of its own (inside a running loop too), then let each of `holders` (a policy, the
    judges) release what it holds for that loop: what the synchronous `Environment.rollouts` does."""

    async def closing() -> T:
        try:
            return await work
        finally:
            for holder in holders:
                aclose = getattr(holder, "aclose", None)
                if aclose is not None:
                    await aclose()

    return run_sync(closing())


def group(trajectories: Sequence[Trajectory]) -> list[Group]:
    """One `Group` per group id (same task, same policy revision), in first-seen order.

    Trajectories without a group id (runs with ``n=1``) each form a group of one.
    """
    order: dict[str, list[Trajectory]] = {}
    for traj in trajectories:
        order.setdefault(traj.group_id or traj.id, []).append(traj)
    groups = []
    for group_id, members in order.items():
        policies = {m.policy for m in members}
        if len(policies) > 1 or len({m.task_id for m in members}) > 1:
            msg = f"Group {group_id} mixes tasks or policy revisions; a group compares one task under one policy."
            raise UsageError(msg)
        groups.append(
            Group(group_id=group_id, task_id=members[0].task_id, trajectories=tuple(members), policy=members[0].policy)
        )
    return groups
