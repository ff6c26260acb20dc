"""The ``ray`` backend: episodes played by Ray actors, on this machine or a cluster (see core's `executors`).

`RayExecutor.play` connects to Ray (no address: a local instance sized to `workers`, shut down at the
end; ``auto``, ``host:port`` or ``ray://host:port``: an existing cluster; a Ray this process already
initialised: that one, left as it is), starts `workers` actors (`nenyax.ray.worker.Player`, one CPU
each, spread over the nodes), and has each rebuild the environment from its `EnvironmentSpec` and the
policy from its `PolicyTicket` once. Episodes are dealt a few at a time, up to `Plan.concurrency`
under way per actor, topped up once a quarter of them are played; each deal is one actor call, a Ray
streaming generator (`Player.play_many`) that yields the trajectories in batches as they finish. The
driver reads each stream on its own event loop and hands every trajectory over
(`publish_played_elsewhere`, then `on_trajectory`) the moment its batch arrives. Only the driver writes
the sink. (One call per episode cost the driver 0.8-1.6 ms of CPU an episode, against 0.04-0.09 for
the process pool.)

Each job is under way on at most one actor at a time, and a trajectory is handed over only from the
stream the driver is reading, so none is handed over twice. A stream that fails with a Ray error lost
its actor (a killed process, a lost node): the episodes it had not yet yielded are played again on
another actor, once (`MAX_ATTEMPTS`); lost twice, one is handed over as an ``infra_error`` trajectory saying so. A dead
actor is replaced (at most `workers` times in a run), so a run loses capacity only when replacements
die too; if none is left, `WorkerLostError` says how many episodes were not played.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib.util
import logging
import os
import time
from typing import TYPE_CHECKING, Any

import attrs

from nenyax.core import Trajectory
from nenyax.core.errors import NenyaxError, UsageError, WorkerLostError
from nenyax.core.toolkit.dealer import (
    CallablePolicy,
    Dealer,
    Job,
    Plan,
    PolicyTicket,
    TrajectoryFinished,
    default_workers,
    environment_spec,
    lost_trajectory,
    policy_ticket,
    workers_lost,
)
from nenyax.core.toolkit.failures import describe
from nenyax.ray.worker import Player

if TYPE_CHECKING:
    from nenyax.core import Policy

MAX_ATTEMPTS = 2
"""How many times an episode is started before a lost one is recorded as ``infra_error`` (one replay)."""

STOP_GRACE_S = 10.0
"""Seconds Ctrl-C waits for the actors to hand back their interrupted episodes before killing them."""

CLOSE_GRACE_S = 5.0
"""Seconds the actors get to close their environments at the end before they are killed."""


class RayExecutor:
    """The ``ray`` backend: `workers` Ray actors (default: one per CPU of the instance or cluster)."""

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        """Size the run and say where Ray is; nothing connects until `play`."""
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            msg = f"workers must be an integer of at least 1, got {workers!r}."
            raise UsageError(msg)
        if address is not None and (not isinstance(address, str) or not address.strip()):
            msg = f"address must be 'auto', 'host:port' or 'ray://host:port', got {address!r}."
            raise UsageError(msg)
        self.workers = workers
        self.address = address

    async def play(self, plan: Plan, on_trajectory: TrajectoryFinished) -> None:
        """Play `plan` on Ray actors (see `Executor.play` for the contract)."""
        spec = environment_spec(plan.env)  # both refused here, before Ray starts
        ticket = policy_ticket(plan.policy)
        if not plan.jobs:
            return
        started_here = _connect(self.address, self.workers)
        try:
            count = self.workers or _cluster_cpus()
            run = _Run(plan, spec.to_data(), ticket, _by_value(plan.policy, ticket), on_trajectory)
            run.target = run.replacements = min(count, len(plan.jobs))  # a dead actor is replaced as many times
            await run.run()
        finally:
            if started_here:
                import ray

                ray.shutdown()


def _connect(address: str | None, workers: int | None) -> bool:
    """Make sure this process is connected to Ray; True if it started the instance (and so shuts it down)."""
    import ray

    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    if address is None:
        try:
            # "local": a new instance, even where `ray start` left a cluster that None would connect to.
            ray.init(address="local", num_cpus=workers or default_workers(), include_dashboard=False, **quiet)
        except Exception as exc:  # whatever stops Ray from starting is said in one sentence
            msg = f"A local Ray instance could not start: {describe(exc).rstrip('.')}."
            raise NenyaxError(msg) from exc
        return True
    if address.startswith("ray://") and importlib.util.find_spec("grpc") is None:
        msg = f"The address {address} needs Ray Client; pip install 'nenyax-ray[client]'."
        raise UsageError(msg)
    try:
        ray.init(address=address, **quiet)
    except Exception as exc:  # an unreachable or refusing cluster is said in one sentence
        msg = f"Could not connect to the Ray cluster at {address}: {describe(exc).rstrip('.')}."
        raise NenyaxError(msg) from exc
    return True


def _cluster_cpus() -> int:
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _by_value(policy: Policy, ticket: PolicyTicket) -> bytes | None:
    """A function of the driver's script, pickled by value: a worker cannot import ``__main__`` by name."""
    if ticket.kind != "function" or not ticket.name.startswith("__main__:"):
        return None
    import ray

    fn = policy.fn if isinstance(policy, CallablePolicy) else policy
    return bytes(ray.cloudpickle.dumps(fn))


_PLAYER: Any = None


def _player_class() -> Any:
    """`Player` as a Ray actor class (made once per process: Ray exports each class it is given)."""
    global _PLAYER
    if _PLAYER is None:
        import ray

        _PLAYER = ray.remote(Player)
    return _PLAYER


@attrs.define(eq=False)
class _Actor:
    number: int
    handle: Any
    ready: bool = False
    dead: bool = False
    pid: int | None = None
    host: str = ""
    in_flight: int = 0


@attrs.define(eq=False)
class _Call:
    actor: _Actor | None
    """The actor the call went to (None: a job that never reached one again)."""
    index: int | None = None
    """The job's position in the plan; None for the actor's `load` call."""
    job: Job | None = None
    attempt: int = 1
    dealt: float = 0.0


@attrs.define(eq=False)
class _Stream:
    """One `Player.play_many` call: its generator and the episodes it has not yielded yet."""

    actor: _Actor
    generator: Any
    open: dict[int, _Call]
    """Plan index -> the episode's call, until the stream yields its reply."""


_END = object()
"""What `_next_batch` returns when a stream has yielded everything."""


async def _next_batch(generator: Any) -> Any:
    """The stream's next batch of replies, or `_END`."""
    try:
        ref = await generator.__anext__()
    except StopAsyncIteration:
        return _END
    return await asyncio.wrap_future(ref.future())


class _Run(Dealer):
    """One `play`: the actors, the jobs left to deal, and the calls the driver is waiting on."""

    def __init__(
        self,
        plan: Plan,
        spec_data: dict[str, Any],
        ticket: PolicyTicket,
        function: bytes | None,
        on_trajectory: TrajectoryFinished,
    ) -> None:
        import ray

        super().__init__(plan, on_trajectory)
        self.ray = ray
        # One CPU each, spread over the nodes; Ray never restarts or retries them: a lost call is this
        # run's to replay, so that no episode is ever played (and handed over) twice behind its back.
        self.player = _player_class().options(
            num_cpus=1,
            max_restarts=0,
            max_task_retries=0,
            max_concurrency=plan.concurrency + 2,  # room for `interrupt` and `close` beside the episodes
            scheduling_strategy="SPREAD",
        )
        self.args = (spec_data, ticket, function, plan.timeout)
        # (index, job, attempt): a job lost with its actor goes back to the front, one attempt more.
        self.todo: collections.deque[tuple[int, Job, int]] = collections.deque(
            (index, job, 1) for index, job in enumerate(plan.jobs)
        )
        self.actors: list[_Actor] = []
        self.pending: dict[asyncio.Future[Any], _Call | _Stream] = {}
        self.died = 0
        self.replays = 0
        self.gave_up = 0
        self.target = 0
        """How many actors the run keeps playing."""
        self.replacements = 0
        """How many dead actors may still be replaced."""

    async def play(self) -> None:
        for _ in range(self.target):
            self._start()
        while True:
            self._deal()
            if not self.pending:
                break
            done, _ = await asyncio.wait(self.pending, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                self._handle(future)

    def settle(self) -> None:
        self._give_up_on_replays()  # what is left had no actor to play on (or the run stopped)

    def unplayed(self) -> int:
        return len(self.todo)

    def _start(self) -> None:
        actor = _Actor(number=len(self.actors), handle=self.player.remote(*self.args))
        self.actors.append(actor)
        self._await(actor.handle.load.remote(), _Call(actor=actor))

    def _await(self, ref: Any, call: _Call) -> None:
        self.pending[asyncio.wrap_future(ref.future())] = call

    def _read(self, stream: _Stream) -> None:
        self.pending[asyncio.ensure_future(_next_batch(stream.generator))] = stream

    def _deal(self) -> None:
        """Top up each ready actor to `Plan.concurrency` episodes under way, in one call per actor.

        An actor is topped up once a quarter of its episodes are played (or it has none), with its
        share of what is left, so a few episodes are still spread over every actor.
        """
        if self.failed or self.interrupting:
            return
        ready = [a for a in self.actors if a.ready and not a.dead]
        least = max(1, self.plan.concurrency // 4)
        share = -(-len(self.todo) // max(1, len(ready)))  # ceiling division
        for actor in ready:
            count = min(self.plan.concurrency - actor.in_flight, share, len(self.todo))
            if count < 1 or (count < least and actor.in_flight and count < len(self.todo)):
                continue
            dealt = time.time()
            calls = {}
            for _ in range(count):
                index, job, attempt = self.todo.popleft()
                calls[index] = _Call(actor=actor, index=index, job=job, attempt=attempt, dealt=dealt)
            actor.in_flight += count
            jobs = [(index, call.job) for index, call in calls.items()]
            generator = actor.handle.play_many.options(num_returns="streaming").remote(jobs)
            self._read(_Stream(actor=actor, generator=generator, open=calls))

    def _handle(self, future: asyncio.Future[Any]) -> None:
        waited = self.pending.pop(future)
        if isinstance(waited, _Stream):
            self._handle_batch(waited, future)
            return
        actor = waited.actor
        assert actor is not None  # every call waited on went to an actor
        try:
            reply = future.result()
        except self.ray.exceptions.RayError as exc:  # it could not even start, or died starting
            if isinstance(exc, self.ray.exceptions.RayTaskError):
                self.fail(NenyaxError(f"A Ray worker could not start: {_first_line(exc)}."))
                return
            self._actor_died(actor)
            self._replace()
            return
        if reply[0] == "broken":  # it could not rebuild the environment or the policy: nothing can run
            self.fail(reply[1])
        else:
            actor.ready, actor.pid, actor.host = True, reply[1], reply[2]

    def _handle_batch(self, stream: _Stream, future: asyncio.Future[Any]) -> None:
        actor = stream.actor
        try:
            batch = future.result()
        except self.ray.exceptions.RayTaskError as exc:  # the actor's own method failed: no replay would help
            for index, call in self._close_stream(stream):
                self.hand_over(index, self._lost(call, f"failed its Ray call ({_first_line(exc)})"))
            return
        except self.ray.exceptions.RayError as exc:  # the actor, its process or its node is gone
            self._actor_died(actor)
            for _, call in self._close_stream(stream):
                self._lost_call(call, exc)
            self._replace()
            return
        if batch is _END:
            self._close_stream(stream)  # empty by now: every episode it was sent has been yielded
            return
        for index, (kind, value) in batch:
            stream.open.pop(index)
            actor.in_flight -= 1
            if kind in ("done", "interrupted"):
                self.hand_over(index, value)
            elif kind == "raised":  # a user mistake inside an episode: no new episodes, then re-raised
                self.fail(value)
            # "cancelled": stopped before it recorded anything (Ctrl-C); there is nothing to hand over
        self._read(stream)

    def _close_stream(self, stream: _Stream) -> list[tuple[int, _Call]]:
        """The episodes `stream` will never yield (the actor's capacity freed of them)."""
        left = list(stream.open.items())
        stream.actor.in_flight -= len(left)
        stream.open.clear()
        return left

    def _actor_died(self, actor: _Actor) -> None:
        if actor.dead:
            return
        actor.dead = True
        self.died += 1
        with contextlib.suppress(Exception):  # unreachable rather than gone: make sure it plays nothing more
            self.ray.kill(actor.handle, no_restart=True)

    def _replace(self) -> None:
        """Start an actor in place of a dead one, while there is work for it and replacements are left."""
        if self.failed or self.interrupting or not self.todo or self.replacements < 1:
            return
        if sum(not a.dead for a in self.actors) < self.target:
            self.replacements -= 1
            self._start()

    def _lost_call(self, call: _Call, exc: BaseException) -> None:
        """An episode whose actor was lost: played again elsewhere, or recorded as lost to the infrastructure."""
        assert call.index is not None
        assert call.job is not None
        if self.interrupting:
            return  # Ctrl-C: what that actor had under way cannot be had any more
        if call.attempt < MAX_ATTEMPTS and not self.failed:
            self.replays += 1
            self.todo.appendleft((call.index, call.job, call.attempt + 1))
            return
        self.gave_up += 1
        why = "twice (it was replayed once, on another worker)" if call.attempt > 1 else "while the run was stopping"
        self.hand_over(call.index, self._lost(call, f"died before the episode ended, {why}: {_died(exc)}"))

    def _give_up_on_replays(self) -> None:
        """The episodes waiting for a replay that no actor will play: lost, never dropped."""
        if self.interrupting:
            return
        kept: collections.deque[tuple[int, Job, int]] = collections.deque()
        for index, job, attempt in self.todo:
            if attempt > 1:
                self.gave_up += 1
                call = _Call(actor=None, index=index, job=job, attempt=attempt)
                self.hand_over(index, self._lost(call, "died before the episode ended, and no worker was left"))
            else:
                kept.append((index, job, attempt))
        self.todo = kept

    def _lost(self, call: _Call, what: str) -> Trajectory:
        assert call.job is not None
        actor = call.actor
        where = f" (pid {actor.pid} on {actor.host})" if actor is not None and actor.pid is not None else ""
        error = f"The Ray worker playing this episode{where} {what}; it was not replayed again."
        return lost_trajectory(self.plan, call.job, started=call.dealt or time.time(), error=error)

    async def interrupt(self) -> None:
        """Ctrl-C: every actor cancels its episodes and hands them back, or is killed after a grace period."""
        for actor in self.actors:
            if actor.ready and not actor.dead:
                actor.handle.interrupt.remote()
        deadline = time.monotonic() + STOP_GRACE_S
        while (plays := [f for f, waited in self.pending.items() if isinstance(waited, _Stream)]) and (
            left := deadline - time.monotonic()
        ) > 0:
            done, _ = await asyncio.wait(plays, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                self._handle(future)  # a batch read re-arms its stream, until it ends

    async def close(self) -> None:
        """Every actor closes its environment (its sandboxes, its servers) for a few seconds, then all are killed."""
        live = [a for a in self.actors if a.ready and not a.dead]
        if live:
            closing = [asyncio.wrap_future(a.handle.close.remote().future()) for a in live]
            with contextlib.suppress(Exception):
                await asyncio.wait(closing, timeout=CLOSE_GRACE_S)
        for actor in self.actors:
            if not actor.dead:
                with contextlib.suppress(Exception):
                    self.ray.kill(actor.handle, no_restart=True)
        for future in self.pending:
            future.cancel()
        self.pending.clear()

    def lost(self) -> WorkerLostError:
        detail = f"({self.replays} episode(s) replayed elsewhere, {self.gave_up} recorded as infra_error)"
        return workers_lost("Ray worker", self.died, detail, len(self.todo))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _died(exc: BaseException) -> str:
    """Why Ray says the actor is gone, in a few words (its message is a page)."""
    text = str(exc)
    for marker in ("Worker exit detail: ", "The actor is dead because "):
        if marker in text:
            return text.split(marker, 1)[1].split(". ")[0].strip().rstrip(".")
    return type(exc).__name__
