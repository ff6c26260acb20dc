"""`check` on the in-memory `arith` fake: core's tests install no real adapter (every adapter depends on core).

The adapters below over- or under-claim on purpose, since no real environment is broken in exactly that way.
"""

import time

import pytest

from nenyax.core.contract.trajectory import Tier
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers.measure import CHECKS, TierOutcome, check
from nenyax.testing.fakes import AdapterPlugin


def _registry(factory="nenyax.testing.fakes:ArithAdapter"):
    return Registry.from_plugins(("fake", AdapterPlugin(factory=factory)))


def _outcomes(report):
    return {r.id: r.outcome for r in report.results}


def test_a_sound_environment_is_audited():
    started = time.perf_counter()
    report = check("arith:add?size=8", registry=_registry())
    elapsed = time.perf_counter() - started
    assert report.tier is Tier.AUDITED
    assert [r.id for r in report.results] == [c[0] for c in CHECKS]
    assert set(_outcomes(report).values()) == {TierOutcome.PASSED}
    assert all(r.evidence for r in report.results)
    # Each check is timed on its own: every one took some time, and together no more than the whole run.
    assert all(r.seconds > 0 for r in report.results) and sum(r.seconds for r in report.results) <= elapsed
    assert {r.openenv for r in report.results} >= {"runtime.startup", "semantic.floor_gap"}


def test_a_wrong_oracle_fails_the_audit():
    report = check("arith:add?size=8", registry=_registry("nenyax.testing.fakes:WrongReferenceAdapter"))
    assert report.tier is Tier.TRAINABLE
    assert _outcomes(report)["audited/reference-beats-null"] is TierOutcome.FAILED


def test_a_skipped_check_blocks_its_tier(monkeypatch):
    report = check("arith:add", registry=_registry("nenyax.testing.fakes:NoOracleAdapter"))
    assert report.tier is Tier.TRAINABLE
    assert _outcomes(report)["audited/reference-beats-null"] is TierOutcome.SKIPPED
    report = check("arith:add", registry=_registry("nenyax.testing.fakes:UnseededAdapter"))
    assert report.tier is Tier.EVALUABLE
    assert _outcomes(report)["trainable/seed-recreates"] is TierOutcome.SKIPPED


def test_a_server_that_cannot_be_reached_skips_connectable_with_the_reason(monkeypatch):
    report = check("arith:add", registry=_registry("nenyax.testing.fakes:UnreachableAdapter"))
    assert report.tier is Tier.NONE and not report.failed
    loads = report.results[0]
    assert loads.id == "connectable/loads" and loads.outcome is TierOutcome.SKIPPED
    assert "http://127.0.0.1:9 (connection refused)" in loads.evidence


def test_user_mistakes_raise_instead_of_reporting():
    with pytest.raises(UsageError):
        check("arith:nothing", registry=_registry())
    with pytest.raises(UsageError):
        check("not a uri", registry=_registry())
    with pytest.raises(UsageError, match="at least 1"):
        check("arith:add", samples=0, registry=_registry())


@pytest.mark.parametrize(
    "factory",
    [
        "nenyax.testing.fakes:WrongReferenceAdapter",
        "nenyax.testing.fakes:TupleObservationAdapter",
        "nenyax.testing.fakes:UnstableManifestAdapter",
        "nenyax.testing.fakes:NoOracleAdapter",
        "nenyax.testing.fakes:UnseededAdapter",
        "nenyax.testing.fakes:UnreachableAdapter",
    ],
)
def test_every_check_that_does_not_pass_says_what_it_tried_and_saw(factory):
    report = check("arith:add?size=6", samples=4, registry=_registry(factory))
    stopped = [r for r in report.results if r.outcome is not TierOutcome.PASSED]
    assert stopped, f"{factory} was meant to fall short somewhere"
    for result in stopped:
        text = result.evidence
        assert text[0].isupper() and text.endswith((".", ")")) and "\n" not in text, (result.id, text)
        assert len(text.split()) >= 5 and "AssertionError" not in text, (result.id, text)
    failed = [r for r in stopped if r.outcome is TierOutcome.FAILED]
    for result in failed:  # a failure names what it looked at: a task, or the values it compared
        assert "add/" in result.evidence or any(ch.isdigit() for ch in result.evidence), (result.id, result.evidence)


def test_a_manifest_that_changes_between_processes_is_not_trainable():
    report = check("arith:add?size=6", samples=4, registry=_registry("nenyax.testing.fakes:UnstableManifestAdapter"))
    fresh = next(r for r in report.results if r.id == "trainable/fresh-process")
    assert fresh.outcome is TierOutcome.FAILED and "manifest digest differs" in fresh.evidence
    assert report.tier is Tier.EVALUABLE


def test_every_episode_a_check_plays_reaches_its_observers():
    class Ends:
        def __init__(self):
            self.seen = []

        def on_episode_ended(self, event):
            self.seen.append(event.trajectory)

    ends = Ends()
    report = check("arith:add?size=5", registry=_registry(), observers=[ends])
    seen = ends.seen
    assert report.tier is Tier.AUDITED
    by_player = {}
    for traj in seen:
        by_player.setdefault(traj.policy.name, []).append(traj)
    # The reference played each sampled task once (episodes several checks compare are played once).
    assert sorted(t.task_id for t in by_player["reference"]) == sorted({t.task_id for t in by_player["reference"]})
    assert len(by_player["reference"]) == report.samples == 5
    # The deliberate failures are recorded with their status, named for what they were.
    assert by_player["check probe: a raising policy"][0].status.value == "policy_error"
    assert by_player["check probe: an infrastructure outage"][0].status.value == "infra_error"
    assert any(name.startswith("check probe: a constant answer") for name in by_player)
