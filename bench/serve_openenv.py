"""`nenyax serve` against OpenEnv 0.10's own `create_app` server, and a bare aiohttp WebSocket server.

Part 1, throughput: the same trivial counter environment (100 steps an episode) served three ways,
driven over /ws by the same aiohttp client (several client processes, so the client is not the
limit), at `--sessions` concurrent sessions. Prints steps/s, step latency p50/p99 and the server's
CPU per step (from /proc), median of `--repeats` runs, and the ratios against the goals:
nenyax / OpenEnv steps/s (goal >= 5) and nenyax / bare-aiohttp server CPU per step (goal <= 2).
OpenEnv runs the environment written both ways: a plain `step` (the common case, run in a thread per
session) and `step_async` (its fastest case).

Part 2, sessions held at once (the measure of OpenEnv's scaling tutorial): for each batch size, that
many clients connect at once, reset, take one step that waits `--wait` seconds inside the
environment, and close. Prints success %, p50/p99 request latency and requests/s, for nenyax and
OpenEnv (step_async env) side by side. Everything runs on 127.0.0.1 and is bounded by the grid.

Run: `python bench/serve_openenv.py [--sessions 64 --seconds 5 --repeats 3 --grid 32,128,512,2048,4096,8192]`
with nenyax-core, nenyax-server-openenv and openenv==0.10.* installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import orjson
from _report import figure

LENGTH = 100
"""Steps per episode of the counter environment."""
HERE = os.path.abspath(__file__)


def run(coro: Any) -> Any:
    """Run `coro` on uvloop when it is installed (uvicorn, under OpenEnv, picks it up by itself too)."""
    if os.environ.get("BENCH_LOOP") != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run(coro)
    return asyncio.run(coro)


def _raise_fd_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# ----------------------------------------------------------------- the environment, in both SDKs


def nenyax_counter(wait: float) -> Any:
    """The counter as a Nenyax step environment (an async step when `wait` > 0)."""
    from nenyax.core import Capabilities, Judgment, Manifest, Mode, Session, Step, StepEnvironment

    class CounterSession(Session):
        task_id = "count/0"
        seed = 0

        def __init__(self) -> None:
            self.count = 0

        @property
        def observation(self) -> int:
            return self.count

        @property
        def done(self) -> bool:
            return self.count >= LENGTH

        def act(self, action: Any) -> Step:
            self.count += 1
            return Step(observation=self.count - 1, action=action, reward=1.0, terminated=self.count >= LENGTH)

        def judge(self, steps: Sequence[Step]) -> Judgment:
            return Judgment(score=float(len(steps)), judge="counter")

    class WaitingSession(CounterSession):
        async def aact(self, action: Any) -> Step:
            await asyncio.sleep(wait)
            return self.act(action)

    class Counter(StepEnvironment):
        def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
            return ["count/0"]

        def session(self, task: str | None = None, seed: int | None = None) -> Session:
            return WaitingSession() if wait > 0 else CounterSession()

    manifest = Manifest(
        uri="counter:count",
        format="counter",
        format_version="1",
        mode=Mode.STEP,
        name="counter",
        capabilities=Capabilities(multi_turn=True, max_turns=LENGTH),
    )
    return Counter(manifest)


def openenv_app(wait: float, use_async: bool, max_sessions: int) -> Any:
    """The counter as an OpenEnv environment, served by OpenEnv's own `create_app`."""
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State

    class CounterAction(Action):
        action: int

    class CounterObservation(Observation):
        count: int = 0

    class Counter(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._state = State()

        def reset(self, seed: Any = None, episode_id: Any = None, **kwargs: Any) -> CounterObservation:
            self._state = State(episode_id=episode_id, step_count=0)
            return CounterObservation(count=0)

        def step(self, action: CounterAction, timeout_s: Any = None, **kwargs: Any) -> CounterObservation:
            self._state.step_count += 1
            n = self._state.step_count
            return CounterObservation(count=n, reward=1.0, done=n >= LENGTH)

        @property
        def state(self) -> State:
            return self._state

    class AsyncCounter(Counter):
        async def reset_async(self, seed: Any = None, episode_id: Any = None, **kwargs: Any) -> CounterObservation:
            return self.reset(seed, episode_id)

        async def step_async(self, action: CounterAction, timeout_s: Any = None, **kwargs: Any) -> CounterObservation:
            if wait > 0:
                await asyncio.sleep(wait)
            return self.step(action)

    env = AsyncCounter if use_async else Counter
    return create_app(env, CounterAction, CounterObservation, env_name="counter", max_concurrent_envs=max_sessions)


# ----------------------------------------------------------------- the three servers (child processes)


async def _serve_nenyax(wait: float, max_sessions: int) -> None:
    from nenyax.server.openenv import running

    async with running(nenyax_counter(wait), max_sessions=max_sessions, idle_timeout=3600) as (_server, url):
        print(url, flush=True)
        await asyncio.Event().wait()


async def _serve_bare() -> None:
    """A bare aiohttp WebSocket server answering the same frames with OpenEnv's JSON shape: the floor."""
    from aiohttp import WSMsgType, web

    # The same modules loaded as in the nenyax server process: measured, a process holding only aiohttp
    # spends twice the CPU per message on the standard loop (allocator churn on its tiny heap), which
    # would make the floor too high and the ratio flatter nenyax.
    import nenyax.server.openenv  # noqa: F401

    async def handle(request: web.Request) -> web.WebSocketResponse:
        # The same aiohttp calls nenyax serve makes (bytes in, send_frame out): only its own work is missing.
        ws = web.WebSocketResponse(compress=False, decode_text=False)
        await ws.prepare(request)
        count = 0
        while True:
            msg = await ws.receive()
            if msg.type is not WSMsgType.TEXT:
                break
            kind = orjson.loads(msg.data)["type"]
            count = 0 if kind == "reset" else count + 1
            obs = {"count": count, "metadata": {}}
            reply = {"observation": obs, "reward": None if kind == "reset" else 1.0, "done": count >= LENGTH}
            await ws.send_frame(orjson.dumps({"type": "observation", "data": reply}), WSMsgType.TEXT)
        return ws

    app = web.Application()
    app.router.add_get("/ws", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    print(f"http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
    await asyncio.Event().wait()


def _serve_openenv(wait: float, use_async: bool, max_sessions: int) -> None:
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    app = openenv_app(wait, use_async, max_sessions)
    loop = "asyncio" if os.environ.get("BENCH_LOOP") == "asyncio" else "auto"  # auto: uvloop when installed
    config = uvicorn.Config(app, log_level="warning", backlog=4096, ws_per_message_deflate=False, loop=loop)
    uvicorn.Server(config).run(sockets=[sock])


def start_server(kind: str, wait: float, max_sessions: int, cpu: int = -1) -> tuple[subprocess.Popen[str], str]:
    """Start one server in its own process (pinned to `cpu` unless -1); return it and its URL once it answers."""
    cmd = [sys.executable, HERE, "--role", f"server:{kind}", "--wait", str(wait), "--max-sessions", str(max_sessions),
           "--cpu", str(cpu)]  # fmt: skip
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    asyncio.run(_until_up(url))
    return process, url


async def _until_up(url: str) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        for _ in range(300):
            try:
                async with session.ws_connect(url + "/ws", compress=0) as ws:
                    await ws.send_str('{"type": "reset", "data": {}}')
                    await ws.receive(timeout=5)
                    return
            except (aiohttp.ClientError, OSError):
                await asyncio.sleep(0.1)
    msg = f"the server at {url} never answered"
    raise RuntimeError(msg)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process `pid` (all its threads) so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ----------------------------------------------------------------- the client (child processes)


def _client_frame(text: bytes) -> bytes:
    """A masked client text frame; the all-zero mask key (legal) leaves the payload as it is."""
    size = len(text)
    header = bytes([0x81, 0x80 | size]) if size < 126 else bytes([0x81, 0x80 | 126]) + size.to_bytes(2, "big")
    return header + b"\0\0\0\0" + text


class _Player(asyncio.Protocol):
    """One session driven from the socket callbacks: no coroutine, no JSON parsing per step.

    Part 1 must measure the server, so the client has to cost much less than any server; a plain
    aiohttp client costs about as much per step as a fast server does (measured: it capped the bare
    aiohttp server at ~14k steps/s on this box). Each reply is checked for an error frame and for
    the end of the episode; the next frame is written at once.
    """

    def __init__(self, host: str, step: bytes, stats: dict[str, Any], window: tuple[float, float]) -> None:
        self.handshake = (
            f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: bmVueWF4LWJlbmNobWFyaw==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
        self.step = _client_frame(step)
        self.reset = _client_frame(b'{"type": "reset", "data": {}}')
        self.stats, (self.start_at, self.end_at) = stats, window
        self.buf = bytearray()
        self.upgraded = False
        self.resetting = True
        self.sent = 0.0
        self.finished = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        transport.write(self.handshake)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.finished.done():
            self.finished.set_result(None)

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            if b" 101 " not in buf[:end]:
                self.stats["errors"] += 1
                self.transport.close()
                return
            del buf[: end + 4]
            self.upgraded = True
            self.sent = time.time()
            self.transport.write(self.reset)
        while len(buf) >= 2:
            size, at = buf[1] & 0x7F, 2
            if size == 126:
                if len(buf) < 4:
                    return
                size, at = int.from_bytes(buf[2:4], "big"), 4
            elif size == 127:
                if len(buf) < 10:
                    return
                size, at = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) < at + size:
                return
            opcode, payload = buf[0] & 0x0F, bytes(buf[at : at + size])
            del buf[: at + size]
            if opcode in (1, 2):
                self.reply(payload)
            elif opcode == 8:
                self.transport.close()
                return

    def reply(self, payload: bytes) -> None:
        now = time.time()
        stats = self.stats
        if b'"type":"error"' in payload:
            stats["errors"] += 1
        elif not self.resetting and self.start_at <= self.sent and now <= self.end_at:
            stats["steps"] += 1
            stats["latencies"].append(now - self.sent)
        self.resetting = not self.resetting and b'"done":true' in payload
        if now >= self.end_at:
            self.transport.close()
            return
        self.sent = now
        self.transport.write(self.reset if self.resetting else self.step)


async def _drive(url: str, sessions: int, action: Any, start_at: float, seconds: float) -> dict[str, Any]:
    """Play episodes on `sessions` connections; count the steps answered inside [start_at, start_at + seconds]."""
    host = url.split("://", 1)[1]
    address, port = host.rsplit(":", 1)
    step = orjson.dumps({"type": "step", "data": action})
    stats: dict[str, Any] = {"steps": 0, "errors": 0, "latencies": []}
    loop = asyncio.get_running_loop()
    players = []
    for _ in range(sessions):
        _transport, player = await loop.create_connection(
            lambda: _Player(host, step, stats, (start_at, start_at + seconds)), address, int(port)
        )
        players.append(player)
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    await asyncio.gather(*(p.finished for p in players))
    used = resource.getrusage(resource.RUSAGE_SELF)
    stats["cpu"] = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime  # includes warm-up and tail
    latencies = stats.pop("latencies")
    return {**stats, "latencies": random.Random(0).sample(latencies, min(len(latencies), 20_000))}


async def _batch(url: str, size: int, action: Any, timeout: float) -> dict[str, Any]:
    """`size` clients at once: connect, reset, one step, close. Success = both answered as observations."""
    import aiohttp

    step_frame = orjson.dumps({"type": "step", "data": action}).decode()

    async def one(session: aiohttp.ClientSession) -> float | None:
        began = time.perf_counter()
        try:
            async with asyncio.timeout(timeout), session.ws_connect(url + "/ws", compress=0) as ws:
                await ws.send_str('{"type": "reset", "data": {}}')
                ok = orjson.loads((await ws.receive()).data)["type"] == "observation"
                await ws.send_str(step_frame)
                ok = ok and orjson.loads((await ws.receive()).data)["type"] == "observation"
                await ws.send_str('{"type": "close"}')
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError, TypeError):
            return None
        return time.perf_counter() - began if ok else None

    connector = aiohttp.TCPConnector(limit=0)
    began = time.perf_counter()
    async with aiohttp.ClientSession(connector=connector) as session:
        results = await asyncio.gather(*(one(session) for _ in range(size)))
    wall = time.perf_counter() - began
    ok = [r for r in results if r is not None]
    return {"ok": len(ok), "size": size, "wall": wall, "latencies": ok}


# ----------------------------------------------------------------- orchestration


SERVERS = {
    "bare": ("bare aiohttp WebSocket server (floor)", {"action": 1}),
    "nenyax": ("nenyax serve", {"action": 1}),
    "openenv": ("OpenEnv create_app, plain step()", {"action": 1}),
    "openenv-async": ("OpenEnv create_app, step_async()", {"action": 1}),
}


def _collect(path: str) -> dict[str, Any]:
    with open(path) as f:
        result = json.load(f)
    os.unlink(path)
    return result


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def throughput(kind: str, sessions: int, clients: int, seconds: float, pin: bool = False) -> dict[str, float]:
    """One run: steps/s, latency and server CPU per step for server `kind`."""
    # --pin: server on core 0, clients on core 1. Off by default: on a machine others use too, a pinned
    # server shares its core with whatever runs there (measured: worse and noisier than the scheduler).
    process, url = start_server(kind, 0.0, sessions + 64, cpu=0 if pin else -1)
    try:
        action = SERVERS[kind][1]
        start_at = time.time() + 2.0  # every client connects and warms up before the window opens
        per_client = [sessions // clients + (1 if i < sessions % clients else 0) for i in range(clients)]
        outs = [tempfile.mktemp(suffix=".json") for _ in per_client]
        children = [
            subprocess.Popen(
                [sys.executable, HERE, "--role", "client", "--url", url, "--sessions", str(n), "--out", out,
                 "--cpu", "1" if pin else "-1", "--action", json.dumps(action),
                 "--start-at", repr(start_at), "--seconds", str(seconds)]
            )
            for n, out in zip(per_client, outs, strict=True)
        ]  # fmt: skip
        time.sleep(max(0.0, start_at - time.time()))
        cpu0 = cpu_seconds(process.pid)
        time.sleep(seconds)
        cpu1 = cpu_seconds(process.pid)
        for child in children:
            child.wait(timeout=120)
        results = [_collect(out) for out in outs]
    finally:
        process.terminate()
        process.wait(timeout=30)
    steps = sum(r["steps"] for r in results)
    latencies = [x for r in results for x in r["latencies"]]
    return {
        "steps_s": steps / seconds,
        "p50_ms": _percentile(latencies, 0.5) * 1000,
        "p99_ms": _percentile(latencies, 0.99) * 1000,
        "cpu_us": (cpu1 - cpu0) / max(steps, 1) * 1e6,
        "errors": sum(r["errors"] for r in results),
        "client_us": sum(r["cpu"] for r in results) / (seconds + 2.0) * seconds / max(steps, 1) * 1e6,
    }


def scaling(kind: str, grid: list[int], wait: float) -> list[dict[str, Any]]:
    """Part 2 on one server: each batch size once, all clients at once."""
    process, url = start_server(kind, wait, max(grid) + 64)
    rows = []
    try:
        for size in grid:
            path = tempfile.mktemp(suffix=".json")
            cmd = [sys.executable, HERE, "--role", "batch", "--url", url, "--size", str(size), "--out", path,
                   "--action", json.dumps(SERVERS[kind][1]), "--wait", str(wait)]  # fmt: skip
            subprocess.run(cmd, timeout=600, check=True)
            out = _collect(path)
            lat = out["latencies"]
            rows.append(
                {
                    "size": size,
                    "success": 100.0 * out["ok"] / size,
                    "p50": _percentile(lat, 0.5),
                    "p99": _percentile(lat, 0.99),
                    "rps": out["ok"] / out["wall"],
                }
            )
            time.sleep(1.0)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return rows


def main() -> None:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--role", default="bench")
    _raise_fd_limit()
    if pre.parse_known_args()[0].role != "bench":  # a server or client process of this benchmark
        return _child(pre.parse_known_args()[0].role, sys.argv[1:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--clients", type=int, default=2, help="client processes for part 1")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--grid", default="32,128,512,2048,4096,8192")
    parser.add_argument("--wait", type=float, default=1.0, help="seconds a step waits in part 2")
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--pin", action="store_true", help="pin the server to core 0 and the clients to core 1")
    args = parser.parse_args()

    print(f"Part 1: {args.sessions} sessions over /ws, {LENGTH}-step episodes, {args.clients} client processes, "
          f"{args.seconds:g} s windows, median of {args.repeats}")  # fmt: skip
    medians: dict[str, dict[str, float]] = {}
    for kind in SERVERS:
        runs = [throughput(kind, args.sessions, args.clients, args.seconds, args.pin) for _ in range(args.repeats)]
        medians[kind] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print("| server | steps/s | step p50 ms | step p99 ms | server CPU us/step | client CPU us/step | errors |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for kind, m in medians.items():
        print(f"| {SERVERS[kind][0]} | {m['steps_s']:,.0f} | {m['p50_ms']:.2f} | {m['p99_ms']:.2f} | "
              f"{m['cpu_us']:.1f} | {m['client_us']:.1f} | {m['errors']:.0f} |")  # fmt: skip
    n, o, oa, b = (medians[k] for k in ("nenyax", "openenv", "openenv-async", "bare"))
    print(f"nenyax / OpenEnv steps/s: {n['steps_s'] / o['steps_s']:.1f}x (plain step), "
          f"{n['steps_s'] / oa['steps_s']:.1f}x (step_async)")  # fmt: skip
    print(f"nenyax / bare aiohttp server CPU per step: {n['cpu_us'] / b['cpu_us']:.2f}x; goal <= 1.25x")
    said = f"{args.sessions} sessions, {args.seconds:g} s windows, median of {args.repeats}"
    figure(
        "P3.cpu",
        n["cpu_us"] / b["cpu_us"],
        goal=1.25,
        detail=f"{n['cpu_us']:.1f} vs {b['cpu_us']:.1f} us server CPU per step; {said}",
    )
    figure(
        "P3.steps",
        n["steps_s"] / o["steps_s"],
        goal=None,
        better="higher",
        detail=(
            f"{n['steps_s']:,.0f} vs OpenEnv's {o['steps_s']:,.0f} steps/s ({n['steps_s'] / oa['steps_s']:.1f}x its "
            f"step_async); client CPU {n['client_us']:.1f} us per step; {said}"
        ),
    )

    if args.skip_scaling:
        return None
    grid = [int(x) for x in args.grid.split(",")]
    print(f"\nPart 2: sessions held at once (connect, reset, one step waiting {args.wait:g} s, close), 2 cores")
    print("| server | sessions | success % | p50 s | p99 s | requests/s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for kind in ("nenyax", "openenv-async"):
        for row in scaling(kind, grid, args.wait):
            print(f"| {SERVERS[kind][0]} | {row['size']:,} | {row['success']:.1f} | {row['p50']:.2f} | "
                  f"{row['p99']:.2f} | {row['rps']:,.0f} |", flush=True)  # fmt: skip
            if kind == "nenyax" and row["size"] == max(grid):
                said = f"{row['size']:,} sessions held at once, one {args.wait:g} s step each; p99 {row['p99']:.2f} s"
                figure("P3.sessions", row["success"], goal=99.0, better="higher", unit="%", detail=said)
    return None


def _child(role: str, argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    for name in ("--role", "--url", "--action", "--out"):
        parser.add_argument(name)
    for name in ("--sessions", "--size", "--max-sessions"):
        parser.add_argument(name, type=int, default=0)
    parser.add_argument("--cpu", type=int, default=-1)
    for name in ("--start-at", "--seconds", "--wait"):
        parser.add_argument(name, type=float, default=0.0)
    a = parser.parse_args(argv)
    if a.cpu >= 0 and hasattr(os, "sched_setaffinity") and a.cpu < (os.cpu_count() or 1):
        os.sched_setaffinity(0, {a.cpu})
    if role == "server:nenyax":
        run(_serve_nenyax(a.wait, a.max_sessions))
    elif role == "server:bare":
        run(_serve_bare())
    elif role in ("server:openenv", "server:openenv-async"):
        _serve_openenv(a.wait, role.endswith("async"), a.max_sessions)
    elif role == "client":
        result = run(_drive(a.url, a.sessions, json.loads(a.action), a.start_at, a.seconds))
    elif role == "batch":
        result = run(_batch(a.url, a.size, json.loads(a.action), timeout=60 + 10 * a.wait))
    else:
        return
    with open(a.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
