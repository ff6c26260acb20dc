"""The conformance kit's reports: the one check framework (`nenyax.core.contract.checking`), gated by capabilities.

A check ends one of four ways (`Verdict`): it passed, it found a flaw (failed, with findings), it did
not apply (skipped, saying why: a capability the plugin does not declare, a registry that is not an
installed distribution), or it crashed (error, with the last line of the traceback). A crash is the
kit's problem or the plugin's, but never a finding under the check's id: a test of the kit can tell
"caught the flaw" from "crashed on it".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import attrs

from nenyax.core.contract import checking
from nenyax.core.contract.checking import (
    Check,
    CheckResult,
    Fail,
    Finding,
    Severity,
    Skip,
    Verdict,
    crash_line,
)
from nenyax.core.contract.checking import run_check as run_one
from nenyax.core.contract.schema import SCHEMA_VERSION, SchemaVersion
from nenyax.core.errors import NenyaxError

if TYPE_CHECKING:
    from nenyax.testing.subject import Subject

__all__ = [
    "Check",
    "ConformanceError",
    "Fail",
    "Finding",
    "KitReport",
    "Outcome",
    "Report",
    "CheckResult",
    "Severity",
    "Skip",
    "Verdict",
    "crash_line",
    "run_check",
]

Outcome = CheckResult
"""The kit's name for a check's result before one check framework (issue 38); kept for one minor version."""


class ConformanceError(NenyaxError):
    """A plugin failed one or more conformance checks (or a check could not run on it)."""


def _gate(subject: Subject) -> Callable[[Check], str | None]:
    """Why a check does not apply to `subject`'s declared capabilities (it is skipped), or None when it does."""

    def gate(check: Check) -> str | None:
        if not check.requires:
            return None
        try:
            have = subject.declared()
        except Exception as exc:  # noqa: BLE001 - the instance could not be built: the factory checks report why
            return f"its capabilities are unknown, as the factory failed ({crash_line(exc)})"
        lacking = [c for c in check.requires if c not in have]
        if lacking:
            return f"the {subject.kind} does not declare {', '.join(map(repr, lacking))}"
        return None

    return gate


def run_check(check: Check, subject: Subject) -> CheckResult:
    """Run one check on a plugin: each problem it yields is a finding; a skip or a crash is its own verdict."""
    return run_one(check, subject, gate=_gate(subject))


@attrs.frozen(kw_only=True)
class KitReport(checking.CheckReport):
    """Every check's result for one plugin of one kind."""

    kind: str
    name: str
    schema_version: SchemaVersion = SCHEMA_VERSION

    @classmethod
    def of(cls, checks: Iterable[Check], subject: Subject) -> KitReport:
        """Run `checks` against `subject`, collecting every result (never stopping early)."""
        return cls(kind=subject.kind, name=subject.name, results=tuple(run_check(c, subject) for c in checks))

    @property
    def outcomes(self) -> tuple[CheckResult, ...]:
        """`results` (the kit's name for them before issue 38, for one minor version)."""
        return self.results

    def failed(self, strict: bool = False) -> list[CheckResult]:
        """Results that stand against the plugin: failed checks and crashed ones (`failures`, as a list)."""
        return list(self.failures(strict))

    def raise_for_errors(self, strict: bool = False) -> None:
        """Raise `ConformanceError` listing every failed check's findings and every crash."""
        bad = self.failures(strict)
        if bad:
            lines = [f"{f.check}: {f.message}" for r in bad for f in r.findings]
            lines += [f"{r.id}: {r.evidence}" for r in bad if r.outcome is Verdict.FAILED and not r.findings]
            lines += [f"{r.id}: the check crashed: {r.evidence}" for r in bad if r.outcome is Verdict.ERROR]
            msg = f"{self.kind} {self.name!r} failed {len(bad)} conformance check(s):\n" + "\n".join(lines)
            raise ConformanceError(msg)


Report = KitReport
"""The kit's report by its name before issue 38 (`nenyax.testing.Report`); kept for one minor version."""
