"""Many concurrent episodes against a loopback model server with a fixed latency (P2).

Each episode is one model call (the in-memory `arith` environment, so the figure is the engine and
the transport, not an environment's own cost). The server runs in another process with a fixed
100 ms latency. In the same run, a bare aiohttp client makes the same calls to the same server
(same body, same connection limit, the reply's JSON parsed): that is the floor of client CPU per
call in Python. Printed: Nenyax's CPU per call against the bare client's (goal <= 1.3), and wall
time against the floor max(latency per wave, calls x bare CPU per call / processes) (goal <= 1.25);
beside it the old latency-only ideal.
Run: `python bench/concurrency.py [--episodes 4096] [--concurrency 4096] [--latency 0.1] [--repeats 3]`.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import resource
import statistics
import time

import aiohttp
from _report import figure
from _server import scripted_server

from nenyax.core import Endpoint, Status
from nenyax_testsupport.fakes import ArithEnvironment


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def nenyax_run(base_url: str, episodes: int, concurrency: int) -> tuple[float, float, int]:
    env = ArithEnvironment("arith:add", size=episodes, seed=0)
    endpoint = Endpoint("openai:m", base_url=base_url, max_concurrency=concurrency)
    await env.arollouts(endpoint, 64, concurrency=64)  # warm up: imports, connections
    cpu, started = _cpu(), time.perf_counter()
    trajs = await env.arollouts(endpoint, episodes, concurrency=concurrency)
    wall = time.perf_counter() - started
    cpu = _cpu() - cpu
    await endpoint.aclose()
    return wall, cpu, sum(t.status is Status.OK for t in trajs)


async def bare_run(base_url: str, episodes: int, concurrency: int) -> tuple[float, float, int]:
    """The same calls with nothing but aiohttp: one session, `concurrency` workers, JSON in and out."""
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        url = base_url.rstrip("/") + "/chat/completions"

        async def call(index: int) -> bool:
            body = {
                "model": "m",
                "messages": [{"role": "user", "content": f"What is {index} + {index}?"}],
                "logprobs": True,
            }
            async with session.post(url, json=body) as response:
                data = await response.json()
            return bool(data["choices"][0]["message"]["content"])

        async def worker(queue: list[int]) -> int:
            done = 0
            while queue:
                done += await call(queue.pop())
            return done

        async def play(count: int) -> int:
            queue = list(range(count))
            return sum(await asyncio.gather(*(worker(queue) for _ in range(min(concurrency, count)))))

        await play(64)  # warm up, as the Nenyax side does
        cpu, started = _cpu(), time.perf_counter()
        ok = await play(episodes)
        return time.perf_counter() - started, _cpu() - cpu, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=4096)
    parser.add_argument("--concurrency", type=int, default=4096)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--processes", type=int, default=1, help="client processes the floor assumes (this run uses 1)")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 2 * args.concurrency + 256)), hard))
    runs: dict[str, list[tuple[float, float, int]]] = {"bare": [], "nenyax": []}
    with scripted_server(latency=args.latency, reply="7") as base_url:
        for _ in range(args.repeats):  # interleaved, so both sides see the same load
            runs["bare"].append(asyncio.run(bare_run(base_url, args.episodes, args.concurrency)))
            runs["nenyax"].append(asyncio.run(nenyax_run(base_url, args.episodes, args.concurrency)))
    n = args.episodes
    wall = {side: statistics.median(r[0] for r in rs) for side, rs in runs.items()}
    cpu_call = {side: statistics.median(r[1] for r in rs) / n for side, rs in runs.items()}
    ok = {side: min(r[2] for r in rs) for side, rs in runs.items()}
    waves = args.latency * math.ceil(n / args.concurrency)
    floor = max(waves, n * cpu_call["bare"] / args.processes)
    print(
        f"{n} episodes, concurrency {args.concurrency}, server latency {args.latency * 1000:.0f} ms, "
        f"median of {args.repeats}: ok bare {ok['bare']}, nenyax {ok['nenyax']}"
    )
    for side in ("bare", "nenyax"):
        print(f"  {side:6} wall {wall[side]:.3f} s, client CPU {cpu_call[side] * 1000:.3f} ms per call")
    print(f"CPU per call: nenyax / bare {cpu_call['nenyax'] / cpu_call['bare']:.2f} (goal <= 1.3)")
    print(
        f"floor max({waves:.3f} s latency, {n} x {cpu_call['bare'] * 1000:.3f} ms / {args.processes})"
        f" = {floor:.3f} s: "
        f"nenyax wall / floor {wall['nenyax'] / floor:.2f} (goal <= 1.25); bare {wall['bare'] / floor:.2f}"
    )
    print(f"latency-only ideal {waves:.3f} s: nenyax wall / ideal {wall['nenyax'] / waves:.2f}")
    said = f"{n} episodes at concurrency {args.concurrency}, median of {args.repeats}"
    figure(
        "P2.wall",
        wall["nenyax"] / floor,
        goal=1.25,
        detail=f"{said}: wall {wall['nenyax']:.2f} s, floor {floor:.2f} s (bare {wall['bare'] / floor:.2f})",
    )
    figure(
        "P2.cpu",
        cpu_call["nenyax"] / cpu_call["bare"],
        goal=1.3,
        detail=f"{said}: {cpu_call['nenyax'] * 1e3:.3f} vs {cpu_call['bare'] * 1e3:.3f} ms CPU per call",
    )


if __name__ == "__main__":
    main()
