"""The ``exact`` and ``numeric`` judges: an extracted answer against the gold answer.

A judge returns a `Judgment` for any answer (garbage scores 0); it raises `VerifierFailure` only when
it cannot decide, e.g. a gold answer the numeric judge cannot read as a number. Each also says, through
``unreadable_gold``, which golds it cannot read, so the adapter names those rows when it loads.

A list gold (`ListGold`, an ARC grid) is compared item by item with the reply read as a list
(`lists.read_list`), by the judge's own rule for each item.
"""

from __future__ import annotations

import math
import re
import unicodedata
from fractions import Fraction
from typing import Any

from nenyax.adapters.datasets.golds import ListGold, Nested
from nenyax.adapters.datasets.lists import read_list, same_list
from nenyax.core import JudgeCapabilities, Judgment
from nenyax.core.errors import UsageError, VerifierFailure
from nenyax.core.toolkit.qa import quoted

# Words are runs of letters and digits, keeping the inner punctuation of numbers and dates
# ("3.5", "1,000", "1/2", "2024-01-02") and a leading minus sign.
_WORD = re.compile(r"-?\w+(?:[.,/:-]\w+)*")
_NUMBER_NOISE = re.compile(r"[,$€£\s]|\\[,!;: ]|\\\$|\{,\}")
# Minus signs and dashes a reply may use for "-", and the fraction slash NFKC leaves in "½".
_SIGNS = str.maketrans(dict.fromkeys("\u2212\u2010\u2011\u2012\u2013\u2014\ufe63\uff0d", "-") | {"\u2044": "/"})


def normalize(text: str) -> str:
    """Case-folded words separated by single spaces, with other punctuation dropped."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", str(text)).translate(_SIGNS).casefold()))


def _verdict(ok: bool, answer: str, gold: Any, judge: str, how: str) -> Judgment:
    return Judgment(
        score=1.0 if ok else 0.0,
        passed=ok,
        components={judge: 1.0 if ok else 0.0},
        feedback=f"answered {quoted(answer)}, expected {quoted(str(gold))} ({how})",
        judge=judge,
    )


def _list_answer(answer: str, gold: ListGold) -> Nested | None:
    """The reply read as a list of `gold`'s depth (a one-row grid also reads from a flat row)."""
    read = read_list(answer)
    one_row = len(gold.items) == 1 and isinstance(gold.items[0], tuple)
    if one_row and read and not isinstance(read[0], tuple):
        read = (read,)
    return read


class ExactJudge:
    """Exact match after normalising case, whitespace and punctuation; a list gold item by item."""

    capabilities = JudgeCapabilities(answer=True)

    def judge(self, answer: str, reference: Any) -> Judgment:
        """1 when the normalised answer equals the normalised reference (or one of a list of references)."""
        if isinstance(reference, ListGold):
            read = _list_answer(answer, reference)
            ok = read is not None and same_list(read, reference.items, lambda a, g: normalize(a) == normalize(g))
            return _verdict(ok, answer, reference, "exact", "item by item, after normalising each")
        golds = reference if isinstance(reference, list | tuple) else [reference]
        ok = any(normalize(answer) == normalize(g) for g in golds)
        return _verdict(ok, answer, reference, "exact", "after normalising case, whitespace and punctuation")

    def unreadable_gold(self, reference: Any) -> str | None:
        """None: any text is a gold answer to compare with."""
        return None


def _plain_number(cleaned: str) -> float | None:
    frac = re.fullmatch(r"(-?)\\d?frac\{(-?[\d.]+)\}\{(-?[\d.]+)\}", cleaned)
    if frac:
        cleaned = f"{frac.group(1)}{frac.group(2)}/{frac.group(3)}"
    try:
        value = float(Fraction(cleaned)) if "/" in cleaned else float(cleaned)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def parse_number(text: str, *, latex: bool = True) -> float | None:
    """A number from `text` ("1,234.5", "$3", "3/4", "-2e-3", "\\frac{1}{2}", "\\frac34"), or None.

    A Unicode minus sign or dash reads as "-". A percent sign means hundredths: "50%" is 0.5. LaTeX that
    is not a plain fraction is read by math-verify (`VerifierFailure` when that takes too long or a
    number is too large to compute). ``latex=False`` reads plain numbers only.
    """
    text = unicodedata.normalize("NFKC", str(text)).translate(_SIGNS).strip().rstrip(".").strip()
    cleaned = _NUMBER_NOISE.sub("", text)
    percent = cleaned.endswith("%")
    if percent:
        cleaned = cleaned.removesuffix("\\%") if cleaned.endswith("\\%") else cleaned.removesuffix("%")
    if not cleaned or "%" in cleaned:
        return None
    value = _plain_number(cleaned)
    if value is None and latex and "\\" in cleaned:
        from nenyax.adapters.datasets.mathjudge import read_number

        value = read_number(cleaned)
    if value is None:
        return None
    return value / 100 if percent else value


class NumericJudge:
    """Numbers equal within ``tolerance`` (relative to the gold's size, and at least absolute)."""

    capabilities = JudgeCapabilities(answer=True)

    def __init__(self, tolerance: float = 1e-6) -> None:
        """`tolerance` is both the relative and the absolute tolerance of `math.isclose`."""
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 <= tolerance < math.inf:
            msg = f"The numeric judge's tolerance must be a finite, non-negative number, got {tolerance!r}."
            raise UsageError(msg)
        self.tolerance = float(tolerance)

    def _close(self, answer: str, gold: str) -> bool:
        value, expected = parse_number(answer), parse_number(gold)
        return (
            value is not None
            and expected is not None
            and math.isclose(value, expected, rel_tol=self.tolerance, abs_tol=self.tolerance)
        )

    def unreadable_gold(self, reference: Any) -> str | None:
        """What makes `reference` no gold for this judge (a text that is no number), or None.

        A gold with LaTeX that is not a plain fraction passes here and is read when judged.
        """
        items = _leaves(reference.items) if isinstance(reference, ListGold) else [str(reference)]
        for item in items:
            # LaTeX is read when judging: math-verify takes about 0.1 s a gold, minutes for a large file at load.
            if parse_number(item, latex=False) is None and "\\" not in item:
                return f"a gold answer the numeric judge cannot read as a number ({item[:80]!r})"
        return None

    def judge(self, answer: str, reference: Any) -> Judgment:
        """1 when both read as numbers within the tolerance; 0 when the answer is not a number."""
        golds = _leaves(reference.items) if isinstance(reference, ListGold) else [str(reference)]
        if any(parse_number(gold) is None for gold in golds):
            msg = f"The numeric judge cannot read the gold answer {str(reference)[:80]!r} as a number."
            raise VerifierFailure(msg)
        if isinstance(reference, ListGold):
            read = _list_answer(answer, reference)
            ok = read is not None and same_list(read, reference.items, self._close)
            return _verdict(ok, answer, reference, "numeric", f"item by item, each within {self.tolerance:g}")
        value = parse_number(answer)
        ok = value is not None and self._close(answer, str(reference))
        how = f"within {self.tolerance:g}" if value is not None else "the answer is not a number"
        return _verdict(ok, answer, reference, "numeric", how)


def _leaves(items: Nested) -> list[str]:
    return [leaf for item in items for leaf in (_leaves(item) if isinstance(item, tuple) else [item])]
