"""Names of the discrete actions of gymnasium's own environments, from their documentation.

Gymnasium has no generic ``get_action_meanings``; a chat model plays much better when it can read
(and answer with) "left" instead of guessing what action 0 does.
"""

from __future__ import annotations

from typing import Any

ACTION_MEANINGS: dict[str, tuple[str, ...]] = {
    "CartPoleEnv": ("push_left", "push_right"),
    "MountainCarEnv": ("accelerate_left", "coast", "accelerate_right"),
    "AcrobotEnv": ("torque_minus_1", "torque_0", "torque_plus_1"),
    "LunarLander": ("noop", "fire_left_engine", "fire_main_engine", "fire_right_engine"),
    "FrozenLakeEnv": ("left", "down", "right", "up"),
    "CliffWalkingEnv": ("up", "right", "down", "left"),
    "TaxiEnv": ("south", "north", "east", "west", "pickup", "dropoff"),
    "BlackjackEnv": ("stick", "hit"),
}
"""Action names by the env class's name, in action order (only for Discrete action spaces)."""


def action_meanings(unwrapped: Any, n: int) -> tuple[str, ...] | None:
    """The action names of `unwrapped`'s Discrete(n) action space, when known."""
    # LunarLander's continuous variant shares the class but has a Box action space: n guards it.
    names = ACTION_MEANINGS.get(type(unwrapped).__name__)
    return names if names is not None and len(names) == n else None
