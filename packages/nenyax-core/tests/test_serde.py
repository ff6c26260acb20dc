"""Every contract type round-trips through JSON unchanged (property tests)."""

import math
import subprocess
import sys

import attrs
import numpy as np  # optional for nenyax-core, in its test group for the array encoding
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nenyax.core.contract import arrays, serde
from nenyax.core.contract.manifest import Capabilities, Manifest, Mode, Split
from nenyax.core.contract.schema import SchemaVersion
from nenyax.core.contract.trajectory import (
    SCHEMA_VERSION,
    Group,
    Judgment,
    ModelCall,
    PolicyInfo,
    Status,
    Step,
    Tier,
    Timing,
    ToolCall,
    Trajectory,
)
from nenyax.core.errors import NenyaxError
from nenyax.core.tiers.measure import TierOutcome, TierReport, TierResult

# The contract modules use postponed annotations; resolve them so hypothesis can infer fields.
for _cls in (Capabilities, Split, Manifest, Judgment, Step, ModelCall, PolicyInfo, Timing, Trajectory, Group):
    attrs.resolve_types(_cls)
for _cls in (TierResult, TierReport):
    attrs.resolve_types(_cls)

text = st.text(max_size=20)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
# JSON-native values only: what observations, actions and info hold once an adapter encodes them.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | finite | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
json_dicts = st.dictionaries(text, json_values, max_size=3)
int_tuples = st.lists(st.integers(0, 2**31), max_size=5).map(tuple)

capabilities = st.builds(Capabilities, max_turns=st.none() | st.integers(1, 10_000))
manifests = st.builds(
    Manifest,
    uri=text.map(lambda t: f"fmt:{t}"),
    mode=st.sampled_from(Mode),
    splits=st.lists(st.builds(Split, name=text, count=st.none() | st.integers(0, 10**6)), max_size=3).map(tuple),
    tools=st.lists(text, max_size=3).map(tuple),
    score_range=st.none() | st.tuples(finite, finite),
    extra=json_dicts,
    capabilities=capabilities,
)
judgments = st.builds(
    Judgment, score=finite, passed=st.none() | st.booleans(), components=st.dictionaries(text, finite, max_size=3)
)
steps = st.builds(
    Step, observation=json_values, action=json_values, reward=finite, info=json_dicts, text=st.none() | text
)
model_calls = st.builds(
    ModelCall,
    messages=st.lists(json_dicts, max_size=2).map(tuple),
    response=json_dicts,
    params=json_dicts,
    tools=st.lists(json_dicts, max_size=2).map(tuple),
    prompt_token_ids=st.none() | int_tuples,
    completion_token_ids=st.none() | int_tuples,
    logprobs=st.none() | st.lists(finite, max_size=5).map(tuple),
    usage=st.dictionaries(text, st.integers(0, 10**6), max_size=3),
    started=finite,
    duration_s=finite,
)
tool_calls = st.builds(
    ToolCall,
    name=text,
    arguments=json_values,
    result=json_values,
    error=st.none() | text,
    started=finite,
    duration_s=finite,
    step=st.none() | st.integers(0, 1000),
    model_call_id=st.none() | text,
)
trajectories = st.builds(
    Trajectory,
    mode=st.sampled_from(Mode),
    task_id=st.none() | text,
    seed=st.none() | st.integers(0, 2**63),
    policy=st.builds(PolicyInfo),
    status=st.sampled_from(Status),
    judgment=st.none() | judgments,
    steps=st.lists(steps, max_size=3).map(tuple),
    model_calls=st.lists(model_calls, max_size=2).map(tuple),
    tool_calls=st.lists(tool_calls, max_size=2).map(tuple),
    messages=st.lists(json_dicts, max_size=2).map(tuple),
    timing=st.none() | st.builds(Timing, started=finite, ended=finite),
)
groups = st.builds(Group, trajectories=st.lists(trajectories, max_size=2).map(tuple))
reports = st.builds(
    TierReport,
    tier=st.sampled_from(Tier),
    results=st.lists(
        st.builds(TierResult, tier=st.sampled_from(Tier), outcome=st.sampled_from(TierOutcome), seconds=finite),
        max_size=3,
    ).map(tuple),
    manifest=st.none() | manifests,
)


@pytest.mark.parametrize(
    ("cls", "strategy"),
    [
        (Manifest, manifests),
        (Capabilities, capabilities),
        (Judgment, judgments),
        (Step, steps),
        (ModelCall, model_calls),
        (ToolCall, tool_calls),
        (Trajectory, trajectories),
        (Group, groups),
        (TierReport, reports),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_round_trip(cls, strategy):
    @given(strategy)
    def round_trips(obj):
        assert serde.loads(serde.dumps(obj), cls) == obj

    round_trips()


def test_tier_is_written_as_its_name():
    report = TierReport(uri="a:b", tier=Tier.AUDITED, results=())
    assert serde.to_data(report)["tier"] == "audited"


def test_judgment_refuses_non_finite_scores():
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="finite"):
            Judgment(score=bad)


def test_newer_major_schema_is_refused_with_a_sentence():
    data = serde.to_data(Judgment(score=1.0))
    newer = SchemaVersion(SCHEMA_VERSION.major + 1, 0)
    record = {**serde.to_data(_trajectory()), "schema_version": str(newer), "judgment": data}
    with pytest.raises(NenyaxError, match=f"schema version {newer}.*this nenyax-core .* reads 1.x only"):
        serde.from_data(record, Trajectory)


def test_unknown_keys_are_kept_not_refused():
    record = {**serde.to_data(_trajectory()), "surprise": 1}
    traj = serde.from_data(record, Trajectory)
    assert traj == _trajectory_with(traj.id)
    assert traj.unknown_fields == {"surprise": 1}
    assert serde.to_data(traj)["surprise"] == 1


def test_the_schema_version_is_written_as_major_dot_minor_and_an_int_reads_as_minor_0():
    assert serde.to_data(_trajectory())["schema_version"] == "1.5"
    assert SchemaVersion.parse(1) == SchemaVersion(1, 0) < SchemaVersion(1, 1) < SchemaVersion(1, 10)
    assert SchemaVersion.parse("1.10") == SchemaVersion(1, 10)
    for bad in (True, -1, "1", "1.2.3", 1.5, None):
        with pytest.raises(ValueError, match=r"MAJOR\.MINOR"):
            SchemaVersion.parse(bad)


def test_manifest_digest_changes_with_content():
    a = Manifest(uri="f:x", format="f", format_version="1", mode=Mode.STEP, name="x")
    b = Manifest(uri="f:x", format="f", format_version="2", mode=Mode.STEP, name="x")
    same = Manifest(uri="f:x", format="f", format_version="1", mode=Mode.STEP, name="x")
    assert serde.digest(a) == serde.digest(same)
    assert serde.digest(a) != serde.digest(b)


def _trajectory_with(id):
    return attrs.evolve(_trajectory(), id=id)


def _trajectory():
    return Trajectory(
        env_uri="f:x",
        manifest_digest="sha256:0",
        mode=Mode.STEP,
        task_id="t",
        seed=1,
        policy=PolicyInfo(kind="null"),
        status=Status.OK,
        judgment=Judgment(score=0.0),
    )


def test_a_record_from_before_duration_s_reads_its_latency_as_the_duration():
    # Written by nenyax-core before model calls had an id, a start and a duration (latency_s then).
    line = (
        b'{"env_uri": "arith:add", "manifest_digest": "d", "mode": "step", "task_id": null, "seed": null,'
        b' "policy": {"kind": "endpoint"}, "status": "ok", "judgment": null, "schema_version": 1,'
        b' "model_calls": [{"messages": [], "response": {"content": "2"}, "latency_s": 0.25}]}'
    )
    [call] = serde.loads(line, Trajectory).model_calls
    assert call.duration_s == 0.25
    assert call.response == {"content": "2"}


# ---------------------------------------------------------------- numpy arrays, encoded once for every adapter

ARRAYS = {
    "0-d float": np.array(2.5, dtype=np.float32),
    "0-d int": np.array(-3, dtype=np.int64),
    "empty": np.zeros((0, 3), dtype=np.float64),
    "empty, other axis": np.zeros((2, 0), dtype=np.int8),
    "bool": np.array([[True, False], [False, True]]),
    "float16": np.array([0.1, 65504.0, -0.0], dtype=np.float16),
    "float32 (CartPole)": np.array([0.0135, -0.0221, 0.0411, 0.0373], dtype=np.float32),
    "int64 extremes": np.array([-(2**63), 2**63 - 1], dtype=np.int64),
    "uint64 top": np.array([2**64 - 1], dtype=np.uint64),
    "non-contiguous": np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::2],
    "transposed": np.arange(6, dtype=np.float64).reshape(2, 3).T,
    "big-endian": np.arange(5, dtype=">f8"),
    "inf and nan": np.array([np.inf, -np.inf, np.nan, 1.0], dtype=np.float32),
    "complex": np.array([1 + 2j, -0.5j], dtype=np.complex64),
    "image": np.random.default_rng(0).integers(0, 256, (210, 160, 3), dtype=np.uint8),
    "big float": np.random.default_rng(1).standard_normal(5000),
}


@pytest.mark.parametrize("name", list(ARRAYS))
def test_arrays_decode_to_equal_arrays_of_the_same_dtype_and_shape(name):
    array = ARRAYS[name]
    step = serde.loads(serde.dumps(Step(observation=array, action={"nested": [array]}, info={"a": array})), Step)
    for recorded in (step.observation, step.action["nested"][0], step.info["a"]):
        assert recorded["__ndarray__"] == array.dtype.name  # every array, at any depth, in every free-form field
        back = arrays.decode(recorded)
        assert back.dtype == array.dtype.newbyteorder("=")
        assert back.shape == array.shape
        np.testing.assert_array_equal(back, array)
        assert back.flags.writeable


def test_short_arrays_keep_their_numbers_for_people_and_others_their_bytes():
    def form(array):
        return set(serde.to_data(Step(observation=array, action=0))["observation"]) - {"__ndarray__"}

    assert form(np.zeros(arrays.LIST_MAX, dtype=np.float32)) == {"values"}  # the nesting says the shape
    assert form(np.zeros((0, 3))) == {"values", "shape"}  # ... except for an empty array of several axes
    assert form(np.zeros(arrays.LIST_MAX + 1, dtype=np.float32)) == {"shape", "data"}
    assert form(np.array([1.0, np.nan])) == {"shape", "data"}  # JSON has no nan: orjson would write null
    assert form(np.array([1j])) == {"shape", "data"}
    cartpole = serde.to_data(Step(observation=ARRAYS["float32 (CartPole)"], action=0))["observation"]
    assert cartpole == {"__ndarray__": "float32", "values": ARRAYS["float32 (CartPole)"].tolist()}


def test_the_gymnasium_adapter_s_older_array_records_still_decode():
    # What nenyax-adapters-gymnasium wrote before core encoded arrays: dtype, shape and bytes, nested.
    old = {"__ndarray__": {"dtype": "uint8", "shape": [2, 2], "data": "AAH+/w=="}}
    np.testing.assert_array_equal(arrays.decode(old), np.array([[0, 1], [254, 255]], dtype=np.uint8))


@pytest.mark.parametrize(
    "array",
    [
        np.zeros(2, dtype=[("x", "i4"), ("y", "f4")]),
        np.array(["a", "b"]),
        np.array([object()]),
        np.array(["2020"], "M8"),
    ],
    ids=["structured", "strings", "objects", "datetimes"],
)
def test_arrays_records_cannot_keep_are_refused_in_one_sentence(array):
    with pytest.raises(TypeError, match=r"^A numpy array of dtype .* cannot be recorded: .* instead\.$"):
        serde.dumps(Step(observation=array, action=0))


@pytest.mark.parametrize(
    "bad",
    [
        {"__ndarray__": "uint8", "shape": [3], "data": "!!"},
        {"__ndarray__": "uint8", "shape": [4], "data": "AAE="},
        {"__ndarray__": "float32", "shape": [3], "values": [1.0]},
        {"__ndarray__": "V8", "shape": [1], "data": "AAAAAAAAAAA="},
        {"__ndarray__": "float32", "values": [[1.0], [1.0, 2.0]]},
        {"__ndarray__": {"dtype": "uint8", "shape": [3], "data": "!!"}},
        {"__ndarray__": {"shape": [1], "values": [1]}},
    ],
)
def test_malformed_array_records_are_one_sentence(bad):
    with pytest.raises(ValueError, match=r"^Not an encoded array record \(.*\)\.$"):
        arrays.decode(bad)


def test_decode_all_restores_every_array_in_a_recorded_value():
    value = {"image": arrays.encode(ARRAYS["image"]), "mission": "go", "pair": [arrays.encode(ARRAYS["bool"]), 1]}
    back = arrays.decode_all(value)
    assert back["mission"] == "go"
    assert back["pair"][1] == 1
    np.testing.assert_array_equal(back["image"], ARRAYS["image"])
    assert back["pair"][0].dtype == bool


def test_serde_never_imports_numpy():
    code = "import sys; from nenyax.core.contract import serde; serde.dumps([1]); print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
