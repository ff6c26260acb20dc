"""Which env a session steps: beneath gymnasium's bookkeeping wrappers where that is safe."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker, TimeLimit

_BOOKKEEPING = (TimeLimit, OrderEnforcing, PassiveEnvChecker)


def bookkeeping_free(env: gym.Env[Any, Any]) -> tuple[gym.Env[Any, Any], int | None]:
    """The env to step and the time limit the session must apply itself.

    ``gymnasium.make`` wraps every env in TimeLimit, OrderEnforcing and PassiveEnvChecker. For
    gymnasium's own envs (known to pass the checker) Nenyax steps the env beneath them and counts
    the time limit itself, with the same truncation rule: three fewer Python calls per step, about
    a sixth of CartPole's step time. Any other wrapper (a registered ``additional_wrappers``, a
    render wrapper) or a third-party env keeps the full stack.
    """
    limit = None
    inner = env
    while isinstance(inner, gym.Wrapper):
        if not isinstance(inner, _BOOKKEEPING):
            return env, None
        if isinstance(inner, TimeLimit):
            limit = inner._max_episode_steps
        inner = inner.env
    if not type(inner).__module__.startswith("gymnasium.envs."):
        return env, None
    return inner, limit
