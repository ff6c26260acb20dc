"""Each conformance check passes on a sound fake and *fails* (the verdict, not a crash) on a fake broken its way.

The common checks are written once for every kind: they run here on adapters, judges and providers.
A crash is its own verdict (error), a check that does not apply is skipped with its reason.
"""

import sys
import textwrap

import pytest

from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.plugins.registry import Registry
from nenyax.testing import CHECKS, Report, Subject, Verdict, common_checks
from nenyax_testsupport.distributions import write_distribution
from nenyax_testsupport.fakes import AdapterPlugin, KindPlugin

pytest_plugins = ["pytester"]

# The fakes live in nenyax_testsupport, outside nenyax/, so the source-tree check does not apply to them; it
# passes on a plugin under nenyax/ in test_learner_kit.py (core's incontext learner).
SKIPPED_ON_THE_SOUND_FAKE = {
    "adapter/entry-point-named-after-distribution": "the plugin comes from no installed distribution",
    "adapter/no-namespace-init": "is not under nenyax/",
    "adapter/listing-is-loadable": "the adapter does not declare 'listing'",
    "adapter/list-values-survive": "no example sets a list-valued parameter",
}


def _report(plugin, kind="adapter", name="arith", checks=None, options=None, sources=None):
    registry = Registry(sources) if sources else Registry.from_plugins(("fake", plugin))
    subject = Subject.from_registry(kind, name, registry, options=options)
    return {o.check.id: o for o in Report.of(checks or CHECKS[kind], subject).outcomes}


def test_the_sound_fake_passes_every_check_that_applies_and_says_why_the_others_do_not():
    outcomes = _report(AdapterPlugin())
    assert set(outcomes) == {c.id for c in CHECKS["adapter"]}
    skipped = {cid: o.reason for cid, o in outcomes.items() if o.verdict is Verdict.SKIPPED}
    assert set(skipped) == set(SKIPPED_ON_THE_SOUND_FAKE)
    for cid, reason in SKIPPED_ON_THE_SOUND_FAKE.items():
        assert reason in skipped[cid]
    assert {cid: o.verdict for cid, o in outcomes.items() if cid not in skipped} == dict.fromkeys(
        set(outcomes) - set(skipped), Verdict.PASSED
    )


@pytest.mark.parametrize(
    ("check_id", "factory"),
    [
        ("adapter/factory-returns-adapter", "nenyax_testsupport.fakes:NotAnAdapter"),
        ("adapter/factory-returns-adapter", "nenyax_testsupport.fakes:ClaimsListingAdapter"),
        ("adapter/factory-takes-options", "nenyax_testsupport.fakes:NeedsAnOptionAdapter"),
        ("adapter/examples-use-its-scheme", "nenyax_testsupport.fakes:ForeignExamplesAdapter"),
        ("adapter/examples-load", "nenyax_testsupport.fakes:UnstableManifestAdapter"),
        ("adapter/bad-uri-is-clear", "nenyax_testsupport.fakes:CrashOnBadURIAdapter"),
        ("adapter/examples-reach-claimed-tier", "nenyax_testsupport.fakes:WrongReferenceAdapter"),
        ("adapter/trajectory-roundtrip", "nenyax_testsupport.fakes:TupleObservationAdapter"),
        ("adapter/factory-importable", "nenyax_no_such_module:Adapter"),
        ("adapter/listing-is-loadable", "nenyax_testsupport.fakes:ForeignListingAdapter"),
        ("adapter/list-values-survive", "nenyax_testsupport.fakes:ListOnlyTagsAdapter"),
    ],
)
def test_each_check_catches_its_flaw(check_id, factory):
    outcome = _report(AdapterPlugin(factory=factory))[check_id]
    assert outcome.verdict is Verdict.FAILED, f"{check_id} did not catch {factory}: {outcome.verdict} {outcome.reason}"
    assert outcome.findings
    assert not outcome.reason


def test_a_capability_the_adapter_declares_gates_its_check_in():
    outcome = _report(AdapterPlugin(factory="nenyax_testsupport.fakes:ListingArithAdapter"))[
        "adapter/listing-is-loadable"
    ]
    assert outcome.verdict is Verdict.PASSED


def test_a_list_valued_parameter_passes_as_a_list_and_as_a_tuple():
    outcome = _report(AdapterPlugin(factory="nenyax_testsupport.fakes:TaggedArithAdapter"))[
        "adapter/list-values-survive"
    ]
    assert outcome.verdict is Verdict.PASSED, outcome.reason


def test_the_tuple_spelling_a_format_refuses_is_named():
    outcome = _report(AdapterPlugin(factory="nenyax_testsupport.fakes:ListOnlyTagsAdapter"))[
        "adapter/list-values-survive"
    ]
    assert [f.message for f in outcome.findings] == [
        '\'arith:add?size=5&tags=("a","b")\' failed to load: tags must be a JSON list.'
    ]


def test_a_check_that_crashes_is_an_error_with_the_traceback_line_never_a_finding():
    outcomes = _report(AdapterPlugin(factory="nenyax_testsupport.fakes:CrashingExamplesAdapter"))
    crashed = outcomes["adapter/examples-load"]
    assert crashed.verdict is Verdict.ERROR
    assert not crashed.failed()
    assert crashed.findings == ()
    assert crashed.reason.startswith("RuntimeError: examples are not ready (at fakes.py:")
    assert not crashed.ok()  # a crash still stands against the plugin in a report
    report = Report(kind="adapter", name="arith", results=tuple(outcomes.values()))
    with pytest.raises(Exception, match=r"adapter/examples-load: the check crashed: RuntimeError"):
        report.raise_for_errors()


def test_registration_that_imports_the_implementation_is_caught(tmp_path, monkeypatch):
    (tmp_path / "nenyax_heavy_impl.py").write_text("from nenyax_testsupport.fakes import ArithAdapter as Adapter\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    class EagerPlugin:
        @hookimpl
        def nenyax_register_adapters(self):
            import nenyax_heavy_impl  # noqa: F401 - the flaw: importing the implementation at discovery

            return PluginSpec(kind="adapter", name="arith", factory="nenyax_heavy_impl:Adapter")

    try:
        assert _report(EagerPlugin())["adapter/registration-is-lazy"].verdict is Verdict.FAILED
    finally:
        sys.modules.pop("nenyax_heavy_impl", None)


@pytest.mark.parametrize("strict", ["0", "1"])
def test_an_invalid_declaration_is_caught(monkeypatch, strict):
    monkeypatch.setenv("NENYAX_STRICT_PLUGINS", strict)

    class Invalid:
        @hookimpl
        def nenyax_register_adapters(self):
            return PluginSpec(kind="adapter", name="Arith!", factory="nenyax_testsupport.fakes:ArithAdapter")

    outcome = _report(Invalid(), checks=common_checks("adapter"))["adapter/declaration-is-valid"]
    assert outcome.verdict is Verdict.FAILED
    assert any("must be lower-case letters" in f.message for f in outcome.findings), outcome.findings


def test_the_entry_point_must_be_named_after_its_distribution():
    def outcome(entry_point):
        sources = [(entry_point, AdapterPlugin(), "nenyax-adapters-arith", "1.0")]
        return _report(None, sources=sources)["adapter/entry-point-named-after-distribution"]

    assert outcome("adapters-arith").verdict is Verdict.PASSED
    wrong = outcome("arith")
    assert wrong.verdict is Verdict.FAILED
    assert "name it 'adapters-arith'" in wrong.findings[0].message


def test_a_distribution_shipping_a_namespace_init_is_caught(tmp_path, monkeypatch):
    site = write_distribution(
        tmp_path, "nenyax-adapters-broken", "1.0", {"adapters-broken": "nenyax_testsupport.fakes"}
    )
    record = "nenyax/__init__.py,,\nnenyax/adapters/__init__.py,,\nnenyax/adapters/broken/__init__.py,,\n"
    (site / "nenyax_adapters_broken-1.0.dist-info" / "RECORD").write_text(record)
    for path in record.split(",,\n")[:-1]:  # what a wheel install puts in place (Python >= 3.12 lists only those)
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).touch()
    monkeypatch.syspath_prepend(str(site))
    sources = [("adapters-broken", AdapterPlugin(), "nenyax-adapters-broken", "1.0")]
    outcome = _report(None, sources=sources, checks=common_checks("adapter"))["adapter/no-namespace-init"]
    assert outcome.verdict is Verdict.FAILED
    assert [f.message.split(" ships ")[1].split(";")[0] for f in outcome.findings] == [
        "nenyax/__init__.py",
        "nenyax/adapters/__init__.py",
    ]


# ---------------------------------------------------------------- the common checks on other kinds


def _common(kind, factory, options=None):
    return _report(
        KindPlugin(kind, "fake", factory), kind=kind, name="fake", checks=common_checks(kind), options=options
    )


def test_the_common_checks_pass_a_sound_judge_and_provider():
    for kind, factory in [("judge", "LengthJudge"), ("provider", "EchoProvider")]:
        outcomes = _common(kind, f"nenyax_testsupport.fakes:{factory}")
        assert set(outcomes) == {c.id for c in common_checks(kind)}
        assert f"{kind}/factory-returns-{kind}" in outcomes
        verdicts = {cid: o.verdict for cid, o in outcomes.items()}
        assert verdicts.pop(f"{kind}/entry-point-named-after-distribution") is Verdict.SKIPPED
        assert verdicts.pop(f"{kind}/no-namespace-init") is Verdict.SKIPPED  # a fake outside nenyax/
        assert set(verdicts.values()) == {Verdict.PASSED}, outcomes


@pytest.mark.parametrize(
    ("kind", "factory", "check", "said"),
    [
        ("judge", "ClaimsTrajectoryJudge", "judge/factory-returns-judge", "declares 'trajectory' but lacks"),
        ("judge", "UndeclaredJudge", "judge/factory-returns-judge", "declares none of the judge capabilities"),
        ("provider", "NoBaseURLProvider", "provider/factory-takes-options", "does not take 'base_url'"),
        ("provider", "NotAnAdapter", "provider/factory-returns-provider", "lacks the provider interface"),
    ],
)
def test_the_common_checks_catch_each_kinds_flaw(kind, factory, check, said):
    outcome = _common(kind, f"nenyax_testsupport.fakes:{factory}")[check]
    assert outcome.verdict is Verdict.FAILED
    assert said in outcome.findings[0].message


def test_a_subject_builds_its_plugin_with_the_options_it_is_given():
    registry = Registry.from_plugins(("fake", KindPlugin("judge", "length", "nenyax_testsupport.fakes:LengthJudge")))
    assert Subject("judge", "length", registry, installed=False, options={"size": 2}).instance().size == 2
    outcomes = _common("judge", "nenyax_testsupport.fakes:LengthJudge", options={"sise": 2})
    taken = outcomes["judge/factory-takes-options"]
    assert taken.verdict is Verdict.FAILED
    assert "takes no option 'sise'; it takes size" in taken.findings[0].message


def test_the_pytest_suite_fails_on_a_broken_adapter(pytester):
    pytester.makepyfile(
        textwrap.dedent(
            """
            import pytest
            from nenyax.core.plugins.registry import Registry
            from nenyax.testing import AdapterConformance, Subject
            from nenyax_testsupport.fakes import AdapterPlugin

            class TestBroken(AdapterConformance):
                plugin = "arith"

                @pytest.fixture
                def subject(self):
                    plugin = AdapterPlugin(factory="nenyax_testsupport.fakes:CrashOnBadURIAdapter")
                    return Subject.from_registry("adapter", "arith", Registry.from_plugins(("fake", plugin)))
            """
        )
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    skipped = len(SKIPPED_ON_THE_SOUND_FAKE)
    result.assert_outcomes(passed=len(CHECKS["adapter"]) - 1 - skipped, failed=1, skipped=skipped)
    result.stdout.fnmatch_lines(["*adapter/bad-uri-is-clear*"])
    result.stdout.fnmatch_lines(["*SKIPPED*adapter/listing-is-loadable: the adapter does not declare 'listing'*"])
