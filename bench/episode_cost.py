"""P1e: the fixed cost of one `env.rollout()`, against the same episode without Nenyax.

Two short-episode cases, each anchored in the same run:

* CartPole-v1 with a policy whose episodes last about 40 steps: `env.rollout(policy, task=...)` per
  episode against the plain gymnasium loop (`reset(seed)`, `step` until done) on one made env;
* a one-step reasoning-gym task (basic_arithmetic): `env.rollout("reference", task=...)` against
  calling the dataset for the entry and its scorer on the gold answer directly. Both sides play the
  same indexes, each from a fresh dataset or environment, so neither is helped by a cache.

Prints per-episode microseconds and the ratio (goal <= 1.3). Run from the repository root with
nenyax-core, nenyax-adapters-gymnasium and nenyax-adapters-reasoning-gym installed:

    python bench/episode_cost.py [--episodes 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import reasoning_gym

from nenyax.core import load


def policy(observation):
    """Push against the pole's angular velocity, a little late: episodes of about 40 steps."""
    return int(observation[3] > 0.3)


def cartpole_raw(seeds: range) -> float:
    env = gym.make("CartPole-v1")
    started = time.perf_counter()
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _reward, terminated, truncated, _ = env.step(policy(obs))
            done = terminated or truncated
    return time.perf_counter() - started


def cartpole_nenyax(seeds: range) -> tuple[float, float]:
    env = load("gymnasium:CartPole-v1")
    env.rollout(policy, task="CartPole-v1/seed/0")  # the env pool is warm, as the raw loop's one env is
    started = time.perf_counter()
    steps = 0
    for seed in seeds:
        steps += len(env.rollout(policy, task=f"CartPole-v1/seed/{seed}").steps)
    return time.perf_counter() - started, steps / len(seeds)


def arithmetic_raw(indexes: range, size: int) -> float:
    data = reasoning_gym.create_dataset("basic_arithmetic", seed=42, size=size)
    started = time.perf_counter()
    for index in indexes:
        entry = data[index]
        data.score_answer(entry["answer"], entry)
    return time.perf_counter() - started


def arithmetic_nenyax(indexes: range, size: int) -> float:
    env = load(f"reasoning_gym:basic_arithmetic?size={size}&seed=42")
    started = time.perf_counter()
    for index in indexes:
        traj = env.rollout("reference", task=f"basic_arithmetic/42/{index}")
        assert traj.score == 1.0
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.episodes
    size = n * args.repeats
    rows = {"cartpole": ([], []), "arithmetic": ([], [])}
    length = 0.0
    for repeat in range(args.repeats):
        seeds = range(repeat * n, (repeat + 1) * n)
        rows["cartpole"][0].append(cartpole_raw(seeds))
        took, length = cartpole_nenyax(seeds)
        rows["cartpole"][1].append(took)
        # The same indexes on both sides (an entry's generation time varies several-fold with its numbers,
        # so different indexes made the ratio swing from 1.4 to 2.7); each side makes a fresh dataset or
        # environment, so no entry comes from a cache.
        indexes = range(repeat * n, (repeat + 1) * n)
        rows["arithmetic"][0].append(arithmetic_raw(indexes, size))
        rows["arithmetic"][1].append(arithmetic_nenyax(indexes, size))
    print(f"{n} episodes per side, median of {args.repeats}; CartPole episodes average {length:.1f} steps")
    print(f"{'case':<12} {'raw us/ep':>10} {'nenyax us/ep':>13} {'ratio':>7}")
    for case, (raw, ours) in rows.items():
        raw_us, ours_us = statistics.median(raw) / n * 1e6, statistics.median(ours) / n * 1e6
        print(f"{case:<12} {raw_us:>10.1f} {ours_us:>13.1f} {ours_us / raw_us:>7.2f}")


if __name__ == "__main__":
    main()
