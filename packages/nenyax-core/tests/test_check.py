import pytest

from nenyax.core.contract.trajectory import Tier
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers.check import Outcome, check
from nenyax.testing.fakes import AdapterPlugin


def _registry(factory="nenyax.testing.fakes:ArithAdapter"):
    return Registry.from_plugins(("fake", AdapterPlugin(factory=factory)))


def _outcomes(report):
    return {r.id: r.outcome for r in report.results}


def test_a_sound_environment_is_audited():
    report = check("arith:add?size=8", registry=_registry())
    assert report.tier is Tier.AUDITED
    assert set(_outcomes(report).values()) == {Outcome.PASSED}
    assert all(r.seconds >= 0 and r.evidence for r in report.results)
    assert {r.openenv for r in report.results} >= {"runtime.startup", "semantic.floor_gap"}


def test_a_wrong_oracle_fails_the_audit():
    report = check("arith:add?size=8", registry=_registry("nenyax.testing.fakes:WrongReferenceAdapter"))
    assert report.tier is Tier.TRAINABLE
    assert _outcomes(report)["audited/reference-beats-null"] is Outcome.FAILED


def test_a_skipped_check_blocks_its_tier(monkeypatch):
    report = check("arith:add", registry=_registry("nenyax.testing.fakes:NoOracleAdapter"))
    assert report.tier is Tier.TRAINABLE
    assert _outcomes(report)["audited/reference-beats-null"] is Outcome.SKIPPED
    report = check("arith:add", registry=_registry("nenyax.testing.fakes:UnseededAdapter"))
    assert report.tier is Tier.EVALUABLE
    assert _outcomes(report)["trainable/seed-recreates"] is Outcome.SKIPPED


def test_a_server_that_cannot_be_reached_skips_connectable_with_the_reason(monkeypatch):
    report = check("arith:add", registry=_registry("nenyax.testing.fakes:UnreachableAdapter"))
    assert report.tier is Tier.NONE and not report.failed
    loads = report.results[0]
    assert loads.id == "connectable/loads" and loads.outcome is Outcome.SKIPPED
    assert "http://127.0.0.1:9 (connection refused)" in loads.evidence


def test_user_mistakes_raise_instead_of_reporting():
    with pytest.raises(UsageError):
        check("arith:nothing", registry=_registry())
    with pytest.raises(UsageError):
        check("not a uri", registry=_registry())
    with pytest.raises(UsageError, match="at least 1"):
        check("arith:add", samples=0, registry=_registry())
