import pytest

from nenyax.core.check import Outcome, check
from nenyax.core.errors import UsageError
from nenyax.core.manifest import Capabilities
from nenyax.core.registry import Registry
from nenyax.core.trajectory import Tier
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


class NoOracleAdapter:
    def load(self, uri):
        from nenyax.testing.fakes import ArithEnvironment

        return ArithEnvironment(uri.raw, size=4, seed=0, capabilities=Capabilities(seeded=True))

    def examples(self):
        return ["arith:add"]


class UnseededAdapter(NoOracleAdapter):
    def load(self, uri):
        from nenyax.testing.fakes import ArithEnvironment

        return ArithEnvironment(uri.raw, size=4, seed=0, capabilities=Capabilities())


def test_a_skipped_check_blocks_its_tier(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "nenyax_test_check_adapters", sys.modules[__name__])
    report = check("arith:add", registry=_registry("nenyax_test_check_adapters:NoOracleAdapter"))
    assert report.tier is Tier.TRAINABLE
    assert _outcomes(report)["audited/reference-beats-null"] is Outcome.SKIPPED
    report = check("arith:add", registry=_registry("nenyax_test_check_adapters:UnseededAdapter"))
    assert report.tier is Tier.EVALUABLE
    assert _outcomes(report)["trainable/seed-recreates"] is Outcome.SKIPPED


class DownServerAdapter(NoOracleAdapter):
    def load(self, uri):
        from nenyax.core.errors import InfraFailure

        raise InfraFailure("No server answers at http://127.0.0.1:9 (connection refused).")


def test_a_server_that_cannot_be_reached_skips_connectable_with_the_reason(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "nenyax_test_check_adapters", sys.modules[__name__])
    report = check("arith:add", registry=_registry("nenyax_test_check_adapters:DownServerAdapter"))
    assert report.tier is Tier.NONE
    loads = report.results[0]
    assert loads.id == "connectable/loads" and loads.outcome is Outcome.SKIPPED
    assert "http://127.0.0.1:9" in loads.evidence


def test_user_mistakes_raise_instead_of_reporting():
    with pytest.raises(UsageError):
        check("arith:nothing", registry=_registry())
    with pytest.raises(UsageError):
        check("not a uri", registry=_registry())
    with pytest.raises(UsageError, match="at least 1"):
        check("arith:add", samples=0, registry=_registry())
