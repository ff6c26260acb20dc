"""One check framework (`nenyax.core.contract.checking`) behind `nenyax check URI` and the conformance kit."""

import asyncio

import pytest

from nenyax.core import serde
from nenyax.core.contract import checking
from nenyax.core.contract.checking import (
    Check,
    CheckReport,
    CheckResult,
    Fail,
    Finding,
    Severity,
    Skip,
    Verdict,
    arun_check,
    run_check,
)
from nenyax.core.contract.trajectory import Tier
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers import checks as tier_checks
from nenyax.core.tiers.measure import CHECKS, TierCheck, TierOutcome, TierReport, TierResult, check
from nenyax.testing import CHECKS as KIT_CHECKS
from nenyax.testing import Fail as KitFail
from nenyax.testing import KitReport, Outcome, Report, Subject
from nenyax.testing import Skip as KitSkip
from nenyax_testsupport.fakes import AdapterPlugin


def _registry():
    return Registry.from_plugins(("fake", AdapterPlugin(factory="nenyax_testsupport.fakes:ArithAdapter")))


@pytest.fixture(scope="module")
def reports():
    """A tier report and a kit report of the same in-memory adapter."""
    tier = check("arith:add?size=8", registry=_registry())
    kit = KitReport.of(KIT_CHECKS["adapter"], Subject.from_registry("adapter", "arith", _registry()))
    return tier, kit


def test_both_frameworks_are_one_check_result_and_report_type(reports):
    tier, kit = reports
    assert isinstance(tier, CheckReport)
    assert isinstance(kit, CheckReport)
    assert all(isinstance(r, CheckResult) for r in (*tier.results, *kit.results))
    assert all(isinstance(c, Check) for c in (*CHECKS, *KIT_CHECKS["adapter"]))
    # One pair of signals and one verdict: the tiers' and the kit's names are the same objects.
    assert tier_checks.Skip is KitSkip is Skip
    assert tier_checks.Fail is KitFail is Fail
    assert TierOutcome is Verdict
    assert Outcome is CheckResult
    assert Report is KitReport
    assert tier.tier is Tier.AUDITED
    assert tier.passed()
    assert not tier.failed
    assert kit.passed(), [(r.id, r.outcome, r.evidence, r.findings) for r in kit.failures()]


def test_a_tier_report_and_a_kit_report_round_trip_through_the_same_serde(reports):
    for report in reports:
        data = serde.to_data(report)
        # The same result keys in both, from the one result type.
        assert {"id", "outcome", "evidence", "findings", "seconds"} <= set(data["results"][0])
        assert serde.from_data(data, type(report)) == report
        assert serde.loads(serde.dumps(report), type(report)) == report
    tier_data, kit_data = (serde.to_data(r) for r in reports)
    assert tier_data["results"][0]["tier"] == "connectable"  # the tier specialisation adds the tier it gates
    assert kit_data["kind"] == "adapter"
    assert kit_data["name"] == "arith"


def test_a_result_with_findings_round_trips_with_its_severity():
    finding = Finding(check="x/y", message="Give a summary.", severity=Severity.WARNING)
    result = CheckResult(id="x/y", outcome=Verdict.PASSED, findings=(finding,), seconds=0.5)
    report = KitReport(kind="adapter", name="acme", results=(result,))
    back = serde.loads(serde.dumps(report), KitReport)
    assert back == report
    assert back.results[0].findings[0].severity is Severity.WARNING
    assert report.passed()
    assert not report.passed(strict=True)


def _problems(_subject):
    yield "The first problem."
    yield Finding(check="demo/yields", message="Only a warning.", severity=Severity.WARNING)


def _skips_after_a_problem(_subject):
    yield "Found before the skip."
    raise Skip("cannot go on")


def _fails(_subject):
    raise Fail("It saw 2, not 3.")


def _crashes(_subject):
    raise KeyError("gone")


async def _evidence(subject):
    return f"Saw {subject}."


def test_one_runner_reads_every_way_a_check_ends():
    def run(fn, **kwargs):
        return run_check(Check(id="demo/x", run=fn), "the subject", **kwargs)

    problems = run(_problems)
    assert problems.outcome is Verdict.FAILED
    assert [f.message for f in problems.findings] == ["The first problem.", "Only a warning."]
    stopped = run(_skips_after_a_problem)  # problems found before a skip still stand
    assert stopped.outcome is Verdict.FAILED
    assert stopped.findings[0].message == "Found before the skip."
    assert run(lambda _s: iter(())).outcome is Verdict.PASSED
    failed = run(_fails)
    assert (failed.outcome, failed.evidence, failed.findings) == (Verdict.FAILED, "It saw 2, not 3.", ())
    crashed = run(_crashes)
    assert crashed.outcome is Verdict.ERROR
    assert crashed.evidence.startswith("KeyError: 'gone' (at ")
    assert not crashed.failed()
    assert not crashed.ok()
    # The caller says what a crash is: the tiers read it as the environment's failure.
    as_failure = run(_crashes, crash=lambda exc: (Verdict.FAILED, f"raised {exc!r}"))
    assert (as_failure.outcome, as_failure.evidence) == (Verdict.FAILED, "raised KeyError('gone')")
    gated = run(_crashes, gate=lambda c: f"{c.id} needs more")
    assert (gated.outcome, gated.evidence) == (Verdict.SKIPPED, "demo/x needs more")
    # An async check runs on the async path; the sync one refuses it in a sentence (a crash, not a hang).
    assert asyncio.run(arun_check(Check(id="demo/a", run=_evidence), "it")).evidence == "Saw it."
    assert "run it with arun_check" in run(_evidence).evidence


def test_the_old_names_still_read_for_one_minor_version(reports):
    tier, kit = reports
    result = kit.results[0]
    assert (result.verdict, result.reason, result.check.id) == (result.outcome, result.evidence, result.id)
    assert kit.outcomes == kit.results
    assert kit.failed() == []
    first = CHECKS[0]
    assert isinstance(first, TierCheck)
    assert first[0] == first.id == "connectable/loads"
    check_id, tier_of, run, openenv = first
    assert (check_id, tier_of, run, openenv) == (first.id, Tier.CONNECTABLE, first.run, "runtime.startup")
    assert all(isinstance(r, TierResult) for r in tier.results)
    assert checking.Verdict.ERROR not in {r.outcome for r in tier.results}


def test_core_exports_the_framework_and_the_old_tier_names():
    import nenyax.core as core

    assert core.Check is Check
    assert core.CheckResult is CheckResult
    assert core.CheckReport is CheckReport
    assert core.Skip is Skip
    assert core.Fail is Fail
    assert core.Verdict is Verdict
    assert core.TierOutcome is Verdict
    assert core.TierReport is TierReport
    assert core.TierResult is TierResult
