"""Running the async protocol from synchronous code (``env.session()``, ``session.act()``).

An aiohttp pool belongs to the loop that made it, and ``asyncio.run`` would make (and end) a new loop
per call. So sync calls run on one private loop in a daemon thread, kept for the environment's life;
blocking on it works inside a running loop (Jupyter) as well.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Bridge:
    """A private event loop in a thread, started on first use."""

    def __init__(self) -> None:
        """Nothing runs until `run` is first called."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name="nenyax-nemo-gym", daemon=True)
                self._thread.start()
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the private loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._started()).result()

    def close(self, last: Coroutine[Any, Any, Any] | None = None) -> None:
        """Run `last` (cleanup on the loop, e.g. closing its pool), then stop the loop and thread."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None:
            if last is not None:
                last.close()
            return
        if last is not None:
            asyncio.run_coroutine_threadsafe(last, loop).result()
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join()
        loop.close()
