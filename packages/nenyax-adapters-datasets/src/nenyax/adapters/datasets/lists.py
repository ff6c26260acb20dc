"""Reading a reply as a list, to compare it item by item with a list gold (`golds.ListGold`).

A reply is read as JSON or a Python literal when it starts with a bracket (``[[1, 2], [3, 4]]``,
``[['a', 'b']]``); else as a grid when it has several lines (one row per line, items separated by
spaces or commas: ``1 2\\n3 4``, as ARC tasks ask for it); else as one row (``1, 2, 3`` or ``1 2 3``).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any

from nenyax.adapters.datasets.golds import Nested

MAX_LITERAL = 100_000
"""Longest reply read as a literal; a longer one is not read as a list."""

_SEPARATORS = re.compile(r"[,\s]+")


def _nested(value: Any) -> Nested | str | None:
    if isinstance(value, list | tuple):
        items = [_nested(item) for item in value]
        kept = [item for item in items if item is not None]
        return tuple(kept) if len(kept) == len(items) else None
    if isinstance(value, dict) or value is None:
        return None
    return "true" if value is True else "false" if value is False else str(value)


def _row(line: str) -> Nested:
    return tuple(item for item in _SEPARATORS.split(line.strip().strip("[]()")) if item)


def read_list(text: str) -> Nested | None:
    """`text` as nested tuples of item texts, or None when it reads as no list."""
    text = text.strip()
    if not text:
        return None
    if text[0] in "[(":
        if len(text) > MAX_LITERAL:
            return None
        for reader in (json.loads, ast.literal_eval):
            try:
                value = reader(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            nested = _nested(value)
            return nested if isinstance(nested, tuple) else None
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        return tuple(_row(line) for line in lines)
    return _row(text)


def same_list(answer: Nested | str, gold: Nested | str, same: Callable[[str, str], bool]) -> bool:
    """Whether `answer` has `gold`'s shape and each item is the same by `same(answer_item, gold_item)`."""
    if isinstance(gold, tuple):
        if not isinstance(answer, tuple) or len(answer) != len(gold):
            return False
        return all(same_list(a, g, same) for a, g in zip(answer, gold, strict=True))
    return not isinstance(answer, tuple) and same(answer, gold)
