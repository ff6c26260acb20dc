"""Findings and reports of the conformance kit (no pytest needed)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import attrs

from nenyax.core.errors import NenyaxError

if TYPE_CHECKING:
    from nenyax.testing.subject import Subject


class ConformanceError(NenyaxError):
    """A plugin failed one or more conformance checks."""


class Severity(enum.Enum):
    """How bad a finding is: errors fail a check, warnings only with ``--strict``."""

    ERROR = "error"
    WARNING = "warning"


@attrs.frozen(kw_only=True)
class Finding:
    """One problem a check found, as a sentence saying what to change."""

    check: str
    message: str
    severity: Severity = Severity.ERROR


@attrs.frozen(kw_only=True)
class Check:
    """One conformance check: a stable public id and a function yielding findings."""

    id: str
    """Stable id, ``<kind>/<verb-phrase>``; part of the public API."""
    summary: str
    run: Callable[[Subject], Iterable[str | Finding]]
    """Yields a sentence (an error) or a `Finding` per problem; yields nothing when all is well."""


@attrs.frozen(kw_only=True)
class Outcome:
    """A check's findings, or the crash that stopped it (itself an error)."""

    check: Check
    findings: tuple[Finding, ...]

    def failed(self, strict: bool = False) -> bool:
        """True when an error (or, with `strict`, a warning) was found."""
        return any(f.severity is Severity.ERROR or strict for f in self.findings)


def run_check(check: Check, subject: Subject) -> Outcome:
    """Run one check, turning each problem (and any crash) into a finding."""
    findings = []
    try:
        for item in check.run(subject):
            findings.append(item if isinstance(item, Finding) else Finding(check=check.id, message=item))
    except Exception as exc:  # a check that crashes on a plugin has found a problem with it
        findings.append(Finding(check=check.id, message=f"The check crashed: {type(exc).__name__}: {exc}"))
    return Outcome(check=check, findings=tuple(findings))


@attrs.frozen(kw_only=True)
class Report:
    """Every check's outcome for one plugin."""

    kind: str
    name: str
    outcomes: tuple[Outcome, ...]

    @classmethod
    def of(cls, checks: Iterable[Check], subject: Subject) -> Report:
        """Run `checks` against `subject`, collecting every finding (never stopping early)."""
        return cls(kind=subject.kind, name=subject.name, outcomes=tuple(run_check(c, subject) for c in checks))

    def failed(self, strict: bool = False) -> list[Outcome]:
        """Outcomes that failed."""
        return [o for o in self.outcomes if o.failed(strict)]

    def raise_for_errors(self, strict: bool = False) -> None:
        """Raise `ConformanceError` listing every failed check's findings."""
        bad = self.failed(strict)
        if bad:
            lines = [f"{f.check}: {f.message}" for o in bad for f in o.findings]
            msg = f"{self.kind} {self.name!r} failed {len(bad)} conformance check(s):\n" + "\n".join(lines)
            raise ConformanceError(msg)
