"""What a sandboxed command costs: `exec("true")` in a running sandbox, and starting plus stopping one.

Anchor, in the same run: the same command as a plain subprocess (`asyncio.create_subprocess_exec`), which
is what a harness without a sandbox pays. Sandboxes: `bwrap` (always), `docker` where ``DOCKER_HOST`` is
set (e.g. the socket `nox -s podman` starts). Run as root for the limits and users to be on, as in CI.

    python bench/sandbox_exec.py [--execs 200 --starts 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from nenyax.core import SandboxSpec, create_sandbox


async def _plain(execs: int) -> list[float]:
    took = []
    for _ in range(execs):
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec("true")
        await process.wait()
        took.append(time.perf_counter() - started)
    return took


async def _sandboxed(name: str, execs: int, starts: int) -> tuple[list[float], list[float]]:
    backend = create_sandbox(name)
    try:
        image = await backend.build(SandboxSpec(image=backend.default_image, memory_mb=512, pids=256))
        lifetimes = []
        for _ in range(starts):
            started = time.perf_counter()
            box = await backend.start(image)
            await box.stop()
            lifetimes.append(time.perf_counter() - started)
        async with await backend.start(image) as box:
            commands = []
            for _ in range(execs):
                started = time.perf_counter()
                done = await box.exec(["true"])
                commands.append(time.perf_counter() - started)
                assert done.ok, done
        return commands, lifetimes
    finally:
        await backend.close()


def _ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p90 {sorted(values)[int(len(values) * 0.9)] * 1000:.1f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--execs", type=int, default=200)
    parser.add_argument("--starts", type=int, default=20)
    args = parser.parse_args()
    plain = await _plain(args.execs)
    print(f"plain subprocess `true`: {_ms(plain)}")
    names = ["bwrap", *(["docker"] if os.environ.get("DOCKER_HOST") else [])]
    for name in names:
        commands, lifetimes = await _sandboxed(name, args.execs, args.starts)
        ratio = statistics.median(commands) / statistics.median(plain)
        print(f"{name}: exec `true` {_ms(commands)} ({ratio:.1f}x the plain subprocess); start + stop {_ms(lifetimes)}")


if __name__ == "__main__":
    asyncio.run(main())
