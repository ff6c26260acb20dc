"""`/schema`'s action schemas from Gymnasium-style spaces: the real ones described, look-alikes left blank."""

import gymnasium as gym
import numpy as np
import pytest

from nenyax.server.openenv.schemas import space_schema


def test_real_spaces_are_described():
    assert space_schema(gym.spaces.Discrete(3, start=1)) == {"type": "integer", "minimum": 1, "maximum": 3}
    box = space_schema(gym.spaces.Box(low=0.0, high=1.0, shape=(2,), dtype=np.float32))
    assert box == {
        "type": "array",
        "items": {"type": "number", "minimum": 0.0, "maximum": 1.0},
        "minItems": 2,
        "maxItems": 2,
    }


class Discrete:
    """Named like Gymnasium's Discrete, without its attributes."""


class Box:
    """Named like Gymnasium's Box, with bounds that are not numbers."""

    dtype = np.dtype("float32")
    low, high, shape = "low", "high", (2,)


class Text:
    """Named like Gymnasium's Text, with an infinite length."""

    min_length, max_length = 0, float("inf")


@pytest.mark.parametrize("space", [Discrete(), Box(), Text()], ids=["no attributes", "bounds not numbers", "infinite"])
def test_a_look_alike_shaped_otherwise_gets_no_schema_rather_than_a_wrong_one(space):
    assert space_schema(space) == {}
