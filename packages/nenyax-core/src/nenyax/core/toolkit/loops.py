"""Running coroutines from synchronous code: once (`run_sync`), or for a session's lifetime (`LoopThread`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from nenyax.core.engine.sync import run_sync

__all__ = ["LoopThread", "run_sync"]

T = TypeVar("T")


class LoopThread:
    """A private event loop on a daemon thread, started on first use.

    For a synchronous session or environment whose connection (a WebSocket, an aiohttp pool) belongs to
    the loop that made it: every call runs on that one loop, and blocking on it works inside a running
    loop (Jupyter) as well.
    """

    def __init__(self, name: str = "nenyax-loop") -> None:
        """Nothing runs until `run` is first called; `name` names the thread (what a stack dump shows)."""
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name=self.name, daemon=True)
                self._thread.start()
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the private loop and wait for its result."""
        return self.submit(coro).result()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start `coro` on the private loop; its future, to wait on from any thread (or, wrapped with
        `asyncio.wrap_future`, from another loop)."""
        return asyncio.run_coroutine_threadsafe(coro, self._started())

    def close(self, last: Coroutine[Any, Any, Any] | None = None) -> None:
        """Run `last` on the loop (its cleanup, e.g. closing a pool), then stop the loop and its thread.

        The loop stops even when `last` raises (the error is raised after); safe to call twice.
        """
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None:
            if last is not None:
                last.close()  # never started: nothing to clean up, and no "never awaited" warning
            return
        try:
            if last is not None:
                asyncio.run_coroutine_threadsafe(last, loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(timeout=5)
            if not loop.is_running():
                loop.close()
