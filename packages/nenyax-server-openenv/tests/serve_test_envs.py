"""Small real gymnasium envs with one deliberate flaw each, served through the gymnasium adapter."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class CrashOnSecondStep(gym.Env[Any, Any]):
    """Raises inside step() on the second action: an environment failure mid-episode."""

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self._t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._t += 1
        if self._t == 2:
            raise RuntimeError("the simulator lost its state")
        return np.zeros(2, np.float32), 1.0, False, False, {}


class BusyStep(CrashOnSecondStep):
    """Spends about 15 ms of CPU in every step (and never crashes): a slow synchronous environment."""

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        import time

        self._t += 1
        started = time.thread_time()
        while time.thread_time() - started < 0.015:
            pass
        return np.zeros(2, np.float32), 1.0, self._t >= 5, False, {}
