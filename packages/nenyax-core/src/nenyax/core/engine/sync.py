"""Running a coroutine from synchronous code, including inside a running loop (Jupyter)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
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
