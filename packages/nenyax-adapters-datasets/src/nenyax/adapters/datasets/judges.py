"""The ``exact`` and ``numeric`` judges: an extracted answer against the gold answer.

A judge returns a `Judgment` for any answer (garbage scores 0); it raises `VerifierFailure` only when
it cannot decide, e.g. a gold answer the numeric judge cannot read as a number.
"""

from __future__ import annotations

import math
import re
import unicodedata
from fractions import Fraction
from typing import Any

from nenyax.core import JudgeCapabilities, Judgment
from nenyax.core.errors import UsageError, VerifierFailure
from nenyax.core.toolkit.qa import quoted

# Words are runs of letters and digits, keeping the inner punctuation of numbers and dates
# ("3.5", "1,000", "1/2", "2024-01-02") and a leading minus sign.
_WORD = re.compile(r"-?\w+(?:[.,/:-]\w+)*")
_NUMBER_NOISE = re.compile(r"[,$€£%\s]|\\[,!;: ]|\\%|\\\$")


def normalize(text: str) -> str:
    """Case-folded words separated by single spaces, with other punctuation dropped."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", str(text)).casefold()))


def _verdict(ok: bool, answer: str, gold: Any, judge: str, how: str) -> Judgment:
    return Judgment(
        score=1.0 if ok else 0.0,
        passed=ok,
        components={judge: 1.0 if ok else 0.0},
        feedback=f"answered {quoted(answer)}, expected {quoted(str(gold))} ({how})",
        judge=judge,
    )


class ExactJudge:
    """Exact match after normalising case, whitespace and punctuation."""

    capabilities = JudgeCapabilities(answer=True)

    def judge(self, answer: str, reference: Any) -> Judgment:
        """1 when the normalised answer equals the normalised reference (or one of a list of references)."""
        golds = reference if isinstance(reference, list | tuple) else [reference]
        ok = any(normalize(answer) == normalize(g) for g in golds)
        return _verdict(ok, answer, reference, "exact", "after normalising case, whitespace and punctuation")


def parse_number(text: str) -> float | None:
    """A number from `text` ("1,234.5", "$3", "50%", "3/4", "-2e-3", "\\frac{1}{2}"), or None."""
    cleaned = _NUMBER_NOISE.sub("", str(text)).strip().rstrip(".")
    frac = re.fullmatch(r"(-?)\\d?frac\{(-?[\d.]+)\}\{(-?[\d.]+)\}", cleaned)
    if frac:
        cleaned = f"{frac.group(1)}{frac.group(2)}/{frac.group(3)}"
    try:
        return float(Fraction(cleaned)) if "/" in cleaned else float(cleaned)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


class NumericJudge:
    """Numbers equal within ``tolerance`` (relative to the gold's size, and at least absolute)."""

    capabilities = JudgeCapabilities(answer=True)

    def __init__(self, tolerance: float = 1e-6) -> None:
        """`tolerance` is both the relative and the absolute tolerance of `math.isclose`."""
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 <= tolerance < math.inf:
            msg = f"The numeric judge's tolerance must be a finite, non-negative number, got {tolerance!r}."
            raise UsageError(msg)
        self.tolerance = float(tolerance)

    def judge(self, answer: str, reference: Any) -> Judgment:
        """1 when both read as numbers within the tolerance; 0 when the answer is not a number."""
        gold = parse_number(reference)
        if gold is None:
            msg = f"The numeric judge cannot read the gold answer {reference!r} as a number."
            raise VerifierFailure(msg)
        value = parse_number(answer)
        ok = value is not None and math.isclose(value, gold, rel_tol=self.tolerance, abs_tol=self.tolerance)
        how = f"within {self.tolerance:g}" if value is not None else "the answer is not a number"
        return _verdict(ok, answer, reference, "numeric", how)
