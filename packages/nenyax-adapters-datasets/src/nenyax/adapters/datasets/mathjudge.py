"""The ``math`` judge: mathematical equivalence by math-verify, the checker TRL and open-r1 reward with.

What it does, in order: the answer and the gold are equal as text (ignoring spaces, case, ``$`` and a
final period) -> 1. Else both are parsed by math-verify (each wrapped in ``$...$`` so it is read as
LaTeX, as the field's reward functions do for a bare answer; plain expressions such as ``1/2`` are
read too) and compared with ``math_verify.verify(gold, answer)``, gold first: numbers to 6 decimals,
fractions and decimals, ``\\dfrac``/``\\tfrac``, ``\\left(..\\right)``, units text, reordered sums,
sets, intervals, tuples, ``x = 3`` against ``3``.

An answer it cannot read scores 0. It decides nothing, and says so with `VerifierFailure` (the episode
is ``verifier_error``, never a score), when: the gold cannot be read as mathematics; a number in
either has more than `mathguard.MAX_DIGITS` digits (refused before sympy tries to compute it); or
parsing and comparing take longer than ``timeout`` seconds (default 5; ``?judge.timeout=``). The
timeout works in any thread and inside an event loop (math-verify's own uses signals, main thread
only, so it is switched off).
"""

from __future__ import annotations

import functools
import logging
import math
from typing import Any

from nenyax.adapters.datasets.deadline import DeadlineExceeded, call_with_deadline
from nenyax.adapters.datasets.golds import ListGold
from nenyax.adapters.datasets.mathguard import TooLarge, check_size
from nenyax.core import JudgeCapabilities, Judgment
from nenyax.core.errors import UsageError, VerifierFailure
from nenyax.core.toolkit.qa import quoted

DEFAULT_TIMEOUT = 5.0
"""Seconds math-verify may spend on one judgment (parsing both sides and comparing)."""

# Our deadline replaces math-verify's signal-based timeouts, which are switched off; math-verify warns
# once about that, and logs every comparison it could not make at debug level. Neither is news here.
logging.getLogger("math_verify").setLevel(logging.ERROR)


def _compact(text: str) -> str:
    # Stricter than the exact judge's normalisation: in maths "x^2 + 1" and "x^2 - 1" differ by punctuation.
    return "".join(str(text).split()).replace("$", "").casefold().rstrip(".")


def _as_latex(text: str) -> str:
    """`text` in ``$...$`` unless it carries its own delimiters; a currency ``\\$`` would end the math early."""
    text = text.replace("\\$", "").strip()
    return text if "$" in text or "\\boxed" in text or "\\(" in text or "\\[" in text else f"${text}$"


def _parse(text: str, *, gold: bool) -> list[Any]:
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    configs = [LatexExtractionConfig(), ExprExtractionConfig()]
    # parsing_timeout=None: no signal.alarm (our deadline bounds the whole judgment instead).
    found = parse(_as_latex(text), extraction_config=configs, parsing_timeout=None)
    if not found and gold:  # a gold that is plain text with a stray delimiter: read it as written
        found = parse(text, extraction_config=configs, parsing_timeout=None)
    return list(found)


@functools.lru_cache(maxsize=4096)
def _parsed_gold(text: str) -> tuple[Any, ...]:
    # The same gold is judged against every reply to its task: parse it once. sympy's results are immutable.
    return tuple(_parse(text, gold=True))


def _load() -> None:
    """Import math-verify (and sympy, antlr) before any deadline starts: an import is not a judgment, and one
    stopped halfway by a deadline leaves a module that every later judgment would find broken."""
    import math_verify  # noqa: F401
    from latex2sympy2_extended import latex2sympy  # noqa: F401


def read_number(text: str, timeout: float = DEFAULT_TIMEOUT) -> float | None:
    """The real number math-verify reads in `text` (``\\frac34``, ``3\\tfrac12``, ``2\\sqrt2``), or None.

    `VerifierFailure` when reading takes over `timeout` seconds or a number is too large to compute.
    """
    import sympy

    _load()
    try:
        found = call_with_deadline(lambda: _parse(text, gold=True), timeout)
        check_size(found)
    except DeadlineExceeded as exc:
        msg = f"math-verify {exc} reading {text[:80]!r} as a number."
        raise VerifierFailure(msg) from exc
    except TooLarge as exc:
        msg = f"Cannot read {text[:80]!r} as a number: {exc}."
        raise VerifierFailure(msg) from exc
    for value in found:
        if isinstance(value, sympy.Basic) and value.is_number:
            try:
                number = complex(value.evalf())
            except (TypeError, ValueError, OverflowError):
                return None
            return number.real if number.imag == 0 and math.isfinite(number.real) else None
    return None


def _compare(answer: str, gold: str) -> tuple[bool, str]:
    from math_verify import verify

    golds = list(_parsed_gold(gold))
    if not golds:
        msg = f"math-verify cannot read the gold answer {gold!r} as mathematics."
        raise VerifierFailure(msg)
    check_size(golds)
    answers = _parse(answer, gold=False)
    if not answers:
        return False, "math-verify cannot read the answer as mathematics"
    check_size(answers)
    ok = verify(golds, answers, timeout_seconds=None)
    return ok, "equal by math-verify" if ok else "not equal by math-verify"


class MathJudge:
    """Mathematical equivalence by math-verify, with a timeout (see the module docstring for the rules)."""

    capabilities = JudgeCapabilities(answer=True)

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """`timeout`: seconds one judgment may take before it is a `VerifierFailure`."""
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
            msg = f"The math judge's timeout must be a positive number of seconds, got {timeout!r}."
            raise UsageError(msg)
        self.timeout = float(timeout)

    def unreadable_gold(self, reference: Any) -> str | None:
        """A list gold (a grid), which math-verify would read as intervals; other golds are read when judging
        (math-verify takes about 0.1 s a gold: reading every gold of a large file at load would take minutes)."""
        if isinstance(reference, ListGold):
            return "a list, which the math judge does not compare item by item (?judge=exact or numeric does)"
        return None

    def judge(self, answer: str, reference: Any) -> Judgment:
        """1 when `answer` equals the reference as text or by math-verify, else 0; `VerifierFailure` when undecided."""
        problem = self.unreadable_gold(reference)
        if problem is not None:
            msg = f"The math judge cannot use {problem}."
            raise VerifierFailure(msg)
        answer, gold = str(answer), str(reference)
        if _compact(answer) == _compact(gold):
            ok, how = True, "equal as text"
        elif not answer.strip():
            ok, how = False, "no answer"
        else:
            _load()
            try:
                ok, how = call_with_deadline(lambda: _compare(answer, gold), self.timeout)
            except DeadlineExceeded as exc:
                msg = f"math-verify {exc} comparing the answer {answer[:80]!r} with the gold {gold[:80]!r}."
                raise VerifierFailure(msg) from exc
            except TooLarge as exc:
                msg = f"The math judge cannot compare {answer[:80]!r} with the gold {gold[:80]!r}: {exc}."
                raise VerifierFailure(msg) from exc
        return Judgment(
            score=1.0 if ok else 0.0,
            passed=ok,
            components={"math": 1.0 if ok else 0.0},
            feedback=f"answered {quoted(answer)}, expected {quoted(str(reference))} ({how})",
            judge="math",
        )
