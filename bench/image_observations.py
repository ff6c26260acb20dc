"""Bytes per step and peak memory of an episode with Atari-sized observations (210x160x3 uint8).

Anchor: the raw observation itself (100,800 bytes), and the plain gymnasium loop keeping every
observation as a numpy copy. Nenyax is measured per `observations=` mode (all, last, none), and beside it
the record as it was before compact arrays (nested lists from ``ndarray.tolist()``). ALE is not
installed here, so the env is a real gymnasium env with an Atari frame's observation space.

    python bench/image_observations.py [--steps 200]
"""

from __future__ import annotations

import argparse
import json
import tracemalloc
from typing import Any

import gymnasium as gym
import numpy as np
from _report import figure
from gymnasium import spaces

from nenyax.core import load, serde

SHAPE = (210, 160, 3)


class AtariSizedEnv(gym.Env[Any, Any]):
    """Random 210x160x3 uint8 frames, Discrete(6) actions, `length` steps."""

    def __init__(self, length: int = 200) -> None:
        self.observation_space = spaces.Box(0, 255, SHAPE, np.uint8)
        self.action_space = spaces.Discrete(6)
        self.length, self._t = length, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self._t = 0
        return self.np_random.integers(0, 256, SHAPE, dtype=np.uint8), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._t += 1
        frame = self.np_random.integers(0, 256, SHAPE, dtype=np.uint8)
        return frame, 0.0, False, self._t >= self.length, {}


def _peak(fn: Any) -> tuple[Any, int]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    out = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, peak


def main() -> None:
    """Print one row per way of recording the episode."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    n = args.steps
    raw = int(np.prod(SHAPE))

    def raw_loop() -> list[np.ndarray]:
        env = AtariSizedEnv(n)
        obs, _ = env.reset(seed=0)
        kept, done = [], False
        while not done:
            kept.append(obs.copy())
            obs, _, terminated, truncated, _ = env.step(0)
            done = terminated or truncated
        return kept

    frames, raw_peak = _peak(raw_loop)
    print(f"raw observation {raw:,} B; raw loop keeping {n} frames: peak {raw_peak / 1e6:.1f} MB")
    _, lists_peak = _peak(lambda: [f.tolist() for f in frames])
    lists_bytes = len(json.dumps(frames[0].tolist(), separators=(",", ":")))
    print(
        f"{'before (nested lists)':>24}: {lists_bytes:>9,} B/step in JSONL ({lists_bytes / raw:.2f}x raw), "
        f"peak {lists_peak / 1e6:7.1f} MB for {n} steps ({lists_peak / raw_peak:.2f}x the raw loop)"
    )
    for mode in ("all", "last", "none"):
        env = load(f"gymnasium:__main__:AtariSizedEnv?length={n}&observations={mode}")
        traj, peak = _peak(lambda env=env: env.rollout(lambda obs: 0, seed=0))
        assert len(traj.steps) == n
        per_step = len(serde.dumps(traj)) / n
        print(
            f"{'observations=' + mode:>24}: {per_step:>9,.0f} B/step in JSONL ({per_step / raw:.2f}x raw), "
            f"peak {peak / 1e6:7.1f} MB for {n} steps ({peak / raw_peak:.2f}x the raw loop)"
        )
        if mode == "all":
            said = f"{per_step:,.0f} vs {raw:,} raw bytes per step; peak {peak / raw_peak:.2f}x the raw loop's"
            figure("P9", per_step / raw, goal=1.05, detail=said)


if __name__ == "__main__":
    main()
