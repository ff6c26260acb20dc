"""The one check framework: a check, how it ended, and a report of many, behind `nenyax check` and `<kind>-check`.

A `Check` has a stable id, a one-line summary, what it needs (`requires`) and a function run on a subject
(an environment's check context, or a plugin under test). The function may be sync or async; it ends
one of four ways (`Verdict`):

* it returns: passed, its evidence the sentence it returned (or nothing, when it only looks for problems);
* it yields problems (sentences or `Finding`): failed when one is an error, else passed with warnings;
* it raises `Skip`: it cannot run or does not apply, the message says why (problems already yielded stand);
* it raises `Fail`: it ran and found a problem, the message is the evidence;
* anything else it raises is a crash: the caller says what a crash is (the kit: an error, never a finding
  under the check's id; the tiers: a failure of the environment).

`run_check` and `arun_check` turn one check into a `CheckResult`; a `CheckReport` holds the results of one
subject. The tiers (`nenyax.core.tiers`) and the conformance kit (`nenyax.testing`) specialise `Check`,
`CheckResult` and `CheckReport` thinly: a tier check gates a tier, a kit check is gated by capabilities.
"""

from __future__ import annotations

import enum
import inspect
import time
import traceback
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from nenyax.core.contract.schema import Record


class Skip(Exception):
    """Raised by a check that cannot run, or does not apply to its subject; its message says why."""


class Fail(Exception):
    """Raised by a check that ran and found a problem; its message is the evidence."""


class Verdict(enum.Enum):
    """How one check ended."""

    PASSED = "passed"
    FAILED = "failed"
    """It found a problem (`Fail`, or a finding of severity error)."""
    SKIPPED = "skipped"
    """It could not run or did not apply; the evidence says why."""
    ERROR = "error"
    """It crashed; the evidence holds the exception (the kit's checks; a tier check's crash fails it)."""


class Severity(enum.Enum):
    """How bad a finding is: errors fail a check, warnings only a strict run."""

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
    """One check: a stable public id, a summary, what it needs, and the function run on a subject."""

    id: str
    """Stable id, ``<group>/<verb-phrase>`` (a tier or a plugin kind, then what it proves); public API."""
    summary: str = ""
    """What it proves, in a line."""
    run: Callable[[Any], Any]
    """Called with the subject; returns its evidence, yields problems, or is a coroutine doing either."""
    requires: tuple[str, ...] = ()
    """What the subject must have for the check to run (a plugin's declared capabilities); else it is skipped."""


@attrs.frozen(kw_only=True)
class CheckName:
    """What remains of a check in its result: its id (``result.check.id``; the kit's results held the check)."""

    id: str


@attrs.frozen(kw_only=True)
class CheckResult(Record):
    """How one check ended on one subject: its verdict, evidence, problems found and time taken."""

    id: str
    """The check's id."""
    outcome: Verdict
    evidence: str = ""
    """What was observed, why it was skipped, or the crash, in a sentence or two (empty for a silent pass)."""
    findings: tuple[Finding, ...] = ()
    seconds: float = 0.0

    def failed(self, strict: bool = False) -> bool:
        """True when the check found a flaw: an error, or with `strict` any finding (never a crash)."""
        return self.outcome is Verdict.FAILED or (strict and self.outcome is Verdict.PASSED and bool(self.findings))

    def ok(self, strict: bool = False) -> bool:
        """True when nothing stands against the subject here: passed (or skipped), and no crash."""
        return self.outcome in (Verdict.PASSED, Verdict.SKIPPED) and not self.failed(strict)

    # The kit's names before one check framework (issue 38): kept for one minor version.
    @property
    def verdict(self) -> Verdict:
        """`outcome` (the kit's name for it)."""
        return self.outcome

    @property
    def reason(self) -> str:
        """`evidence` (the kit's name for why a check was skipped or crashed)."""
        return self.evidence

    @property
    def check(self) -> CheckName:
        """The check's id as ``result.check.id`` (the kit's results held the check itself)."""
        return CheckName(id=self.id)


@attrs.frozen(kw_only=True)
class CheckReport(Record):
    """The results of every check run on one subject, in the order they ran."""

    results: tuple[CheckResult, ...] = ()

    def failures(self, strict: bool = False) -> tuple[CheckResult, ...]:
        """Results that stand against the subject: failed checks (with `strict`, warnings too) and crashes."""
        return tuple(r for r in self.results if not r.ok(strict))

    def passed(self, strict: bool = False) -> bool:
        """True when no result stands against the subject."""
        return not self.failures(strict)


def crash_line(exc: BaseException) -> str:
    """The last line of `exc`'s traceback, and where it was raised: ``KeyError: 'x' (at fakes.py:160)``."""
    line = traceback.format_exception_only(type(exc), exc)[-1].strip()
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        line += f" (at {last.filename.rsplit('/', 1)[-1]}:{last.lineno})"
    return line


def crash_is_error(exc: Exception) -> tuple[Verdict, str]:
    """The default reading of a crash: an error of the check, not a finding about its subject."""
    return Verdict.ERROR, crash_line(exc)


Gate = Callable[[Check], "str | None"]
"""Why a check does not apply to the subject (it is skipped, saying so), or None when it does."""
Crash = Callable[[Exception], tuple[Verdict, str]]
"""What a crash of a check is: its verdict and evidence (`crash_is_error` unless the caller says otherwise)."""


class _Tally:
    """The problems a check yielded so far, so they stand when it then skips, fails or crashes."""

    def __init__(self, check: Check) -> None:
        self.check = check
        self.findings: list[Finding] = []

    def take(self, items: Iterable[str | Finding]) -> None:
        for item in items:
            self.findings.append(item if isinstance(item, Finding) else Finding(check=self.check.id, message=item))

    def ended(self, produced: Any, started: float) -> CheckResult:
        """The result of a check that returned `produced` (its evidence, or None) after yielding its problems."""
        failed = any(f.severity is Severity.ERROR for f in self.findings)
        return CheckResult(
            id=self.check.id,
            outcome=Verdict.FAILED if failed else Verdict.PASSED,
            evidence=produced if isinstance(produced, str) else "",
            findings=tuple(self.findings),
            seconds=time.perf_counter() - started,
        )

    def stopped(self, exc: Exception, started: float, crash: Crash) -> CheckResult:
        """The result of a check that raised `exc`."""
        if isinstance(exc, Skip) and not self.findings:
            outcome, evidence = Verdict.SKIPPED, str(exc)
        elif isinstance(exc, Skip):  # the problems found before it stopped still stand
            return self.ended(None, started)
        elif isinstance(exc, Fail):
            outcome, evidence = Verdict.FAILED, str(exc)
        else:
            outcome, evidence = crash(exc)
        return CheckResult(
            id=self.check.id,
            outcome=outcome,
            evidence=evidence,
            findings=tuple(self.findings),
            seconds=time.perf_counter() - started,
        )


def _gated(check: Check, gate: Gate | None) -> CheckResult | None:
    why = gate(check) if gate is not None else None
    return CheckResult(id=check.id, outcome=Verdict.SKIPPED, evidence=why) if why else None


def run_check(check: Check, subject: Any, *, gate: Gate | None = None, crash: Crash = crash_is_error) -> CheckResult:
    """Run one synchronous check on `subject`: its result, never an exception (but `BaseException`s)."""
    skipped = _gated(check, gate)
    if skipped is not None:
        return skipped
    tally, started = _Tally(check), time.perf_counter()
    try:
        produced = check.run(subject)
        if inspect.isawaitable(produced):
            _discard(produced)
            msg = f"{check.id} is an async check: run it with arun_check."
            raise TypeError(msg)
        if produced is not None and not isinstance(produced, str):
            tally.take(produced)
    except Exception as exc:  # noqa: BLE001 - every way a check ends is a result
        return tally.stopped(exc, started, crash)
    return tally.ended(produced, started)


async def arun_check(
    check: Check, subject: Any, *, gate: Gate | None = None, crash: Crash = crash_is_error
) -> CheckResult:
    """Run one check, sync or async, on `subject`: its result, never an exception (but `BaseException`s)."""
    skipped = _gated(check, gate)
    if skipped is not None:
        return skipped
    tally, started = _Tally(check), time.perf_counter()
    try:
        produced = check.run(subject)
        if inspect.isawaitable(produced):
            produced = await produced
        if produced is not None and not isinstance(produced, str):
            tally.take(produced)
    except Exception as exc:  # noqa: BLE001 - every way a check ends is a result
        return tally.stopped(exc, started, crash)
    return tally.ended(produced, started)


def _discard(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)  # a coroutine never awaited would warn at garbage collection
    if close is not None:
        close()
