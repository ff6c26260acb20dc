"""Many concurrent episodes against a loopback model server with a fixed latency.

Each episode is one model call (the in-memory `arith` environment, so the figure is the engine and
the transport, not an environment's own cost). The server runs in another process with a fixed
100 ms latency; the latency-bound ideal is one latency per wave of `--concurrency` episodes.
Prints wall time, wall / ideal (goal <= 1.25) and client CPU per call.
Run: `python bench/concurrency.py [--episodes 4096] [--concurrency 4096] [--latency 0.1]`.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import resource
import time

from _server import scripted_server

from nenyax.core import Endpoint, Status
from nenyax.testing.fakes import ArithEnvironment


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run(base_url: str, episodes: int, concurrency: int) -> tuple[float, float, int]:
    env = ArithEnvironment("arith:add", size=episodes, seed=0)
    endpoint = Endpoint("openai:m", base_url=base_url, max_concurrency=concurrency)
    await env.arollouts(endpoint, 64, concurrency=64)  # warm up: imports, connections
    cpu, started = _cpu(), time.perf_counter()
    trajs = await env.arollouts(endpoint, episodes, concurrency=concurrency)
    wall = time.perf_counter() - started
    await endpoint.aclose()
    ok = sum(t.status is Status.OK for t in trajs)
    return wall, _cpu() - cpu, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=4096)
    parser.add_argument("--concurrency", type=int, default=4096)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 2 * args.concurrency + 256)), hard))
    with scripted_server(latency=args.latency, reply="7") as base_url:
        wall, cpu, ok = asyncio.run(run(base_url, args.episodes, args.concurrency))
    ideal = args.latency * math.ceil(args.episodes / args.concurrency)
    latency_ms = args.latency * 1000
    print(f"{args.episodes} episodes, concurrency {args.concurrency}, server latency {latency_ms:.0f} ms: {ok} ok")
    print(f"wall {wall:.3f} s, latency-bound ideal {ideal:.3f} s, wall/ideal {wall / ideal:.2f} (goal <= 1.25)")
    print(f"client CPU {cpu:.2f} s = {cpu / args.episodes * 1000:.3f} ms per call")


if __name__ == "__main__":
    main()
