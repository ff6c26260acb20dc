"""Added latency per call through the recording proxy vs calling the same loopback server directly.

Both paths use the openai provider (aiohttp) against the scripted server running in another process;
the proxy runs in the client's process, as it does in a real run. Plain and streamed completions alike
(the proxy records a stream as it passes through). Prints p50/p99 of each and the added latency (goals:
<= 0.25 ms at p50, <= 1 ms at p99). Run: `python bench/proxy_overhead.py [--calls 2000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from _report import figure
from _server import scripted_server

from nenyax.core import ChatRequest, Endpoint
from nenyax.core.builtin_plugins.openai_provider import OpenAIProvider
from nenyax.core.models.proxy import RecordingProxy

REQUEST = ChatRequest(model="m", messages=({"role": "user", "content": "What is 2 + 2?"},))


async def _timed(provider: OpenAIProvider, calls: int) -> list[float]:
    for _ in range(50):  # warm the connection pool
        await provider.complete(REQUEST)
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        await provider.complete(REQUEST)
        out.append(time.perf_counter() - started)
    return out


async def measure(base_url: str, calls: int, stream: bool) -> tuple[list[float], list[float]]:
    direct_provider = OpenAIProvider(base_url=base_url, stream=stream)
    direct = await _timed(direct_provider, calls)
    endpoint = Endpoint("openai:m", base_url=base_url)
    async with RecordingProxy() as proxy, proxy.episode(endpoint) as route:
        via_provider = OpenAIProvider(base_url=route.base_url, stream=stream)
        via = await _timed(via_provider, calls)
        assert len(route.calls) == calls + 50
        await via_provider.aclose()
    await endpoint.aclose()
    await direct_provider.aclose()
    return direct, via


def _q(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    for stream in (False, True):
        with scripted_server() as base_url:
            direct, via = asyncio.run(measure(base_url, args.calls, stream))
        way = "streamed" if stream else "plain"
        d50, v50 = statistics.median(direct) * 1000, statistics.median(via) * 1000
        d99, v99 = _q(direct, 99), _q(via, 99)
        print(f"{way}: direct      p50 {d50:.3f} ms   p99 {d99:.3f} ms   ({args.calls} calls)")
        print(f"{way}: via proxy   p50 {v50:.3f} ms   p99 {v99:.3f} ms")
        print(f"{way}: added latency p50 {v50 - d50:.3f} ms (goal <= 0.25), p99 {v99 - d99:.3f} ms (goal <= 1)")
        said = f"{way}: {v50:.3f} vs {d50:.3f} ms direct at p50, {v99:.3f} vs {d99:.3f} at p99; {args.calls} calls"
        figure(f"P7.{way}.p50", v50 - d50, goal=0.25, unit="ms", detail=said)
        figure(f"P7.{way}.p99", v99 - d99, goal=1.0, unit="ms", detail=said)


if __name__ == "__main__":
    main()
