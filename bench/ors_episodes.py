"""ORS episodes: Nenyax's ors adapter against ors-sdk's own async client, same server, same episodes.

A real ors-sdk server (the ors adapter's test ``MathEnv``) runs in its own process. Both sides play
every task `--repeats` times with the honest answer: the ors-sdk side opens a session, reads the
prompt and calls ``submit``; Nenyax runs ``env.rollouts("reference", ...)``, which also lists the
session's tools and records each judged trajectory. Prints the wall time of each side and the ratio
(the server's own time is in both).

    python bench/ors_episodes.py [--episodes 300] [--concurrency 16] [--repeats 3]

Needs nenyax-core, nenyax-adapters-ors and ors-sdk installed. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import time
from pathlib import Path

from nenyax.core import load

TESTS = Path(__file__).parent.parent / "packages" / "nenyax-adapters-ors" / "tests"


def _load(path: Path, name: str):
    """A module of the adapter's tests folder, by path (it is not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def ors_sdk_side(url: str, jobs: list[tuple[int, str]], concurrency: int) -> tuple[float, list[float]]:
    """ors-sdk's AsyncORS: session(split, index) -> get_prompt -> call_tool('submit')."""
    from ors.client import AsyncORS

    client = AsyncORS(base_url=url)  # kept alive: its __del__ closes the shared aiohttp session
    env = client.environment("mathenv")
    gate = asyncio.Semaphore(concurrency)
    rewards: list[float] = []

    async def one(index: int, answer: str) -> None:
        async with gate, env.session(split="test", index=index) as session:
            await session.get_prompt()
            out = await session.call_tool("submit", {"answer": answer})
            rewards.append(out.reward)

    started = time.perf_counter()
    await asyncio.gather(*(one(i, a) for i, a in jobs))
    elapsed = time.perf_counter() - started
    await env.client.close()
    return elapsed, rewards


def nenyax_side(uri: str, tasks: int, repeats: int, concurrency: int) -> tuple[float, list[float]]:
    """The same episodes through `env.rollouts`, every trajectory judged and recorded."""
    env = load(uri)
    started = time.perf_counter()
    trajectories = env.rollouts("reference", tasks=tasks, n=repeats, concurrency=concurrency)
    elapsed = time.perf_counter() - started
    return elapsed, [t.score for t in trajectories]


def main() -> None:
    """Alternate the two sides and report medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300, help="episodes per side and round")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3, help="rounds (medians are reported)")
    args = parser.parse_args()
    answers = [answer for _question, answer in _load(TESTS / "ors_envs.py", "nenyax_ors_bench_envs").QUESTIONS]
    per_task = max(1, args.episodes // len(answers))
    jobs = [(i, a) for i, a in enumerate(answers) for _ in range(per_task)]
    with _load(TESTS / "servers.py", "nenyax_ors_bench_servers").Served("ors_envs.py") as server:
        uri = f"ors:{server.url}/mathenv"
        anchor, ours = [], []
        for _ in range(args.repeats):
            seconds, rewards = asyncio.run(ors_sdk_side(server.url, jobs, args.concurrency))
            assert rewards == [1.0] * len(jobs), "the ors-sdk side did not solve every task"
            anchor.append(seconds)
            seconds, scores = nenyax_side(uri, len(answers), per_task, args.concurrency)
            assert scores == [1.0] * len(jobs), "the Nenyax side did not solve every task"
            ours.append(seconds)
    a, n = statistics.median(anchor), statistics.median(ours)
    print(f"{len(jobs)} episodes at concurrency {args.concurrency}, median of {args.repeats}:")
    print(f"  ors-sdk AsyncORS   {a:.3f} s  ({1000 * a / len(jobs):.2f} ms/episode)")
    print(f"  nenyax rollouts    {n:.3f} s  ({1000 * n / len(jobs):.2f} ms/episode)")
    print(f"  ratio nenyax / ors-sdk: {n / a:.2f}")


if __name__ == "__main__":
    main()
