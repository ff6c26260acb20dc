"""The pytest base classes of the kit: subclass one in your plugin's tests and set ``plugin``.

`conformance_suite(kind)` makes the base class of any kind with a kit; ``AdapterConformance`` is the
adapter kind's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from nenyax.testing.checks import CHECKS
from nenyax.testing.report import Check, KitReport, Verdict, run_check
from nenyax.testing.subject import Subject


def conformance_suite(kind: str) -> type:
    """A base class running every `kind` check as its own test against the installed plugin ``plugin``.

    A check that does not apply is a skipped test (with its reason); one that crashes is an error.
    """

    class Conformance:
        plugin: ClassVar[str]
        """The plugin's name."""
        options: ClassVar[Mapping[str, Any]] = {}
        """Options its factory is called with (``factory(**options)``)."""

        @pytest.fixture
        def subject(self) -> Subject:
            """The plugin under test; override to check an in-memory registry."""
            return Subject.from_environment(kind=kind, name=self.plugin, options=self.options)

        @pytest.mark.parametrize("check", CHECKS[kind], ids=lambda c: c.id)
        def test_conformance(self, check: Check, subject: Subject) -> None:
            """Run one check; fails with every finding it reports, or the crash."""
            result = run_check(check, subject)
            if result.outcome is Verdict.SKIPPED:
                pytest.skip(f"{check.id}: {result.evidence}")
            KitReport(kind=kind, name=subject.name, results=(result,)).raise_for_errors()

    Conformance.__name__ = Conformance.__qualname__ = f"{kind.capitalize()}Conformance"
    Conformance.__doc__ = f"""Every {kind} check as its own test, against the installed {kind} named ``plugin``.

    Example::

        class TestMine({kind.capitalize()}Conformance):
            plugin = "mine"
            options = {{}}  # what the factory is called with, if it needs any
    """
    return Conformance


AdapterConformance = conformance_suite("adapter")
"""Every adapter check as its own test: ``class TestMyFormat(AdapterConformance): plugin = "my_format"``."""
