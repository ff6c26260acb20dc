"""Running a coroutine from synchronous code, including inside a running loop (Jupyter)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
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
    """`asyncio.run(coro)`, but an interrupted run does not wait for the threads of its default executor.

    `asyncio.run` ends by joining every thread of the loop's default executor (`asyncio.to_thread`,
    `run_in_executor`, aiohttp's resolver): a call blocked in one (a socket that never answers, a
    subprocess still importing) held Ctrl-C for as long as it blocked, with the main thread idle in the
    loop's select. Interrupted, the run leaves those threads to end on their own.
    """
    executor = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="nenyax-thread")
    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        loop.set_default_executor(executor)
        try:
            return runner.run(coro)
        except (KeyboardInterrupt, asyncio.CancelledError):
            executor.shutdown(wait=False, cancel_futures=True)
            # What the runner's close joins: a fresh executor, which has no thread to wait for.
            loop.set_default_executor(concurrent.futures.ThreadPoolExecutor())
            raise
