"""The conformance kit: checks every plugin kind must pass, as plain functions and pytest suites.

``nenyax <kind>-check NAME`` runs the same checks as the pytest base classes, e.g.
`AdapterConformance` (imported lazily, so this package does not need pytest). The checks every kind
shares are written once (`common_checks`); a kind's kit adds its own (`CHECKS`). A check, its `CheckResult` and
the `KitReport` are the one check framework's (`nenyax.core.contract.checking`), which `nenyax check URI` uses too.
"""

from typing import Any

from nenyax.testing.checks import CHECKS, common_checks
from nenyax.testing.report import (
    Check,
    CheckResult,
    ConformanceError,
    Fail,
    Finding,
    KitReport,
    Outcome,
    Report,
    Severity,
    Skip,
    Verdict,
    run_check,
)
from nenyax.testing.subject import Subject

__all__ = [
    "CHECKS",
    "AdapterConformance",
    "Check",
    "CheckResult",
    "ConformanceError",
    "Fail",
    "Finding",
    "KitReport",
    "Outcome",
    "Report",
    "Severity",
    "Skip",
    "Subject",
    "Verdict",
    "common_checks",
    "conformance_suite",
    "run_check",
]


def __getattr__(name: str) -> Any:
    if name in ("AdapterConformance", "conformance_suite"):
        from nenyax.testing import suites

        return getattr(suites, name)
    raise AttributeError(name)
