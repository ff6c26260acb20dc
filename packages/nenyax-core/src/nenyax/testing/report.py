"""Checks, their outcomes and reports, for the conformance kit of every plugin kind (no pytest needed).

A check ends one of four ways (`Verdict`): it passed, it found a flaw (failed, with findings), it did
not apply (skipped, saying why: a capability the plugin does not declare, a registry that is not an
installed distribution), or it crashed (error, with the last line of the traceback). A crash is the
kit's problem or the plugin's, but never a finding under the check's id: a test of the kit can tell
"caught the flaw" from "crashed on it".
"""

from __future__ import annotations

import enum
import traceback
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import attrs

from nenyax.core.errors import NenyaxError

if TYPE_CHECKING:
    from nenyax.testing.subject import Subject


class ConformanceError(NenyaxError):
    """A plugin failed one or more conformance checks (or a check could not run on it)."""


class Severity(enum.Enum):
    """How bad a finding is: errors fail a check, warnings only with ``--strict``."""

    ERROR = "error"
    WARNING = "warning"


class Verdict(enum.Enum):
    """How one check ended."""

    PASSED = "passed"
    FAILED = "failed"
    """It found at least one flaw of severity error."""
    SKIPPED = "skipped"
    """It did not apply; `Outcome.reason` says why."""
    ERROR = "error"
    """It crashed; `Outcome.reason` holds the traceback's last line."""


class Skip(Exception):
    """Raised by a check that does not apply to this plugin; its message is the reason shown."""


@attrs.frozen(kw_only=True)
class Finding:
    """One problem a check found, as a sentence saying what to change."""

    check: str
    message: str
    severity: Severity = Severity.ERROR


@attrs.frozen(kw_only=True)
class Check:
    """One conformance check: a stable public id, a function yielding findings, and its capability gate."""

    id: str
    """Stable id, ``<kind>/<verb-phrase>``; part of the public API."""
    summary: str
    run: Callable[[Subject], Iterable[str | Finding]]
    """Yields a sentence (an error) or a `Finding` per problem; yields nothing when all is well; raises
    `Skip` when it does not apply."""
    requires: tuple[str, ...] = ()
    """Capabilities the plugin must declare (its ``capabilities``) for this check to run; else it is skipped."""


@attrs.frozen(kw_only=True)
class Outcome:
    """How one check ended on one plugin: its verdict, findings, and the reason for a skip or an error."""

    check: Check
    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    reason: str = ""
    """Why it was skipped, or the crash (``ExceptionType: message (at file:line)``)."""

    def failed(self, strict: bool = False) -> bool:
        """True when the check found a flaw: an error finding, or with `strict` any finding (never a crash)."""
        return self.verdict is Verdict.FAILED or (strict and self.verdict is Verdict.PASSED and bool(self.findings))

    def ok(self, strict: bool = False) -> bool:
        """True when nothing stands against the plugin here: passed (or skipped), and no crash."""
        return self.verdict in (Verdict.PASSED, Verdict.SKIPPED) and not self.failed(strict)


def crash_line(exc: BaseException) -> str:
    """The last line of `exc`'s traceback, and where it was raised: ``KeyError: 'x' (at fakes.py:160)``."""
    line = traceback.format_exception_only(type(exc), exc)[-1].strip()
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        line += f" (at {last.filename.rsplit('/', 1)[-1]}:{last.lineno})"
    return line


def _gate(check: Check, subject: Subject) -> str | None:
    """Why `check` does not apply to `subject`'s declared capabilities, or None when it does."""
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


def run_check(check: Check, subject: Subject) -> Outcome:
    """Run one check: each problem it yields is a finding; a skip or a crash is its own verdict."""
    gated = _gate(check, subject)
    if gated:
        return Outcome(check=check, verdict=Verdict.SKIPPED, reason=gated)
    findings: list[Finding] = []
    try:
        for item in check.run(subject):
            findings.append(item if isinstance(item, Finding) else Finding(check=check.id, message=item))
    except Skip as skip:
        if not findings:
            return Outcome(check=check, verdict=Verdict.SKIPPED, reason=str(skip))
    except Exception as exc:  # noqa: BLE001 - a crash is no finding: the plugin may not be at fault
        return Outcome(check=check, verdict=Verdict.ERROR, findings=tuple(findings), reason=crash_line(exc))
    failed = any(f.severity is Severity.ERROR for f in findings)
    return Outcome(check=check, verdict=Verdict.FAILED if failed else Verdict.PASSED, findings=tuple(findings))


@attrs.frozen(kw_only=True)
class Report:
    """Every check's outcome for one plugin."""

    kind: str
    name: str
    outcomes: tuple[Outcome, ...]

    @classmethod
    def of(cls, checks: Iterable[Check], subject: Subject) -> Report:
        """Run `checks` against `subject`, collecting every outcome (never stopping early)."""
        return cls(kind=subject.kind, name=subject.name, outcomes=tuple(run_check(c, subject) for c in checks))

    def failed(self, strict: bool = False) -> list[Outcome]:
        """Outcomes that stand against the plugin: failed checks and crashed ones."""
        return [o for o in self.outcomes if not o.ok(strict)]

    def raise_for_errors(self, strict: bool = False) -> None:
        """Raise `ConformanceError` listing every failed check's findings and every crash."""
        bad = self.failed(strict)
        if bad:
            lines = [f"{f.check}: {f.message}" for o in bad for f in o.findings]
            lines += [f"{o.check.id}: the check crashed: {o.reason}" for o in bad if o.verdict is Verdict.ERROR]
            msg = f"{self.kind} {self.name!r} failed {len(bad)} conformance check(s):\n" + "\n".join(lines)
            raise ConformanceError(msg)
