"""Each adapter conformance check passes on the sound fake and fails on a fake broken its way."""

import sys
import textwrap

import pytest

from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.plugins.registry import Registry
from nenyax.testing import CHECKS, Report, Subject
from nenyax.testing.fakes import AdapterPlugin

pytest_plugins = ["pytester"]


def _report(plugin):
    subject = Subject.from_registry("adapter", "arith", Registry.from_plugins(("fake", plugin)))
    return {o.check.id: o for o in Report.of(CHECKS["adapter"], subject).outcomes}


def test_the_sound_fake_passes_every_check():
    outcomes = _report(AdapterPlugin())
    assert {cid: o.findings for cid, o in outcomes.items() if o.failed()} == {}
    assert set(outcomes) == {c.id for c in CHECKS["adapter"]}


@pytest.mark.parametrize(
    ("check_id", "factory"),
    [
        ("adapter/factory-returns-adapter", "nenyax.testing.fakes:NotAnAdapter"),
        ("adapter/factory-returns-adapter", "nenyax.testing.fakes:ForeignExamplesAdapter"),
        ("adapter/examples-load", "nenyax.testing.fakes:UnstableManifestAdapter"),
        ("adapter/bad-uri-is-clear", "nenyax.testing.fakes:CrashOnBadURIAdapter"),
        ("adapter/examples-reach-claimed-tier", "nenyax.testing.fakes:WrongReferenceAdapter"),
        ("adapter/trajectory-roundtrip", "nenyax.testing.fakes:TupleObservationAdapter"),
        ("adapter/factory-importable", "nenyax_no_such_module:Adapter"),
    ],
)
def test_each_check_catches_its_flaw(check_id, factory):
    outcomes = _report(AdapterPlugin(factory=factory))
    assert outcomes[check_id].failed(), f"{check_id} did not catch {factory}"


def test_registration_that_imports_the_implementation_is_caught(tmp_path, monkeypatch):
    (tmp_path / "nenyax_heavy_impl.py").write_text("from nenyax.testing.fakes import ArithAdapter as Adapter\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    class EagerPlugin:
        @hookimpl
        def nenyax_register_adapters(self):
            import nenyax_heavy_impl  # noqa: F401 - the flaw: importing the implementation at discovery

            return PluginSpec(kind="adapter", name="arith", factory="nenyax_heavy_impl:Adapter")

    try:
        assert _report(EagerPlugin())["adapter/registration-is-lazy"].failed()
    finally:
        sys.modules.pop("nenyax_heavy_impl", None)


def test_the_pytest_suite_fails_on_a_broken_adapter(pytester):
    pytester.makepyfile(
        textwrap.dedent(
            """
            import pytest
            from nenyax.core.plugins.registry import Registry
            from nenyax.testing import AdapterConformance, Subject
            from nenyax.testing.fakes import AdapterPlugin

            class TestBroken(AdapterConformance):
                plugin = "arith"

                @pytest.fixture
                def subject(self):
                    plugin = AdapterPlugin(factory="nenyax.testing.fakes:CrashOnBadURIAdapter")
                    return Subject.from_registry("adapter", "arith", Registry.from_plugins(("fake", plugin)))
            """
        )
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(CHECKS["adapter"]) - 1, failed=1)
    result.stdout.fnmatch_lines(["*adapter/bad-uri-is-clear*"])
