"""`check` on the in-memory `arith` fake: core's tests install no real adapter (every adapter depends on core).

The adapters below over- or under-claim on purpose, since no real environment is broken in exactly that way.
"""

import time

import pytest

from nenyax.core.contract.manifest import Capabilities
from nenyax.core.contract.trajectory import Tier
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers.check import CHECKS, Outcome, check
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
    assert set(_outcomes(report).values()) == {Outcome.PASSED}
    assert all(r.evidence for r in report.results)
    # Each check is timed on its own: every one took some time, and together no more than the whole run.
    assert all(r.seconds > 0 for r in report.results) and sum(r.seconds for r in report.results) <= elapsed
    assert {r.openenv for r in report.results} >= {"runtime.startup", "semantic.floor_gap"}


def test_a_wrong_oracle_fails_the_audit():
    report = check("arith:add?size=8", registry=_registry("nenyax.testing.fakes:WrongReferenceAdapter"))
    assert report.tier is Tier.TRAINABLE
    assert _outcomes(report)["audited/reference-beats-null"] is Outcome.FAILED


class NoOracleAdapter:
    """Claims no reference policy, so the audit cannot run."""

    def load(self, uri, context=None):
        from nenyax.testing.fakes import ArithEnvironment

        return ArithEnvironment(uri.raw, size=4, seed=0, capabilities=Capabilities(seeded=True))

    def examples(self):
        return ["arith:add"]


class UnseededAdapter(NoOracleAdapter):
    """Claims neither seeds nor stable task ids, so replay cannot be checked."""

    def load(self, uri, context=None):
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


def test_user_mistakes_raise_instead_of_reporting():
    with pytest.raises(UsageError):
        check("arith:nothing", registry=_registry())
    with pytest.raises(UsageError):
        check("not a uri", registry=_registry())
    with pytest.raises(UsageError, match="at least 1"):
        check("arith:add", samples=0, registry=_registry())
