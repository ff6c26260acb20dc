"""The ``process`` backend: episodes played by N worker processes on this machine (see `executors`).

Each worker is a fresh interpreter (the ``spawn`` start method: a process with threads and an event
loop is never forked). It rebuilds the environment from its `EnvironmentSpec` and the policy from its
`PolicyTicket` once, then plays the jobs this process deals it with the in-process asyncio pool's
episode function, and sends every finished trajectory back over its own pipe (one pipe per worker: a
worker that dies damages nothing the others use). Only this process calls `on_trajectory`, so only
this process writes the sink.

Jobs are dealt a few at a time (at most 2 x `Plan.concurrency` per worker, topped up when half are
played), so a fast worker is never idle while a slow one holds a backlog, and a worker that dies takes
at most that many episodes with it. Trajectories come back in small batches (when the worker's loop
idles, or every 16 or 20 ms), each handed over on its own.
Those are handed over as ``infra_error`` trajectories naming the worker's exit code (the episode
may be what killed it, so it is not replayed); the surviving workers play the rest, and if none
survives, `WorkerLostError` says how many episodes were not played.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import multiprocessing
import os
import pickle
import signal
import sys
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

import attrs

from nenyax.core.contract.failures import describe
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Trajectory
from nenyax.core.engine.executors import (
    Dealer,
    Job,
    Plan,
    TrajectoryFinished,
    default_workers,
    lost_trajectory,
    workers_lost,
)
from nenyax.core.engine.loader import EnvironmentSpec
from nenyax.core.engine.runner import run_episode
from nenyax.core.engine.travel import PolicyTicket, environment_spec, policy_ticket
from nenyax.core.errors import CannotTravelError, NenyaxError, WorkerLostError
from nenyax.core.models.proxy import RecordingProxy

STOP_GRACE_S = 10.0
"""Seconds Ctrl-C waits for the workers to hand over their interrupted episodes before killing them."""

_CONTEXT = multiprocessing.get_context("spawn")


class ProcessPool:
    """The ``process`` backend: `workers` processes of this machine (default: one per CPU)."""

    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        """Size the pool; nothing starts until `play`."""
        self.workers = workers or default_workers()

    async def play(self, plan: Plan, on_trajectory: TrajectoryFinished) -> None:
        """Play `plan` on the worker processes (see `Executor.play` for the contract)."""
        spec = environment_spec(plan.env)  # both refused here, before any process starts
        ticket = policy_ticket(plan.policy)
        if not plan.jobs:
            return
        run = _Run(plan, spec, ticket, on_trajectory, min(self.workers, len(plan.jobs)))
        await run.run()


@attrs.define(eq=False)
class _Worker:
    number: int
    process: Any
    conn: Connection
    in_flight: dict[int, tuple[Job, float]] = attrs.Factory(dict)
    """Jobs dealt to it and not yet handed back: index -> (job, when it was dealt)."""
    stop_sent: bool = False
    ended: bool = False
    ready: bool = False
    """It rebuilt the environment and the policy (a worker that exits before that played nothing)."""


class _Run(Dealer):
    """One `play`: the workers, the jobs left to deal, and what came back."""

    def __init__(
        self, plan: Plan, spec: EnvironmentSpec, ticket: PolicyTicket, on_trajectory: TrajectoryFinished, count: int
    ) -> None:
        super().__init__(plan, on_trajectory)
        self.spec, self.ticket = spec, ticket
        self.count = count
        # What a worker holds: what it plays at once, and as many ready to start, topped up once half is
        # played (one message per half window, not one per episode).
        self.window = 2 * plan.concurrency
        self.todo: collections.deque[tuple[int, Job]] = collections.deque(enumerate(plan.jobs))
        self.workers: list[_Worker] = []
        self.dead: list[tuple[int, int | None, int]] = []  # (worker, exit code, episodes lost)
        self.all_ended: asyncio.Future[None] | None = None

    # ------------------------------------------------------------ the parent's side

    async def play(self) -> None:
        loop = asyncio.get_running_loop()
        self.all_ended = loop.create_future()
        for number in range(self.count):
            self._start(loop, number)
        for worker in self.workers:
            self._deal(worker)
        await asyncio.shield(self.all_ended)

    def fail(self, exc: BaseException) -> None:
        super().fail(exc)
        self._stop_all()

    def _start(self, loop: asyncio.AbstractEventLoop, number: int) -> None:
        mine, theirs = _CONTEXT.Pipe(duplex=True)
        process = _CONTEXT.Process(
            target=_worker_main,
            args=(theirs, self.spec.to_data(), self.ticket, self.plan.concurrency, self.plan.timeout),
            name=f"nenyax-worker-{number}",
            daemon=True,  # never outlives this process, whatever ends it
        )
        with _main_without_a_file():
            process.start()
        theirs.close()  # the worker's end lives in the worker only, so its exit reads as EOF here
        worker = _Worker(number=number, process=process, conn=mine)
        self.workers.append(worker)
        loop.add_reader(mine.fileno(), self._readable, worker)

    def _deal(self, worker: _Worker) -> None:
        """Top `worker` up to its window; tell it to stop once nothing is left for it."""
        if worker.ended or worker.stop_sent:
            return
        if len(worker.in_flight) > self.window // 2:
            return
        batch = []
        now = time.time()
        while self.todo and not self.failed and not self.interrupting and len(worker.in_flight) < self.window:
            index, job = self.todo.popleft()
            worker.in_flight[index] = (job, now)
            batch.append((index, job))
        if batch:
            self._send(worker, ("jobs", batch))
        elif not worker.in_flight and (not self.todo or self.failed):
            worker.stop_sent = True
            self._send(worker, ("stop",))

    def _send(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        with contextlib.suppress(OSError):  # it died meanwhile: its EOF is on the way, and says so
            worker.conn.send(message)

    def _readable(self, worker: _Worker) -> None:
        """Everything the worker's pipe holds now (called by the event loop)."""
        try:
            while not worker.ended and worker.conn.poll():
                try:
                    message = worker.conn.recv()
                except (EOFError, OSError):
                    self._ended(worker)
                    return
                self._handle(worker, message)
            if not worker.ended:
                self._deal(worker)
        except BaseException as exc:  # noqa: BLE001 - whatever fails here stops the run, as in-process
            self.fail(exc)

    def _handle(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "batch":
            for each in message[1]:
                self._handle(worker, each)
        elif kind in ("done", "interrupted"):
            _, index, trajectory = message
            worker.in_flight.pop(index, None)
            self.hand_over(index, trajectory)
        elif kind == "raised":  # a user mistake inside an episode: no new episodes, then re-raised
            _, index, exc = message
            worker.in_flight.pop(index, None)
            self.fail(exc)
        elif kind == "dropped":  # dealt but never started, after a stop: played by nobody, raised below
            for index in message[1]:
                job, _ = worker.in_flight.pop(index)
                self.todo.append((index, job))
        elif kind == "ready":
            worker.ready = True
        elif kind == "broken":  # could not rebuild the environment or the policy: nothing can run
            self.fail(message[1])

    def _ended(self, worker: _Worker) -> None:
        """The worker's pipe closed: it exited, by itself or not."""
        loop = asyncio.get_running_loop()
        loop.remove_reader(worker.conn.fileno())
        worker.ended = True
        worker.process.join(timeout=5)
        code = worker.process.exitcode
        if not worker.ready and not self.interrupting and not self.failed:
            self._never_started(worker, code)
        elif worker.in_flight and not self.interrupting and not self.failed:
            # It died with episodes under way: each is recorded as lost to the infrastructure, never dropped.
            lost = sorted(worker.in_flight.items())
            worker.in_flight.clear()
            self.dead.append((worker.number, code, len(lost)))
            for index, (job, dealt) in lost:
                self.hand_over(index, self._lost(job, dealt, code))
            for other in self.workers:
                self._deal(other)  # what it would have played goes to the others
        if all(w.ended for w in self.workers) and self.all_ended is not None and not self.all_ended.done():
            self.all_ended.set_result(None)

    def _never_started(self, worker: _Worker, code: int | None) -> None:
        """`worker` exited before it could play: what it was dealt goes to the others, or the run stops."""
        for index, (job, _) in sorted(worker.in_flight.items(), reverse=True):
            self.todo.appendleft((index, job))
        worker.in_flight.clear()
        if any(w.ready or not w.ended for w in self.workers):
            for other in self.workers:
                self._deal(other)
            return
        msg = (
            f"The worker processes exited (code {code}) before they could play any episode, so nothing was played; "
            "their error is above on stderr (a script that starts them must run its code under "
            '`if __name__ == "__main__":`, since each worker imports the script again).'
        )
        self.fail(NenyaxError(msg))

    def _lost(self, job: Job, dealt: float, code: int | None) -> Trajectory:
        how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
        error = f"The worker process playing this episode {how} before the episode ended; it was not replayed."
        return lost_trajectory(self.plan, job, started=dealt, error=error)

    def _stop_all(self) -> None:
        for worker in self.workers:
            if not worker.ended and not worker.stop_sent:
                worker.stop_sent = True
                self._send(worker, ("stop",))

    async def interrupt(self) -> None:
        """Ctrl-C: every worker cancels its episodes and hands them over, or is killed after a grace period."""
        for worker in self.workers:
            if not worker.ended:
                self._send(worker, ("interrupt",))
        if self.all_ended is not None:
            await asyncio.wait({self.all_ended}, timeout=STOP_GRACE_S)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        for worker in self.workers:
            if not worker.ended:
                with contextlib.suppress(Exception):
                    loop.remove_reader(worker.conn.fileno())
            worker.conn.close()
        for worker in self.workers:
            process = worker.process
            process.join(timeout=0 if self.interrupting else 5)
            if process.is_alive():
                process.terminate()
                process.join(timeout=2)
            if process.is_alive():
                process.kill()
                process.join()

    def unplayed(self) -> int:
        return len(self.todo) + sum(len(w.in_flight) for w in self.workers)

    def lost(self) -> WorkerLostError:
        unplayed = self.unplayed()
        died = len(self.dead)
        codes = ", ".join(str(code) for _, code, _ in self.dead) or "unknown"
        lost = sum(n for _, _, n in self.dead)
        detail = f"(exit code {codes}; the {lost} episode(s) under way there are recorded as infra_error)"
        return workers_lost("worker process", died, detail, unplayed)


@contextlib.contextmanager
def _main_without_a_file() -> Iterator[None]:
    """Start a worker without re-running a ``__main__`` that names no file (``python -``: ``<stdin>``).

    A spawned process re-runs the parent's ``__main__`` from its ``__file__``; read from stdin that is
    ``<stdin>``, which the worker cannot open, so it died before playing anything. Nothing a worker
    rebuilds needs that module (a function of ``__main__`` travels by value).
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not isinstance(path, str) or os.path.exists(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


# ---------------------------------------------------------------- the worker's side


def _worker_main(
    conn: Connection, spec_data: dict[str, Any], ticket: PolicyTicket, concurrency: int, timeout: float | None
) -> None:
    """A worker process: rebuild, then play what the parent deals until it says stop."""
    # Ctrl-C reaches the whole process group; the parent decides what stops and tells this worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        env = EnvironmentSpec.from_data(spec_data).load()
        policy = ticket.build()
    except BaseException as exc:  # noqa: BLE001 - said once in the parent, as the run's error
        conn.send(("broken", _portable(exc, rebuilding=True)))
        conn.close()
        return
    conn.send(("ready",))
    try:
        asyncio.run(_serve(conn, env, policy, concurrency, timeout))
    finally:
        env.close()
        conn.close()


async def _serve(conn: Connection, env: Any, policy: Any, concurrency: int, timeout: float | None) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[int, Job] | None] = asyncio.Queue()
    players: list[asyncio.Task[None]] = []
    # What goes back is batched: sent when the loop next idles, or at 16 messages or 20 ms, whichever
    # comes first (one-step episodes finish back to back without the loop idling in between).
    outbox: list[tuple[Any, ...]] = []
    opened_at = 0.0

    def flush() -> None:
        if outbox:
            conn.send(("batch", outbox[:]))
            outbox.clear()

    def post(message: tuple[Any, ...]) -> None:
        nonlocal opened_at
        if not outbox:
            opened_at = time.monotonic()
            loop.call_soon(flush)
        outbox.append(message)
        if len(outbox) >= 16 or time.monotonic() - opened_at > 0.02:
            flush()

    def drop_queued() -> None:
        dropped = []
        while not queue.empty():
            item = queue.get_nowait()
            if item is not None:
                dropped.append(item[0])
        if dropped:
            post(("dropped", dropped))

    stopped = False

    def stop() -> None:
        """Finish what is under way, start nothing new."""
        nonlocal stopped
        stopped = True
        drop_queued()
        for _ in players:
            queue.put_nowait(None)

    def readable() -> None:
        try:
            while conn.poll():
                message = conn.recv()
                if message[0] == "jobs" and stopped:  # dealt before the parent heard this worker stop
                    post(("dropped", [index for index, _ in message[1]]))
                elif message[0] == "jobs":
                    for item in message[1]:
                        queue.put_nowait(item)
                elif message[0] == "stop":
                    stop()
                elif message[0] == "interrupt":  # cancel what is under way: each hands back what it played
                    drop_queued()
                    for player in players:
                        player.cancel()
        except (EOFError, OSError):  # the parent is gone: nobody will read what this worker plays
            loop.remove_reader(conn.fileno())
            for player in players:
                player.cancel()

    proxy = None if env.manifest.mode is Mode.STEP else await RecordingProxy().start()

    async def play() -> None:
        while (item := await queue.get()) is not None:
            index, (task, group_id, sample) = item
            try:
                trajectory = await run_episode(
                    env, policy, task=task, group_id=group_id, sample=sample, timeout=timeout, proxy=proxy
                )
            except BaseException as exc:  # noqa: BLE001 - whatever an episode raises (Ctrl-C included) goes to the parent
                interrupted = getattr(exc, "trajectory", None)
                if isinstance(interrupted, Trajectory):
                    post(("interrupted", index, interrupted))
                if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
                    return
                post(("raised", index, _portable(exc)))
                stop()  # as in this process: after a user mistake, no new episode starts
                continue
            post(("done", index, trajectory))

    players.extend(asyncio.ensure_future(play()) for _ in range(concurrency))
    loop.add_reader(conn.fileno(), readable)
    try:
        await asyncio.gather(*players, return_exceptions=True)
    finally:
        with contextlib.suppress(OSError):  # the parent is gone
            flush()
        with contextlib.suppress(Exception):
            loop.remove_reader(conn.fileno())
        if proxy is not None:
            await proxy.close()


def _portable(exc: BaseException, *, rebuilding: bool = False) -> BaseException:
    """`exc` if it pickles (the parent re-raises it as it was), else the same sentence in a NenyaxError."""
    if rebuilding and not isinstance(exc, NenyaxError):
        return CannotTravelError(f"A worker process could not rebuild the environment or the policy: {describe(exc)}.")
    try:
        pickle.loads(pickle.dumps(exc))
    except (
        pickle.PicklingError,
        TypeError,
        AttributeError,
        ValueError,
    ):  # its arguments do not travel: keep its sentence
        return NenyaxError(describe(exc))
    return exc
