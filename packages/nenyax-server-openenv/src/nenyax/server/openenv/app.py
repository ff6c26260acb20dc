"""The aiohttp application, starting it on a port, and `serve`: the process behind ``nenyax serve``."""

from __future__ import annotations

import asyncio
import contextlib
import resource
import signal
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

from aiohttp import web

from nenyax.core import Environment, StepEnvironment, UsageError, load
from nenyax.server.openenv import openapi, routes, tasks, ws
from nenyax.server.openenv.loops import ServedLoop
from nenyax.server.openenv.served import ServedEnvironment
from nenyax.server.openenv.server import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_FRAME_BYTES,
    DEFAULT_MAX_SESSIONS,
    SERVER,
    Server,
)
from nenyax.server.openenv.wire import dumps

T = TypeVar("T")

SHUTDOWN_TIMEOUT_S = 5.0
"""How long requests still running at shutdown get to finish (sessions are closed first)."""


def build_app(server: Server) -> web.Application:
    """The application serving `server`'s environment on OpenEnv's routes."""
    app = web.Application(client_max_size=server.max_frame_bytes)
    app[SERVER] = server
    document = dumps(openapi.document(server.served))

    async def openapi_json(request: web.Request) -> web.Response:
        return web.Response(body=document, content_type="application/json")

    app.router.add_get("/ws", ws.handle)
    app.router.add_get("/openapi.json", openapi_json)
    routes.add_routes(app)
    tasks.add_routes(app)  # last: its /{env_name}/... patterns must not shadow the fixed paths

    async def on_startup(_app: web.Application) -> None:
        server.table.start()

    async def on_shutdown(_app: web.Application) -> None:
        await server.table.shutdown()

    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)
    return app


@contextlib.asynccontextmanager
async def running(
    env: Environment,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    reference: bool = False,
) -> AsyncIterator[tuple[Server, str]]:
    """Serve `env` on host:port (0 picks a free port) until the block ends; yields the server and its base URL.

    Leaving the block closes every session, then the environment's worker thread (not `env` itself).
    `reference` adds the oracle's action to each state (``reference``), for checking the server back with
    ``openenv:URL?reference=reference``; off by default, because every client can read the state.
    """
    served = await _served(env, reference)
    server = Server(served, max_sessions=max_sessions, idle_timeout=idle_timeout, max_frame_bytes=max_frame_bytes)
    runner = web.AppRunner(build_app(server), access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_S)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, backlog=4096)
        await site.start()
        bound = runner.addresses[0]
        yield server, f"http://{_host(host)}:{bound[1]}"
    finally:
        await runner.cleanup()
        if served._pool is not None:
            served._pool.shutdown(wait=True)


async def _served(env: Environment, reference: bool) -> ServedEnvironment | ServedLoop:
    """A step environment is served turn by turn; a rollout or task one loop-owning (`loops`)."""
    if isinstance(env, StepEnvironment):
        return await ServedEnvironment.create(env, reference=reference)
    if reference:
        msg = f"{env.uri} runs its own loop: there is no reference action per state to share."
        raise UsageError(msg)
    return ServedLoop(env)


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _raise_file_limit(sessions: int) -> None:
    # Each session is a socket: let the process hold them all (up to the hard limit).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = sessions + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(
                resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard)
            )


def serve(
    uri: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    say: Callable[[str], Any] = print,
    reference: bool = False,
) -> int:
    """Load `uri` and serve it until SIGTERM (exit 0) or SIGINT (exit 130), closing every session first.

    A URI that does not load, or names an environment that is not step mode, raises its `UsageError`.
    `reference` shares the oracle's action in each state (see `running`).
    """
    # Until the loop takes the signals over there is no session to close: a signal just ends the process
    # with the same exit code; after the loop, a repeated signal must not cut the environment's close short.
    previous = {s: signal.signal(s, _exit_now) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        env = load(uri)
        _raise_file_limit(max_sessions)
        try:
            limits = (max_sessions, idle_timeout, max_frame_bytes)
            return _run(_serve(env, host, port, *limits, say, reference=reference))
        finally:
            for signum in previous:
                signal.signal(signum, signal.SIG_IGN)
            env.close()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _exit_now(signum: int, _frame: Any) -> None:
    raise SystemExit(130 if signum == signal.SIGINT else 0)


def _run(main: Coroutine[Any, Any, T]) -> T:
    # uvloop (a dependency where it installs) halves the per-message cost of the WebSocket layer;
    # measured in bench/serve_openenv.py. Without it, the standard loop serves the same routes.
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    result: T = uvloop.run(main)  # uvloop is not installed in the lint session, so untyped there
    return result


async def _serve(
    env: Any,
    host: str,
    port: int,
    max_sessions: int,
    idle_timeout: float,
    max_frame_bytes: int,
    say: Callable[[str], Any],
    *,
    reference: bool = False,
) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal, signum)
    async with running(
        env,
        host,
        port,
        max_sessions=max_sessions,
        idle_timeout=idle_timeout,
        max_frame_bytes=max_frame_bytes,
        reference=reference,
    ) as (server, url):
        say(f"Serving {env.uri} as an OpenEnv server at {url} (WebSocket {url.replace('http', 'ws', 1)}/ws).")
        if server.served.reference:
            say("Each state holds the reference action (field `reference`): every client can read the answers.")
        sys.stdout.flush()
        await stop.wait()
        say("Shutting down: closing every session.")
    return 130 if received and received[0] == signal.SIGINT else 0
