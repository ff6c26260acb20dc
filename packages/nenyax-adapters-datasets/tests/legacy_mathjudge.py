"""The ``math`` judge: mathematical equivalence of two answers with sympy.

What it does, in order: equal after the exact judge's normalisation -> equal; else both answers are
turned from LaTeX-ish text (``\\frac{1}{2}``, ``\\sqrt{2}``, ``2^{10}``, ``x = 3``, ``\\pi``) into
sympy expressions and compared: numbers within a relative 1e-9, expressions whose difference
expands to 0 or evaluates to 0 at three random points. An answer that does not parse scores 0.

sympy's parser evaluates Python, so text is only parsed after an allowlist check: digits, operators,
brackets, single-letter variables and a few function names; anything else (a dunder, an attribute,
a long identifier) is not parsed at all.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

from nenyax.core.contract.trajectory import Judgment

MAX_LENGTH = 300
"""Longer answers are compared as text only: parsing and simplifying them can take unbounded time."""
FUNCTIONS = frozenset({"sqrt", "pi", "sin", "cos", "tan", "log", "ln", "exp", "oo", "E", "I"})
_IDENT = re.compile(r"[A-Za-z]+")
_ALLOWED = re.compile(r"^[0-9A-Za-z+\-*/().,\s]*$")
_REPLACEMENTS = (
    (r"\\left|\\right|\\!|\\,|\\;|\\:|\$|\\displaystyle", ""),
    (r"\\text\{[^{}]*\}|\\mathrm\{[^{}]*\}|\^\\circ|\^\{\\circ\}|\\circ|°", ""),
    (r"\\[dt]frac", r"\\frac"),
    (r"\\cdot|\\times", "*"),
    (r"\\div", "/"),
    (r"\\pi", " pi "),
    (r"\\infty", " oo "),
    (r"\\ln", " ln "),
    (r"\\log", " log "),
    (r"\\(sin|cos|tan|exp)", r" \1 "),
)


def _to_sympy_text(text: str) -> str | None:
    out = str(text).strip()
    if "=" in out:  # "x = 3" answers with its right-hand side
        out = out.rsplit("=", 1)[1]
    for pattern, repl in _REPLACEMENTS:
        out = re.sub(pattern, repl, out)
    for _ in range(10):  # innermost first, so nested fractions and roots unwind
        before = out
        out = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"((\1)/(\2))", out)
        out = re.sub(r"\\sqrt\[([^{}\]]*)\]\{([^{}]*)\}", r"((\2)**(1/(\1)))", out)
        out = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", out)
        if out == before:
            break
    out = out.replace("{", "(").replace("}", ")").replace("^", "**")
    if re.fullmatch(r"\s*-?\d{1,3}(,\d{3})+(\.\d+)?\s*", out):  # thousands separators: "1,000"
        out = out.replace(",", "")
    if not out.strip() or not _ALLOWED.match(out.replace("**", "*")):
        return None
    if re.search(r"[A-Za-z]\s*\.", out):  # attribute access is never maths
        return None
    for ident in _IDENT.findall(out):
        if len(ident) > 1 and ident not in FUNCTIONS:
            return None
    return out


def _parse(text: str) -> Any:
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    if len(text) > MAX_LENGTH:
        return None
    source = _to_sympy_text(text)
    if source is None:
        return None
    transformations = (*standard_transformations, implicit_multiplication_application, convert_xor)
    import sympy

    names = {"ln": sympy.log, "pi": sympy.pi, "E": sympy.E, "I": sympy.I, "oo": sympy.oo}
    try:
        return parse_expr(source, local_dict=names, transformations=transformations, evaluate=True)
    except Exception:  # noqa: BLE001 - any parse error means 'not a formula': the judge compares the text instead
        return None


def _close(x: Any, y: Any) -> bool:
    a, b = complex(x), complex(y)
    return math.isclose(a.real, b.real, rel_tol=1e-9, abs_tol=1e-9) and math.isclose(
        a.imag, b.imag, rel_tol=1e-9, abs_tol=1e-9
    )


def _compact(text: str) -> str:
    # Stricter than the exact judge's normalisation: in maths "x^2 + 1" and "x^2 - 1" differ by punctuation.
    return "".join(str(text).split()).casefold().rstrip(".")


def equivalent(answer: str, reference: str) -> tuple[bool, str]:
    """Whether two answers are mathematically equal, and how that was decided."""
    if _compact(answer) == _compact(reference):
        return True, "equal as text"
    import sympy

    a, b = _parse(answer), _parse(reference)
    if a is None or b is None:
        return False, "not comparable as formulas" if b is not None else "the reference is not a formula"
    try:
        if not (a.free_symbols or b.free_symbols):
            return _close(sympy.N(a, 30), sympy.N(b, 30)), "compared as numbers"
        difference = a - b
        if sympy.expand(difference) == 0:
            return True, "equal after expanding"
        symbols = sorted(difference.free_symbols, key=str)
        rng = random.Random(0)
        for _ in range(3):
            point = {s: sympy.Rational(rng.randint(1, 97), rng.randint(1, 13)) for s in symbols}
            if not _close(sympy.N(difference.subs(point), 30), 0):
                return False, "differ at a sample point"
        return True, "equal at three sample points"
    except Exception:  # noqa: BLE001 - sympy raises many kinds on odd input; an answer it cannot compare is not equal
        return False, "not comparable as formulas"


class MathJudge:
    """Mathematical equivalence with sympy (see the module docstring for exactly what is compared)."""

    def judge(self, answer: str, reference: Any) -> Judgment:
        """1 when `answer` equals the reference as text or as a formula, else 0."""
        ok, how = equivalent(str(answer), str(reference))
        return Judgment(
            score=1.0 if ok else 0.0,
            passed=ok,
            components={"math": 1.0 if ok else 0.0},
            feedback=f"answered {answer!r}, expected {reference!r} ({how})",
            judge="math",
        )
