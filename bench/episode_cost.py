"""P1e: the fixed cost of one `env.rollout()`, against the same episode without Nenyax.

Two short-episode cases, each anchored in the same run:

* CartPole-v1 with a policy whose episodes last about 40 steps: `env.rollout(policy, task=...)` per
  episode against the plain gymnasium loop (`reset(seed)`, `step` until done) on one made env;
* a one-step reasoning-gym task (basic_arithmetic): `env.rollout("reference", task=...)` against
  calling the dataset for the entry and its scorer on the gold answer directly. Both sides play the
  same indexes, each from a fresh dataset or environment, so neither is helped by a cache.

Each Nenyax side runs three ways: nobody observing (the default), one trivial observer of episode
ends (`on_episode_ended` counting, as a progress bar does), and one observing every event (each
step's `StepTaken` built and delivered). Against sources older than the event stream the observed
rows print n/a.

Prints per-episode microseconds and the ratio to the raw loop (goal <= 1.3), and each observed row's
ratio to the unobserved one. Run from the repository root with nenyax-core, nenyax-adapters-gymnasium
and nenyax-adapters-reasoning-gym installed:

    python bench/episode_cost.py [--episodes 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import reasoning_gym
from _report import figure

from nenyax.core import load

try:
    from nenyax.core.contract.events import Observer
except ImportError:  # sources from before the event stream: only the unobserved rows run
    Observer = None


def _observers(kind: str) -> dict:
    """The `rollout` keywords of one way to run: nobody observing, episode ends, or every event."""
    if kind == "none":
        return {}
    if Observer is None:
        return {"skip": True}

    class Ends(Observer):
        def __init__(self):
            self.ended = 0

        def on_episode_ended(self, event):
            self.ended += 1

    class Everything(Ends):
        def __init__(self):
            super().__init__()
            self.events = 0

        def on_episode_started(self, event):
            self.events += 1

        def on_step(self, event):
            self.events += 1

        def on_model_call_started(self, event):
            self.events += 1

        def on_model_call_ended(self, event):
            self.events += 1

        def on_tool_call(self, event):
            self.events += 1

    return {"observers": [Ends() if kind == "ends" else Everything()]}


WAYS = ("none", "ends", "all")


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


def cartpole_nenyax(seeds: range, way: str = "none") -> tuple[float | None, float]:
    env = load("gymnasium:CartPole-v1")
    kw = _observers(way)
    if kw.pop("skip", False):
        return None, 0.0
    env.rollout(policy, task="CartPole-v1/seed/0")  # the env pool is warm, as the raw loop's one env is
    started = time.perf_counter()
    steps = 0
    for seed in seeds:
        steps += len(env.rollout(policy, task=f"CartPole-v1/seed/{seed}", **kw).steps)
    return time.perf_counter() - started, steps / len(seeds)


def arithmetic_raw(indexes: range, size: int) -> float:
    data = reasoning_gym.create_dataset("basic_arithmetic", seed=42, size=size)
    started = time.perf_counter()
    for index in indexes:
        entry = data[index]
        data.score_answer(entry["answer"], entry)
    return time.perf_counter() - started


def arithmetic_nenyax(indexes: range, size: int, way: str = "none") -> float | None:
    env = load(f"reasoning_gym:basic_arithmetic?size={size}&seed=42")
    kw = _observers(way)
    if kw.pop("skip", False):
        return None
    started = time.perf_counter()
    for index in indexes:
        traj = env.rollout("reference", task=f"basic_arithmetic/42/{index}", **kw)
        assert traj.score == 1.0
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.episodes
    size = n * args.repeats
    rows: dict[str, tuple[list[float], dict[str, list[float | None]]]] = {
        case: ([], {way: [] for way in WAYS}) for case in ("cartpole", "arithmetic")
    }
    length = 0.0
    for repeat in range(args.repeats):
        seeds = range(repeat * n, (repeat + 1) * n)
        rows["cartpole"][0].append(cartpole_raw(seeds))
        for way in WAYS:  # interleaved with the anchor, so load on the box moves every row alike
            took, steps = cartpole_nenyax(seeds, way)
            rows["cartpole"][1][way].append(took)
            length = steps or length
        # The same indexes on both sides (an entry's generation time varies several-fold with its numbers,
        # so different indexes made the ratio swing from 1.4 to 2.7); each side makes a fresh dataset or
        # environment, so no entry comes from a cache.
        indexes = range(repeat * n, (repeat + 1) * n)
        rows["arithmetic"][0].append(arithmetic_raw(indexes, size))
        for way in WAYS:
            rows["arithmetic"][1][way].append(arithmetic_nenyax(indexes, size, way))
    print(f"{n} episodes per side, median of {args.repeats}; CartPole episodes average {length:.1f} steps")
    print(f"{'case':<12} {'observers':<10} {'raw us/ep':>10} {'nenyax us/ep':>13} {'ratio':>7} {'vs none':>8}")
    for case, (raw, ours) in rows.items():
        raw_us = statistics.median(raw) / n * 1e6
        plain_us = statistics.median(ours["none"]) / n * 1e6  # type: ignore[type-var]
        for way, times in ours.items():
            if None in times:
                print(f"{case:<12} {way:<10} {raw_us:>10.1f} {'n/a':>13}")
                continue
            us = statistics.median(times) / n * 1e6  # type: ignore[type-var]
            print(f"{case:<12} {way:<10} {raw_us:>10.1f} {us:>13.1f} {us / raw_us:>7.2f} {us / plain_us:>8.3f}")
            if way == "none":
                said = f"{us:.1f} vs {raw_us:.1f} us per episode, {n} episodes, median of {args.repeats}"
                figure(f"P1e.{case}", us / raw_us, goal=1.3, detail=said)


if __name__ == "__main__":
    main()
