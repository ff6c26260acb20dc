"""`/schema`'s action schemas from Gymnasium-style spaces: the real ones described, look-alikes left blank."""

import gymnasium as gym
import jsonschema
import numpy as np
import pytest

from nenyax.server.openenv.schemas import NATIVE, action_schema, space_schema


def test_real_spaces_are_described():
    assert space_schema(gym.spaces.Discrete(3, start=1)) == {"type": "integer", "minimum": 1, "maximum": 3}
    box = space_schema(gym.spaces.Box(low=0.0, high=1.0, shape=(2,), dtype=np.float32))
    assert box == {
        "type": "array",
        "items": {"type": "number", "minimum": 0.0, "maximum": 1.0},
        "minItems": 2,
        "maxItems": 2,
    }


def test_a_box_whose_bounds_differ_per_element_is_bounded_element_by_element():
    box = gym.spaces.Box(low=np.array([-1.0, 0.0]), high=np.array([1.0, 2.0]), dtype=np.float32)
    assert space_schema(box) == {
        "type": "array",
        "prefixItems": [
            {"type": "number", "minimum": -1.0, "maximum": 1.0},
            {"type": "number", "minimum": 0.0, "maximum": 2.0},
        ],
        "minItems": 2,
        "maxItems": 2,
    }


def test_an_env_taking_native_or_text_actions_publishes_a_union_of_whole_models():
    schema = action_schema(NATIVE, True, {"type": "integer", "minimum": 0, "maximum": 1}, "", "Cart")
    validator = jsonschema.Draft202012Validator(schema)
    first = schema["$defs"][schema["anyOf"][0]["$ref"].rsplit("/", 1)[1]]
    # Each alternative is an action by itself: a client building from the first one it meets sends a valid action.
    assert first["required"] == ["action"]
    assert validator.is_valid({"action": 0})
    assert validator.is_valid({"message": "<action>1</action>"})
    assert not validator.is_valid({"action": 0, "message": "x"})  # the server refuses both at once
    assert not validator.is_valid({})


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
