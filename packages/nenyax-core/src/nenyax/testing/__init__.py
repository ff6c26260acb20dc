"""The conformance kit: checks every plugin kind must pass, as plain functions and pytest suites.

``nenyax <kind>-check NAME`` runs the same checks as the pytest base classes, e.g.
`AdapterConformance` (imported lazily, so this package does not need pytest).
"""

from typing import Any

from nenyax.testing.checks import CHECKS
from nenyax.testing.report import Check, ConformanceError, Finding, Outcome, Report, Severity
from nenyax.testing.subject import Subject

__all__ = [
    "CHECKS",
    "AdapterConformance",
    "Check",
    "ConformanceError",
    "Finding",
    "Outcome",
    "Report",
    "Severity",
    "Subject",
]


def __getattr__(name: str) -> Any:
    if name == "AdapterConformance":
        from nenyax.testing.suites import AdapterConformance

        return AdapterConformance
    raise AttributeError(name)
