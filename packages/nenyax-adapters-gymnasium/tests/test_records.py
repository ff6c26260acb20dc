"""Every observation type a gymnasium space produces is recorded as JSON: steps serialise to JSONL and read back
equal, whatever ended the episode; arrays in core's encoding (dtype and shape kept, large ones as bytes);
`observations=` keeps all, the last or none."""

import json

import numpy as np
import pytest
from gymnasium import spaces
from nenyax_test_envs import OBSERVATION_SPACES

from nenyax.adapters.gymnasium.spaces import coerce_action
from nenyax.core import BadURIError, JsonlSink, Status, load, read_trajectories
from nenyax.core.contract import arrays

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
    assert traj.status is Status.OK
    assert len(traj.steps) == 3
    _round_trip(traj, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_a_rejected_action_records_the_observation_as_json(kind, tmp_path):
    traj = load(_uri(kind)).rollout(lambda obs: 7, seed=4)
    assert traj.status is Status.POLICY_ERROR
    assert traj.steps[-1].action == 7
    _round_trip(traj, tmp_path)


@pytest.mark.parametrize("kind", TEXT_KINDS)
def test_an_unparseable_reply_records_the_observation_as_json(kind, chat, tmp_path):
    traj = load(_uri(kind, "&retries=1")).rollout(chat("no idea"), seed=4)
    assert traj.status is Status.POLICY_ERROR
    assert [s.action for s in traj.steps] == [None, None]
    _round_trip(traj, tmp_path)


def test_cartpole_unparseable_reply_is_recorded_with_its_numbers_and_dtype(chat):
    traj = load("gymnasium:CartPole-v1?retries=0").rollout(chat("I would rather not move."))
    recorded = traj.steps[-1].observation
    assert recorded["__ndarray__"] == "float32"
    assert len(recorded["values"]) == 4
    assert type(recorded["values"]) is list
    assert all(type(x) is float for x in recorded["values"])


def test_large_arrays_are_recorded_as_dtype_shape_and_bytes():
    env = load(_uri("image"))
    native = env.session(seed=4).observation
    traj = env.rollout(lambda obs: 0, seed=4)
    record = traj.steps[0].observation
    assert set(record) == {"__ndarray__", "shape", "data"}
    assert record["shape"] == [210, 160, 3]
    assert record["__ndarray__"] == "uint8"
    np.testing.assert_array_equal(arrays.decode(record), native)
    assert len(json.dumps(record)) < 1.4 * native.nbytes  # base64: 4/3 of the raw bytes
    nested = load(_uri("image_dict")).rollout(lambda obs: 0).steps[0].observation
    assert nested["image"]["__ndarray__"] == "uint8"
    assert isinstance(nested["mission"], str)


def test_small_arrays_keep_their_dtype_and_shape_too():
    env = load(_uri("box"))
    native = env.session(seed=4).observation
    small = env.rollout(lambda obs: 0, seed=4).steps[0].observation
    assert small["values"] == native.tolist()  # numbers a person reads in a replay
    back = arrays.decode(small)
    assert back.dtype == native.dtype
    assert back.shape == native.shape
    np.testing.assert_array_equal(back, native)


def test_records_the_adapter_wrote_before_core_encoded_arrays_still_read(tmp_path):
    # A step as nenyax-adapters-gymnasium 0.1 recorded a 2000-number observation (its own `__ndarray__` form).
    old = {"__ndarray__": {"dtype": "float32", "shape": [20, 100], "data": _b64(np.arange(2000, dtype="<f4"))}}
    np.testing.assert_array_equal(arrays.decode(old), np.arange(2000, dtype=np.float32).reshape(20, 100))
    box = spaces.Box(0.0, 3000.0, (20, 100), np.float32)
    native, again = coerce_action(box, old)  # a recorded action replays through the space as it did
    assert native.dtype == np.float32
    assert again == arrays.encode(native)
    assert "data" in again


def _b64(array):
    import base64

    return base64.b64encode(array.tobytes()).decode()


def test_observations_option_keeps_all_the_ends_the_last_or_none():
    every = load(_uri("image", "&length=5&observations=all")).rollout(lambda obs: 0, seed=1)
    ends = load(_uri("image", "&length=5&observations=ends")).rollout(lambda obs: 0, seed=1)
    assert [s.observation for s in ends.steps] == [
        every.steps[0].observation,
        None,
        None,
        None,
        every.steps[-1].observation,
    ]
    assert ends.final_observation == every.final_observation
    last = load(_uri("image", "&length=5&observations=last")).rollout(lambda obs: 0, seed=1)
    none = load(_uri("image", "&length=5&observations=none")).rollout(lambda obs: 0, seed=1)
    assert all(s.observation is not None for s in every.steps)
    assert [s.observation for s in last.steps] == [None] * 4 + [every.steps[-1].observation]
    assert [s.observation for s in none.steps] == [None] * 5
    assert every.final_observation is not None
    assert last.final_observation == every.final_observation
    assert none.final_observation is None  # an image episode recorded with `none` keeps no frame at all
    assert [s.reward for s in none.steps] == [s.reward for s in every.steps]
    assert load(_uri("box", "&observations=last")).manifest.extra["observations"] == "last"


def test_an_image_env_keeps_its_first_and_last_frames_by_default_and_others_keep_all():
    # Every frame of two random Pong episodes came to 249 MB: by default an image env keeps where it began and ended.
    image = load(_uri("image", "&length=5"))
    assert image.manifest.extra["observations"] == "ends"
    kept = [s.observation is not None for s in image.rollout(lambda obs: 0, seed=1).steps]
    assert kept == [True, False, False, False, True]
    assert load(_uri("image_dict", "&length=5")).manifest.extra["observations"] == "ends"
    for small in ("box", "dict", "multibinary"):
        env = load(_uri(small, "&length=5"))
        assert env.manifest.extra["observations"] == "all"
        assert all(s.observation is not None for s in env.rollout(lambda obs: 0, seed=1).steps)


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("observations=some", "observations in .* must be one of auto, all, ends, last, none"),
        ("retries=-1", "from 0 to 20"),
    ],
)
def test_bad_recording_options_are_one_sentence(query, fragment):
    with pytest.raises(BadURIError, match=fragment):
        load(f"gymnasium:CartPole-v1?{query}")


def test_the_observation_an_episode_ended_on_is_recorded(tmp_path):
    env = load("gymnasium:FrozenLake-v1?is_slippery=false")
    traj = env.rollout("reference", seed=0)
    assert traj.status is Status.OK
    assert traj.judgment.score == 1.0
    assert traj.final_observation == 15  # the goal of the 4x4 map, where no step was chosen from
    assert traj.steps[-1].observation != 15
    with JsonlSink(tmp_path / "t.jsonl") as sink:
        sink.write(traj)
    assert next(iter(read_trajectories(tmp_path / "t.jsonl"))).final_observation == 15
