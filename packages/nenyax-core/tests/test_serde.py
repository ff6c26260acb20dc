"""Every contract type round-trips through JSON unchanged (property tests)."""

import math

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nenyax.core.contract import serde
from nenyax.core.contract.manifest import Capabilities, Manifest, Mode, Split
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


def test_newer_schema_is_refused_with_a_sentence():
    data = serde.to_data(Judgment(score=1.0))
    record = {**serde.to_data(_trajectory()), "schema_version": SCHEMA_VERSION + 1, "judgment": data}
    with pytest.raises(NenyaxError, match="newer than this nenyax-core"):
        serde.from_data(record, Trajectory)


def test_unknown_keys_are_refused():
    record = {**serde.to_data(_trajectory()), "surprise": 1}
    with pytest.raises(NenyaxError, match="Could not read a Trajectory"):
        serde.from_data(record, Trajectory)


def test_manifest_digest_changes_with_content():
    a = Manifest(uri="f:x", format="f", format_version="1", mode=Mode.STEP, name="x")
    b = Manifest(uri="f:x", format="f", format_version="2", mode=Mode.STEP, name="x")
    same = Manifest(uri="f:x", format="f", format_version="1", mode=Mode.STEP, name="x")
    assert serde.digest(a) == serde.digest(same)
    assert serde.digest(a) != serde.digest(b)


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
    assert call.duration_s == 0.25 and call.response == {"content": "2"}
