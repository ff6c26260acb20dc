"""CartPole-v1: Nenyax rollouts (recorded to JSONL) against the raw gymnasium loop, same episodes.

Both sides play the same seeds with the same trivial callable policy; Nenyax also records every
trajectory (steps, judgment) to a JSONL sink. Prints both times and the ratio (goal: <= 1.10).

    python bench/gymnasium_cartpole.py [--episodes 200] [--repeats 5]

Needs nenyax-core and nenyax-adapters-gymnasium installed. Not a test: wall times are printed, not asserted.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import gymnasium as gym
from _report import figure

from nenyax.core import load, read_trajectories


def policy(observation):
    """Push toward the side the pole is falling to (balances for tens to hundreds of steps)."""
    return 1 if observation[2] + 0.5 * observation[3] > 0 else 0


def raw_loop(episodes: int) -> tuple[float, list[float]]:
    """The plain gymnasium loop: one env, reset(seed=n), step until terminated or truncated."""
    env = gym.make("CartPole-v1")
    returns = []
    started = time.perf_counter()
    for seed in range(episodes):
        observation, _info = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            observation, reward, terminated, truncated, _info = env.step(policy(observation))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    elapsed = time.perf_counter() - started
    env.close()
    return elapsed, returns


def nenyax_rollouts(episodes: int, sink: Path) -> tuple[float, list[float]]:
    """The same seeds through `env.rollouts`, every trajectory streamed to a JSONL sink."""
    env = load(f"gymnasium:CartPole-v1?tasks={episodes}")
    started = time.perf_counter()
    trajectories = env.rollouts(policy, tasks=episodes, sink=sink)
    elapsed = time.perf_counter() - started
    env.close()
    return elapsed, [t.score for t in trajectories]


def main() -> None:
    """Alternate the two sides `repeats` times and report medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    raw_times, nenyax_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            sink = Path(tmp) / f"run{repeat}.jsonl"
            raw_time, raw_returns = raw_loop(args.episodes)
            nx_time, nx_returns = nenyax_rollouts(args.episodes, sink)
            if raw_returns != nx_returns:
                raise SystemExit("The two sides played different episodes; the comparison is void.")
            recorded = list(read_trajectories(sink))
            if len(recorded) != args.episodes:
                raise SystemExit(f"The sink holds {len(recorded)} trajectories, not {args.episodes}.")
            raw_times.append(raw_time)
            nenyax_times.append(nx_time)
    steps = int(sum(raw_returns))  # CartPole pays 1 per step
    raw, nx = statistics.median(raw_times), statistics.median(nenyax_times)
    print(f"CartPole-v1, {args.episodes} episodes, {steps} steps, median of {args.repeats}")
    print(f"raw gymnasium loop:        {raw:.3f} s  ({steps / raw:,.0f} steps/s)")
    print(f"nenyax rollouts + JSONL:   {nx:.3f} s  ({steps / nx:,.0f} steps/s)")
    print(f"ratio nenyax / raw:        {nx / raw:.2f}  (goal <= 1.10)")
    said = f"{nx:.3f} vs {raw:.3f} s for {steps:,} steps ({args.episodes} episodes), median of {args.repeats}"
    figure("P1", nx / raw, goal=1.10, detail=said)


if __name__ == "__main__":
    main()
