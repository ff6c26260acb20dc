from unittest.mock import ANY

import numpy as np
import pytest
from gymnasium import spaces

from nenyax.adapters.gymnasium.reference import plan, table_of
from nenyax.adapters.gymnasium.spaces import coerce_action, from_json, jsonable, null_action, to_json
from nenyax.core import PolicyFailure

FLAT = [
    spaces.Discrete(5, start=2),
    spaces.Box(-2.0, 3.0, (3, 2), np.float32),
    spaces.Box(0, 255, (4,), np.uint8),
    spaces.MultiDiscrete([3, 5, 2]),
    spaces.MultiBinary(4),
    spaces.Text(8, min_length=2),
]
NESTED = [
    spaces.Tuple((spaces.Discrete(3), spaces.Box(0, 1, (2,)))),
    spaces.Dict({"a": spaces.MultiBinary(2), "b": spaces.Tuple((spaces.Text(3), spaces.Discrete(2)))}),
]


@pytest.mark.parametrize("space", FLAT, ids=str)
def test_flat_spaces_use_their_own_json_layout(space):
    # Arrays take core's encoding (their numbers as the space's own layout, with dtype and shape); the rest, the space's.
    for seed in range(5):
        space.seed(seed)
        value = space.sample()
        mine = to_json(space, value)
        if isinstance(value, np.ndarray):
            assert mine == {"__ndarray__": str(value.dtype), "values": ANY}
            assert mine["values"] == space.to_jsonable([value])[0]
        else:
            assert mine == space.to_jsonable([value])[0]
        back = from_json(space, to_json(space, value))
        assert space.contains(back)
        assert to_json(space, back) == to_json(space, value)


@pytest.mark.parametrize("space", FLAT + NESTED, ids=str)
def test_json_round_trip_is_exact_and_json_native(space):
    import orjson

    for seed in range(5):
        space.seed(seed)
        value = space.sample()
        data = to_json(space, value)
        assert orjson.loads(orjson.dumps(data)) == data  # no tuples, numpy or floats that change on the way
        back = from_json(space, data)
        assert space.contains(back)
        assert to_json(space, back) == data


@pytest.mark.parametrize("space", FLAT + NESTED, ids=str)
def test_null_action_is_in_the_space(space):
    assert space.contains(null_action(space))


def test_null_action_values():
    assert null_action(spaces.Discrete(3, start=-1)) == -1
    assert null_action(spaces.Box(1.0, 2.0, (2,))).tolist() == [1.0, 1.0]  # zero is outside: the nearest bound
    assert null_action(spaces.Box(-1.0, 1.0, (2,))).tolist() == [0.0, 0.0]
    assert null_action(spaces.MultiDiscrete([3, 3], start=[1, 2])).tolist() == [1, 2]
    assert null_action(spaces.Text(5, min_length=2, charset="xy")) == "xx"


def test_coerce_accepts_native_or_json_and_refuses_the_rest():
    box = spaces.Box(-1.0, 1.0, (2,), np.float32)
    native, data = coerce_action(box, [0.5, -0.5])
    assert isinstance(native, np.ndarray)
    assert native.dtype == np.float32
    assert data == {"__ndarray__": "float32", "values": [0.5, -0.5]}
    assert coerce_action(box, data)[1] == data  # a recorded action replays
    assert coerce_action(spaces.Discrete(2), np.int64(1)) == (1, 1)
    for space, bad in ((spaces.Discrete(2), True), (spaces.Discrete(2), 2), (box, [2.0, 0.0]), (box, "left")):
        with pytest.raises(PolicyFailure, match="is not in the action space"):
            coerce_action(space, bad)


def test_info_values_become_json():
    info = {"mask": np.array([1, 0], dtype=np.int8), "p": np.float64(0.5), "pair": (1, 2), 3: float("inf")}
    mask = {"__ndarray__": "int8", "values": [1, 0]}  # core's encoding: dtype kept
    assert jsonable(info) == {"mask": mask, "p": 0.5, "pair": [1, 2], "3": "inf"}


def test_policy_iteration_finds_the_shortest_path():
    import gymnasium as gym

    env = gym.make("FrozenLake-v1", is_slippery=False)
    found = plan(table_of(env), 16, 4)
    state, steps = 0, 0
    while state != 15 and steps < 20:
        state = table_of(env)[state][found.action(state)][0][1]
        steps += 1
    assert steps == 6
    assert not found.stochastic
    assert plan(table_of(gym.make("FrozenLake-v1")), 16, 4).stochastic
    assert table_of(gym.make("CartPole-v1")) is None
