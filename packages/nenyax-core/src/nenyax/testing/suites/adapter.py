"""``AdapterConformance``: subclass it in your adapter's tests and set ``plugin``."""

from __future__ import annotations

from typing import ClassVar

import pytest

from nenyax.testing.checks import CHECKS
from nenyax.testing.report import Check, Report
from nenyax.testing.subject import Subject


class AdapterConformance:
    """Every adapter check as its own test, against the installed adapter named ``plugin``.

    Example::

        class TestMyFormat(AdapterConformance):
            plugin = "my_format"
    """

    plugin: ClassVar[str]

    @pytest.fixture
    def subject(self) -> Subject:
        """The plugin under test; override to check an in-memory registry."""
        return Subject.from_environment(kind="adapter", name=self.plugin)

    @pytest.mark.parametrize("check", CHECKS["adapter"], ids=lambda c: c.id)
    def test_conformance(self, check: Check, subject: Subject) -> None:
        """Run one check; fails with every finding it reports."""
        Report.of([check], subject).raise_for_errors()
