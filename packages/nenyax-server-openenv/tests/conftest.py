"""Servers for the tests: the real `nenyax serve` application on 127.0.0.1 (port 0), in a thread of this process.

The server runs its own event loop in a background thread, so OpenEnv's clients (sync or async) talk
to it over real loopback sockets exactly as they would to a separate process; one test also starts
the real `nenyax serve` command as a subprocess.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from nenyax.core import load
from nenyax.server.openenv import running

# Deliberately broken gymnasium envs are loaded by import path (gymnasium:serve_test_envs:<Class>): this folder is
# on `pythonpath` (pyproject.toml).


class Served:
    """A running server: its base URL, and a way to look at its state from the test's thread."""

    def __init__(self, url: str, server: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.url = url
        self.ws_url = url.replace("http", "ws", 1) + "/ws"
        self.server = server
        self.loop = loop

    def on_loop(self, fn: Any) -> Any:
        """Run `fn()` (a coroutine function) on the server's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(fn(), self.loop).result(timeout=30)

    def sessions(self) -> int:
        """How many sessions the server holds now."""

        async def count() -> int:
            return len(self.server.table.slots)

        return self.on_loop(count)


@contextmanager
def serving(uri: Any, **config: Any) -> Iterator[Served]:
    """Serve `uri` (or an environment built by the test) in a background thread until the block ends.

    `config` goes to `running` (limits, ``reference``).
    """
    env = load(uri) if isinstance(uri, str) else uri
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        async with running(env, **config) as (server, url):
            box["stop"] = asyncio.Event()
            box["served"] = Served(url, server, asyncio.get_running_loop())
            ready.set()
            await box["stop"].wait()

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - surfaced in the test's thread below
            box["error"] = exc
            ready.set()

    thread = threading.Thread(target=run, name=f"serve {uri}", daemon=True)
    thread.start()
    assert ready.wait(60), "the server did not start"
    if "error" in box:
        raise box["error"]
    served = box["served"]
    try:
        yield served
    finally:
        served.loop.call_soon_threadsafe(box["stop"].set)
        thread.join(30)
        env.close()


@pytest.fixture(scope="module")
def arithmetic() -> Iterator[Served]:
    with serving("reasoning_gym:basic_arithmetic?size=20&seed=7") as served:
        yield served


@pytest.fixture(scope="module")
def cartpole() -> Iterator[Served]:
    with serving("gymnasium:CartPole-v1") as served:
        yield served


@pytest.fixture
def serve():
    """`serving` itself, for tests that need a server with their own limits."""
    return serving
