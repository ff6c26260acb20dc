"""Running a coroutine from synchronous code (inside a running loop too), and work on a thread of its own."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion and return its result.

    With no loop running this is `asyncio.run`. Inside a running loop (a Jupyter cell, an async
    framework) blocking that loop's thread would deadlock, so the coroutine runs on a fresh loop in
    a worker thread instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="nenyax-sync") as pool:
        return pool.submit(asyncio.run, coro).result()


def run_on_fresh_thread(work: Callable[[], T], name: str = "nenyax-work") -> T:
    """Run `work` on a new thread that ends with it; return its result or raise what it raised.

    For CPU-heavy torch work done between stretches on other threads: torch's CPU kernels run on an
    OpenMP team per calling thread, and GNU OpenMP stops spinning between parallel regions once it
    manages more threads than there are cores. A team left alive on one thread (the main thread after
    loading or training a model) made every later decode on another about twice as slow (11 against
    22 ms a token, SmolLM2 int4 on 2 cores); a thread that ends takes its team with it.
    """
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread below
            failure.append(exc)

    thread = threading.Thread(target=run, name=name)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]
