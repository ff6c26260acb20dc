"""Running a coroutine from synchronous code, including inside a running loop (Jupyter)."""

from __future__ import annotations

import _thread
import asyncio
import concurrent.futures
import contextlib
import signal
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion and return its result.

    With no loop running this is `asyncio.run`, except that Ctrl-C never waits for a thread the run
    started (see `run_interruptibly`). Inside a running loop (a Jupyter cell, an async framework)
    blocking that loop's thread would deadlock, so the coroutine runs on a fresh loop in a worker
    thread instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_interruptibly(coro)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="nenyax-sync")
    try:
        return pool.submit(run_interruptibly, coro).result()
    finally:
        pool.shutdown(wait=False)  # an interrupted wait must not then wait for the thread


def run_interruptibly(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, but Ctrl-C is never held by a blocked thread or by code that blocks the loop.

    `asyncio.run` ends by joining every thread of the loop's default executor (`asyncio.to_thread`,
    `run_in_executor`, aiohttp's resolver): a call blocked in one (a socket that never answers, a
    subprocess still importing) held Ctrl-C for as long as it blocked, with the main thread idle in the
    loop's select. Interrupted, the run leaves those threads to end on their own. And its first Ctrl-C
    only cancels the main task, which code blocking the loop (a slow import) never sees: if the loop
    has not run `GRACE_S` after the signal, KeyboardInterrupt is raised in that code.
    """
    executor = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="nenyax-thread")
    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        loop.set_default_executor(executor)
        watch = _CtrlC(loop)
        try:
            with watch.installed():
                return runner.run(watch.main(coro))
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:
            executor.shutdown(wait=False, cancel_futures=True)
            # What the runner's close joins: a fresh executor, which has no thread to wait for.
            loop.set_default_executor(concurrent.futures.ThreadPoolExecutor())
            if isinstance(exc, asyncio.CancelledError) and watch.signalled:
                raise KeyboardInterrupt from None
            raise


GRACE_S = 1.0
"""Seconds the event loop may stay blocked after Ctrl-C before KeyboardInterrupt is raised where it blocks."""


class _CtrlC:
    """The SIGINT handler of one run: cancel the main task, and raise at once where the loop is blocked."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.task: asyncio.Task[Any] | None = None
        self.signalled = 0
        self.loop_ran = threading.Event()

    async def main(self, coro: Coroutine[Any, Any, T]) -> T:
        self.task = asyncio.current_task()
        return await coro

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        # As asyncio.Runner does: only on the main thread, and only where Ctrl-C raises (not ignored).
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            yield
            return
        signal.signal(signal.SIGINT, self._on_sigint)
        try:
            yield
        finally:
            if signal.getsignal(signal.SIGINT) == self._on_sigint:
                signal.signal(signal.SIGINT, signal.default_int_handler)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self.signalled += 1
        if self.signalled > 1 or self.task is None or self.task.done():
            raise KeyboardInterrupt
        self.task.cancel()
        self.loop_ran.clear()
        self.loop.call_soon_threadsafe(self.loop_ran.set)
        threading.Thread(target=self._escalate, name="nenyax-ctrl-c", daemon=True).start()

    def _escalate(self) -> None:
        main = threading.main_thread().ident
        if not self.loop_ran.wait(GRACE_S) and main is not None:
            # The loop is blocked: a real SIGINT (which wakes a blocking call, as `_thread.interrupt_main`
            # cannot) makes the second call above raise where it blocks.
            if hasattr(signal, "pthread_kill"):
                signal.pthread_kill(main, signal.SIGINT)
            else:  # Windows: a flag checked between bytecodes (a blocking call ends first)
                _thread.interrupt_main()
