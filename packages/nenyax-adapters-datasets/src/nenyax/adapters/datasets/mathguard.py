"""Refusing parsed answers whose value cannot be computed in reasonable time, before sympy tries.

``9^{9^{9^9}}`` or ``(10^{10})!`` parse in milliseconds, but comparing them makes sympy compute the
number, and a giant integer power is one C operation that holds the GIL: no timeout inside the
process can stop it, and every thread stalls until it ends (minutes, or never). So the size of each
number is estimated first, from logarithms, without computing it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

MAX_DIGITS = 100_000
"""Largest number of decimal digits a value may need; sympy computes such a number in milliseconds."""


class TooLarge(Exception):
    """A number in the expression has more than `MAX_DIGITS` digits."""


def _log10(expr: Any) -> float | None:
    """An estimate of log10 of the |value| of a numeric sub-expression; None for one with symbols."""
    import sympy

    if isinstance(expr, sympy.Integer):
        return math.log10(abs(int(expr))) if expr != 0 else 0.0  # math.log10 takes integers of any size
    if isinstance(expr, sympy.Rational):
        return max(math.log10(abs(expr.p)), math.log10(expr.q))
    if isinstance(expr, sympy.Float):
        value = abs(float(expr))
        return math.log10(value) if math.isfinite(value) and value > 1 else 0.0
    if not isinstance(expr, sympy.Basic) or expr.free_symbols:
        return None  # a polynomial grows in terms, not digits: the deadline bounds its expansion
    sizes = [_log10(arg) for arg in expr.args]
    if any(size is None for size in sizes):
        return None
    known = [size for size in sizes if size is not None]
    if isinstance(expr, sympy.Pow):
        base, exponent = known
        return base * 10**exponent if exponent < 300 else (math.inf if base > 0 else 0.0)
    if isinstance(expr, sympy.Mul):
        return sum(known)
    if isinstance(expr, sympy.Add):
        return max(known, default=0.0) + math.log10(max(len(known), 1))
    if isinstance(expr, sympy.factorial | sympy.factorial2 | sympy.gamma | sympy.binomial):
        if known[0] >= 300:
            return math.inf
        n = 10 ** known[0]
        return n * math.log10(max(n, 2))
    return max(known, default=0.0)  # other functions of numbers: at most as large as their arguments


def _walk(value: Any) -> Iterable[Any]:
    import sympy

    if isinstance(value, sympy.Basic):
        yield from sympy.preorder_traversal(value)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _walk(item)


def check_size(parsed: Iterable[Any]) -> None:
    """Raise `TooLarge` naming the first number in `parsed` (math-verify's parse result) with too many digits."""
    import sympy

    for node in _walk(list(parsed)):
        if isinstance(node, sympy.Pow | sympy.factorial | sympy.factorial2 | sympy.gamma | sympy.binomial):
            digits = _log10(node)
            if digits is not None and digits > MAX_DIGITS:
                shown = "more than 10^300" if digits == math.inf else f"about {digits:.3g}"
                msg = f"{str(node)[:60]} has {shown} digits, too many to compute (the limit is {MAX_DIGITS:,})"
                raise TooLarge(msg)
