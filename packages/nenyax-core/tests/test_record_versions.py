"""Records written by other versions: the next minor one is read and round-trips, the next major one is
refused in one sentence, and older ones are migrated on read.

The fixtures are what "the next version" would write: `trajectory_next_minor.json` carries schema
1.6 and fields this version does not know at every level (trajectory, policy, judgment, step, model
call, timing); `trajectory_next_major.json` carries 2.0, another layout, and the release that reads it.
"""

import json
from pathlib import Path

import orjson
import pytest

from nenyax.core.contract import serde
from nenyax.core.contract.manifest import Capabilities, Manifest, Mode
from nenyax.core.contract.schema import SCHEMA_VERSION, SchemaVersion
from nenyax.core.contract.trajectory import Tier, Trajectory
from nenyax.core.engine.sinks import JsonlSink, read_trajectories
from nenyax.core.engine.summary import Summary
from nenyax.core.errors import NenyaxError, UsageError
from nenyax.core.tiers.report import TierReport

FIXTURES = Path(__file__).parent / "fixtures"


def _fixture(name):
    return json.loads((FIXTURES / name).read_text())


def test_a_next_minor_record_reads_what_it_knows():
    traj = serde.from_data(_fixture("trajectory_next_minor.json"), Trajectory)
    assert (traj.task_id, traj.sample, traj.group_id, traj.policy.revision) == ("add/0", 2, "g1", "r1")
    assert traj.judgment.score == 1.0
    assert traj.steps[0].action == "5"
    assert traj.model_calls[0].duration_s == 0.25
    assert traj.info == {"env_note": "kept"}
    assert traj.schema_version == SchemaVersion(1, 6)  # its own number: its fields travel with it


def test_a_next_minor_record_keeps_its_unknown_fields_at_every_level():
    traj = serde.from_data(_fixture("trajectory_next_minor.json"), Trajectory)
    assert traj.unknown_fields == {"cost_usd": 0.0012}
    assert traj.policy.unknown_fields == {"adapter_digest": "sha256:ff"}
    assert traj.judgment.unknown_fields == {"rubric": {"correct": 1.0}}
    assert traj.steps[0].unknown_fields == {"latency_s": 0.004, "observation_digest": {"algo": "sha256", "hex": "00"}}
    assert traj.model_calls[0].unknown_fields == {"cached_tokens": 7}
    assert traj.timing.unknown_fields == {"queued": 1699999999.0}


def test_read_then_write_gives_a_next_minor_record_back_unchanged(tmp_path):
    original = _fixture("trajectory_next_minor.json")
    assert orjson.loads(serde.dumps(serde.from_data(original, Trajectory))) == original
    # through the sink and its reader too: what `eval --resume` and `view` read
    path = tmp_path / "t.jsonl"
    path.write_bytes(orjson.dumps(original) + b"\n")
    with JsonlSink(path) as sink:
        sink.write(next(iter(read_trajectories(path))))
    first, second = (orjson.loads(line) for line in path.read_bytes().splitlines())
    assert first == second == original


def test_unknown_fields_are_outside_equality():
    full = _fixture("trajectory_next_minor.json")
    less = _fixture("trajectory_next_minor.json")
    del less["cost_usd"], less["judgment"]["rubric"], less["steps"][0]["latency_s"]
    a, b = serde.from_data(full, Trajectory), serde.from_data(less, Trajectory)
    assert a == b
    assert a.unknown_fields != b.unknown_fields


def test_a_next_major_record_is_refused_naming_the_release_to_install():
    with pytest.raises(UsageError) as refused:
        serde.from_data(_fixture("trajectory_next_major.json"), Trajectory)
    message = str(refused.value)
    assert message.count(". ") == 0
    assert message.endswith(".")
    assert "schema version 2.0" in message
    assert "reads 1.x only" in message
    assert "pip install 'nenyax-core>=0.9'" in message


def test_a_next_major_record_without_its_requirement_still_says_what_to_do():
    data = _fixture("trajectory_next_major.json")
    del data["requires"]
    with pytest.raises(UsageError, match=r"schema version 2\.0, written by a newer nenyax-core.*pip install --upgrade"):
        serde.from_data(data, Trajectory)


def test_a_next_major_record_nested_in_another_is_refused_too():
    manifest = Manifest(uri="f:x", format="f", format_version="1", mode=Mode.STEP, name="x")
    report = serde.to_data(TierReport(uri="f:x", tier=Tier.NONE, results=(), manifest=manifest))
    report["manifest"] = {**serde.to_data(manifest), "schema_version": "3.1", "requires": "nenyax-core>=3.0"}
    with pytest.raises(UsageError, match=r"Manifest record has schema version 3\.1.*'nenyax-core>=3\.0'"):
        serde.from_data(orjson.loads(orjson.dumps(report)), TierReport)


def test_a_version_that_is_not_major_minor_is_one_sentence():
    data = {**_fixture("trajectory_next_minor.json"), "schema_version": "one"}
    with pytest.raises(NenyaxError, match=r"schema_version .one. is not MAJOR\.MINOR"):
        serde.from_data(data, Trajectory)


def test_a_1_0_record_reads_with_sample_and_agent_moved_out_of_info():
    data = _fixture("trajectory_1_0.json")
    assert data["schema_version"] == 1
    assert data["info"]["sample"] == 2
    traj = serde.from_data(data, Trajectory)
    assert (traj.sample, traj.agent, traj.info) == (2, "reference", {"env_note": "kept"})
    assert traj.schema_version == SCHEMA_VERSION  # migrated: written back in this layout
    again = orjson.loads(serde.dumps(traj))
    assert again["schema_version"] == str(SCHEMA_VERSION)
    assert (again["sample"], again["agent"]) == (2, "reference")
    assert serde.from_data(again, Trajectory) == traj


def test_an_environment_info_key_named_sample_is_the_environment_s_in_a_1_1_record():
    data = {**_fixture("trajectory_next_minor.json"), "schema_version": "1.1"}
    data["info"] = {"sample": 99, "agent": "its own"}
    traj = serde.from_data(data, Trajectory)
    assert traj.sample == 2
    assert traj.agent is None
    assert traj.info == {"sample": 99, "agent": "its own"}


def test_the_retired_token_level_claim_is_kept_as_an_unknown_field():
    data = {**serde.to_data(Capabilities(seeded=True)), "token_level": True}
    caps = serde.from_data(data, Capabilities)
    assert caps == Capabilities(seeded=True)
    assert caps.unknown_fields == {"token_level": True}
    assert serde.to_data(caps)["token_level"] is True


def test_a_summary_keeps_unknown_fields_and_reads_when_written_before_it_had_a_version():
    summary = Summary(
        episodes=2, scored=2, mean=0.5, ci95=(0.1, 0.9), stdev=0.5, pass_threshold=1.0, pass_at_k={"1": 0.5},
        samples=1, tasks=2, statuses={"ok": 2}, tokens_in=0, tokens_out=0,
    )  # fmt: skip
    data = orjson.loads(serde.dumps(summary))
    assert data["ci95"] == [0.1, 0.9]
    assert data["schema_version"] == str(SCHEMA_VERSION)
    old = {k: v for k, v in data.items() if k != "schema_version"}
    assert serde.from_data(old, Summary) == summary
    newer = {**data, "schema_version": "1.6", "cost": {"usd": 1}}
    back = serde.from_data(newer, Summary)
    assert back.ci95 == (0.1, 0.9)
    assert orjson.loads(serde.dumps(back)) == newer
