"""Small real gymnasium envs (unregistered classes) that exercise every space type the codec supports.

Loaded by the tests as ``gymnasium:nenyax_test_envs:<Class>`` (the tests put this folder on sys.path).
Why not registered envs: none of gymnasium's own envs has a Dict, MultiBinary or Text space, a Graph
observation, or fails on reset or at a chosen step, which is what these tests need to reach.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

EVERY_SPACE = spaces.Dict(
    {
        "choice": spaces.Discrete(3, start=1),
        "push": spaces.Box(-1.0, 1.0, (2,), np.float32),
        "dials": spaces.MultiDiscrete([2, 4]),
        "switches": spaces.MultiBinary(3),
        "pair": spaces.Tuple((spaces.Discrete(2), spaces.Text(4, charset="abc", min_length=0))),
    }
)


class EverySpaceEnv(gym.Env[Any, Any]):
    """Dict action and observation spaces made of every supported space type; rewards matching the target.

    No registered env combines these spaces, so the codec's handling of each is proven here.
    """

    def __init__(self, length: int = 3) -> None:
        self.observation_space = EVERY_SPACE
        self.action_space = EVERY_SPACE
        self.length = length
        self._t = 0
        self._target: Any = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        self._t = 0
        self._target = self.observation_space.sample()
        return self._target, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        assert self.action_space.contains(action), action
        self._t += 1
        reward = float(action["choice"] == self._target["choice"])
        self._target = self.observation_space.sample()
        return self._target, reward, self._t >= self.length, False, {"t": np.int64(self._t), "tag": (1, 2)}


class TupleTextEnv(gym.Env[Any, Any]):
    """A Tuple observation and a plain Text action: the reply is taken as the text itself (no registered env
    has a Text action space)."""

    def __init__(self) -> None:
        self.observation_space = spaces.Tuple((spaces.Discrete(5), spaces.Box(0, 10, (), np.int64)))
        self.action_space = spaces.Text(6, charset="xyz", min_length=1)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return (int(self.np_random.integers(5)), np.array(3, dtype=np.int64)), {}

    def step(self, action: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return (0, np.array(len(action), dtype=np.int64)), float(len(action)), True, False, {}


class OffsetChoiceEnv(gym.Env[Any, Any]):
    """A Discrete action space that starts at -1 and has no action names (the codec's integer replies)."""

    def __init__(self) -> None:
        self.observation_space = spaces.Discrete(2)
        self.action_space = spaces.Discrete(3, start=-1)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return 0, {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return 1, float(action), True, False, {}


class BrokenResetEnv(gym.Env[Any, Any]):
    """Makes fine, raises on every reset: the episode must end env_error, not crash (no real env fails on cue)."""

    def __init__(self) -> None:
        self.observation_space = spaces.Discrete(2)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        raise RuntimeError("the simulator failed to start")

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return 0, 0.0, True, False, {}


class BrokenStepEnv(gym.Env[Any, Any]):
    """Raises on its third step: the steps before it must be kept (no real env fails on cue)."""

    def __init__(self) -> None:
        self.observation_space = spaces.Discrete(2)
        self.action_space = spaces.Discrete(2)
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self._t = 0
        return 0, {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._t += 1
        if self._t == 3:
            raise RuntimeError("physics exploded")
        return 1, 1.0, False, False, {}


class GraphEnv(gym.Env[Any, Any]):
    """A Graph observation space, which the text codec does not render (no registered env has one)."""

    def __init__(self) -> None:
        self.observation_space = spaces.Graph(node_space=spaces.Discrete(3), edge_space=None)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.observation_space.seed(seed)
        return self.observation_space.sample(num_nodes=2), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return self.observation_space.sample(num_nodes=2), 1.0, True, False, {}


OBSERVATION_SPACES = {
    "box": spaces.Box(-1.0, 1.0, (3,), np.float32),
    "discrete": spaces.Discrete(5, start=2),
    "multidiscrete": spaces.MultiDiscrete([3, 4]),
    "multibinary": spaces.MultiBinary(4),
    "dict": spaces.Dict({"pos": spaces.Box(0, 9, (2,), np.int64), "flag": spaces.Discrete(2)}),
    "tuple": spaces.Tuple((spaces.Discrete(3), spaces.Box(-2.0, 2.0, (2,), np.float64))),
    "text": spaces.Text(6, charset="abc", min_length=1),
    # An Atari frame's shape and dtype (ALE is not installed in the test envs).
    "image": spaces.Box(0, 255, (210, 160, 3), np.uint8),
    "image_dict": spaces.Dict({"image": spaces.Box(0, 255, (64, 64, 3), np.uint8), "mission": spaces.Text(12)}),
}


class ObservationEnv(gym.Env[Any, Any]):
    """One observation space of each kind (`kind` names it in OBSERVATION_SPACES), sampled each step; Discrete(2)
    actions, `length` steps. No registered env has Dict, MultiBinary or Text observations, or an Atari-sized frame
    without ALE."""

    def __init__(self, kind: str = "box", length: int = 3) -> None:
        self.observation_space = OBSERVATION_SPACES[kind]
        self.action_space = spaces.Discrete(2)
        self.length = length
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        self._t = 0
        return self.observation_space.sample(), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._t += 1
        return self.observation_space.sample(), float(action), self._t >= self.length, False, {}
