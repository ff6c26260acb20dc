"""Where every rollout goes: one episode in any mode, many episodes with bounded concurrency, groups.

The way down is one way: `Environment.rollout(s)` -> `resolve` (the policy, once per run) -> this
module -> the mode's loop (`step_loop` or `native_loop`) -> the session or the native loop. Nothing
here imports the environment classes: the mode in the manifest decides.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Group, Status, Trajectory, new_id
from nenyax.core.contract.uri import MAX_SEED
from nenyax.core.engine.executors import Executor, Job, Plan, TrajectoryFinished, executor_for
from nenyax.core.engine.native_loop import run_native_episode
from nenyax.core.engine.policies import NEVER_SUSPEND, CallablePolicy, Policy, as_policy
from nenyax.core.engine.sinks import JsonlSink, open_sink
from nenyax.core.engine.step_loop import run_step_episode, run_step_episode_now
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import UsageError
from nenyax.core.models.proxy import RecordingProxy

if TYPE_CHECKING:
    from nenyax.core.engine.environment import Environment

T = TypeVar("T")

resolve = as_policy
"""Turn what the user passed (a Policy, a built-in name, a callable) into a Policy, once per run."""


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
) -> Trajectory:
    """Play one episode of `env` with the resolved policy `pol`, in whatever mode `env` has."""
    check_seed(seed)
    check_task(task)
    check_timeout(timeout)
    if env.manifest.mode is Mode.STEP:
        return await run_step_episode(
            env,  # type: ignore[arg-type]
            pol,
            task=task,
            seed=seed,
            group_id=group_id,
            sample=sample,
            timeout=timeout,
        )
    return await run_native_episode(
        env,  # type: ignore[arg-type]
        pol,
        task=task,
        seed=seed,
        group_id=group_id,
        sample=sample,
        timeout=timeout,
        proxy=proxy,
    )


# ---------------------------------------------------------------- the synchronous path

# Policies whose act() never suspends: an episode of a synchronous session with one of these needs no
# event loop at all. Creating one per call (asyncio.run) cost more than a whole short episode.
_NEVER_SUSPEND = NEVER_SUSPEND


def _runs_without_a_loop(env: Environment, pol: Policy, timeout: float | None) -> bool:
    if timeout is not None or not getattr(env, "synchronous", False):
        return False
    return (isinstance(pol, CallablePolicy) and pol.sync_fn is not None) or type(pol) in _NEVER_SUSPEND


def rollout_sync(
    env: Environment, policy: Any, *, task: str | None, seed: int | None, timeout: float | None
) -> Trajectory:
    """`Environment.rollout`: without an event loop where the episode never waits on I/O."""
    pol = resolve(policy)
    if _runs_without_a_loop(env, pol, timeout):
        check_seed(seed)
        check_task(task)
        traj = run_step_episode_now(env, pol, task=task, seed=seed)  # type: ignore[arg-type]
        if traj is not None:
            return traj
    return run_sync(_closing(pol, run_episode(env, pol, task=task, seed=seed, timeout=timeout)))


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
    backend: str | Executor | None = None,
    workers: int | None = None,
) -> list[Trajectory]:
    """Run `n` episodes per task, at most `concurrency` at once, writing each to `sink` as it finishes.

    An environment that does not claim `concurrent_sessions` runs one episode at a time (per worker
    process, with ``backend="process"``: each has its own instance). With ``n > 1`` the episodes of a
    task share a group id. If one episode raises (a user mistake), the others finish and are written
    before it is re-raised. `backend` and `workers` are `run_jobs`'s.
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
        env, pol, jobs, concurrency=concurrency, sink=sink, timeout=timeout, backend=backend, workers=workers
    )


async def run_jobs(
    env: Environment,
    pol: Policy,
    jobs: Sequence[Job],
    *,
    concurrency: int = 16,
    sink: JsonlSink | str | Path | None = None,
    timeout: float | None = None,
    on_episode: Callable[[Trajectory], None] | None = None,
    keep: bool = True,
    backend: str | Executor | None = None,
    workers: int | None = None,
) -> list[Trajectory]:
    """Play exactly these episodes, at most `concurrency` at once, writing each to `sink` as it finishes.

    `run_many` is this with every sample of every task; a resumed run passes only the ones missing.
    `on_episode` is called with each finished trajectory once it is written (a progress display, a
    running tally); it runs on the event loop, so it must be quick. With ``keep=False`` nothing is
    kept and the list returned is empty: the sink and `on_episode` are where the episodes went, and
    a long run's memory stays flat. `backend` picks where the episodes are played
    (`nenyax.core.engine.executors`: ``"asyncio"`` in this process, the default, or ``"process"`` on
    `workers` processes); the trajectories, the sink and `on_episode` are the same whichever it is.
    """
    executor = executor_for(backend, workers=workers)
    if not env.manifest.capabilities.concurrent_sessions:
        concurrency = 1
    out_sink = open_sink(sink)
    results: list[Trajectory | None] = [None] * len(jobs) if keep else []

    # The one place every finished trajectory goes, whichever executor played it: the sink first, so
    # nothing the caller sees is not yet on disk.
    def trajectory_finished(index: int, traj: Trajectory) -> None:
        if out_sink is not None:
            out_sink.write(traj)
        if traj.status is Status.INTERRUPTED:
            return  # Ctrl-C: what the episode had played is kept on disk, marked interrupted; the run stops
        if keep:
            results[index] = traj
        if on_episode is not None:
            on_episode(traj)

    plan = Plan(env=env, policy=pol, jobs=jobs, concurrency=concurrency, timeout=timeout)
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
        proxy = None if env.manifest.mode is Mode.STEP else await RecordingProxy().start()

        # A fixed pool of workers pulling from one iterator: no semaphore with thousands of waiters
        # (whose bookkeeping is O(waiters) per acquire in asyncio), and memory bounded by `concurrency`.
        async def worker() -> None:
            for index, (task, group_id, sample) in pending:
                if failed:
                    return  # stop taking new episodes; the ones under way still finish and are written
                try:
                    traj = await run_episode(
                        env, pol, task=task, group_id=group_id, sample=sample, timeout=timeout, proxy=proxy
                    )
                except BaseException as exc:
                    interrupted = getattr(exc, "trajectory", None)
                    if isinstance(interrupted, Trajectory):
                        on_trajectory(index, interrupted)
                    failed.append(exc)
                    return
                on_trajectory(index, traj)
                if index % 64 == 63:
                    # An episode that never waits (a synchronous env and policy) never yields to the loop:
                    # yield now and then, so an interrupt or a cancellation lands mid-run, not at its end.
                    await asyncio.sleep(0)

        try:
            await asyncio.gather(*(worker() for _ in range(min(plan.concurrency, len(plan.jobs)))))
        finally:
            if proxy is not None:
                await proxy.close()
        if failed:
            raise failed[0]


def rollouts_sync(
    env: Environment,
    policy: Any,
    tasks: Sequence[str] | int | None,
    *,
    n: int,
    concurrency: int,
    sink: JsonlSink | str | Path | None,
    timeout: float | None,
    backend: str | Executor | None = None,
    workers: int | None = None,
) -> list[Trajectory]:
    """`Environment.rollouts`: one event loop for the whole run."""
    pol = resolve(policy)
    work = run_many(
        env, pol, tasks, n=n, concurrency=concurrency, sink=sink, timeout=timeout, backend=backend, workers=workers
    )
    return run_sync(_closing(pol, work))


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
