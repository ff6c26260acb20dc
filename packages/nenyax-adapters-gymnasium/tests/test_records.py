"""Every observation type a gymnasium space produces is recorded as JSON: steps serialise to JSONL and read back
equal, whatever ended the episode; large arrays are recorded compactly; `observations=` keeps all, the last or none."""

import json

import numpy as np
import pytest
from nenyax_test_envs import OBSERVATION_SPACES

from nenyax.adapters.gymnasium import arrays
from nenyax.core import BadURIError, JsonlSink, Status, load, read_trajectories

KINDS = sorted(OBSERVATION_SPACES)
TEXT_KINDS = [k for k in KINDS if not k.startswith("image")]  # the codec refuses images


def _uri(kind, query=""):
    return f"gymnasium:nenyax_test_envs:ObservationEnv?kind={kind}{query}"


def _round_trip(traj, tmp_path):
    for step in traj.steps:
        json.dumps(step.observation)  # the standard library: numpy values would raise here
        json.dumps(step.info)
    path = tmp_path / "t.jsonl"
    with JsonlSink(path) as sink:
        sink.write(traj)
    assert list(read_trajectories(path)) == [traj]


@pytest.mark.parametrize("kind", KINDS)
def test_every_observation_type_serialises_and_reads_back(kind, tmp_path):
    traj = load(_uri(kind)).rollout(lambda obs: 1, seed=4)
    assert traj.status is Status.OK and len(traj.steps) == 3
    _round_trip(traj, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_a_rejected_action_records_the_observation_as_json(kind, tmp_path):
    traj = load(_uri(kind)).rollout(lambda obs: 7, seed=4)
    assert traj.status is Status.POLICY_ERROR and traj.steps[-1].action == 7
    _round_trip(traj, tmp_path)


@pytest.mark.parametrize("kind", TEXT_KINDS)
def test_an_unparseable_reply_records_the_observation_as_json(kind, chat, tmp_path):
    traj = load(_uri(kind, "&retries=1")).rollout(chat("no idea"), seed=4)
    assert traj.status is Status.POLICY_ERROR and [s.action for s in traj.steps] == [None, None]
    _round_trip(traj, tmp_path)


def test_cartpole_unparseable_reply_is_recorded_as_lists(chat):
    traj = load("gymnasium:CartPole-v1?retries=0").rollout(chat("I would rather not move."))
    observation = traj.steps[-1].observation
    assert type(observation) is list and all(type(x) is float for x in observation)


def test_large_arrays_are_recorded_as_dtype_shape_and_bytes():
    env = load(_uri("image"))
    native = env.session(seed=4).observation
    traj = env.rollout(lambda obs: 0, seed=4)
    record = traj.steps[0].observation
    assert set(record) == {"__ndarray__"} and record["__ndarray__"]["shape"] == [210, 160, 3]
    assert record["__ndarray__"]["dtype"] == "uint8"
    np.testing.assert_array_equal(arrays.decode(record), native)
    assert len(json.dumps(record)) < 1.4 * native.nbytes  # base64: 4/3 of the raw bytes
    nested = load(_uri("image_dict")).rollout(lambda obs: 0).steps[0].observation
    assert set(nested["image"]) == {"__ndarray__"} and isinstance(nested["mission"], str)
    small = load(_uri("box")).rollout(lambda obs: 0).steps[0].observation
    assert type(small) is list  # arrays the codec can show stay numbers


def test_compact_arrays_round_trip_every_dtype():
    for dtype in (np.uint8, np.int16, np.float32, np.float64, np.bool_):
        array = (np.arange(2000) % 7).astype(dtype).reshape(20, 100)
        back = arrays.decode(json.loads(json.dumps(arrays.encode(array))))
        assert back.dtype == array.dtype and back.shape == array.shape
        np.testing.assert_array_equal(back, array)
    big_endian = np.arange(1500, dtype=">f4")
    np.testing.assert_array_equal(arrays.decode(arrays.encode(big_endian)), big_endian)
    with pytest.raises(ValueError, match="not a compact array record"):
        arrays.decode({"__ndarray__": {"dtype": "uint8", "shape": [3], "data": "!!"}})


def test_observations_option_keeps_all_the_last_or_none():
    every = load(_uri("image", "&length=5")).rollout(lambda obs: 0, seed=1)
    last = load(_uri("image", "&length=5&observations=last")).rollout(lambda obs: 0, seed=1)
    none = load(_uri("image", "&length=5&observations=none")).rollout(lambda obs: 0, seed=1)
    assert all(s.observation is not None for s in every.steps)
    assert [s.observation for s in last.steps] == [None] * 4 + [every.steps[-1].observation]
    assert [s.observation for s in none.steps] == [None] * 5
    assert [s.reward for s in none.steps] == [s.reward for s in every.steps]
    assert load(_uri("box", "&observations=last")).manifest.extra["observations"] == "last"


@pytest.mark.parametrize(
    ("query", "fragment"),
    [("observations=some", "observations must be one of all, last, none"), ("retries=-1", "from 0 to 20")],
)
def test_bad_recording_options_are_one_sentence(query, fragment):
    with pytest.raises(BadURIError, match=fragment):
        load(f"gymnasium:CartPole-v1?{query}")
