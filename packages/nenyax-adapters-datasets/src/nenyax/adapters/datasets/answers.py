"""The gold answer in a dataset's answer column (replies are read by `nenyax.core.engine.answers`)."""

from __future__ import annotations

import re
from typing import Any

from nenyax.core.engine.answers import extract_answer, last_boxed

__all__ = ["extract_answer", "gold_answer"]

# GSM8K-style gold answers put the worked solution first and the final answer after "####".
_HASHES = re.compile(r"####\s*(.+?)\s*$", re.DOTALL)


def gold_answer(value: Any) -> str | list[str]:
    """The final answer in a gold cell: after ``####`` (GSM8K), else the last ``\\boxed{}`` (MATH), else the cell.

    A list cell (several acceptable answers) stays a list, each read the same way.
    """
    if isinstance(value, list | tuple):
        return [str(gold_answer(item)) for item in value if item is not None]
    text = "" if value is None else str(value).strip()
    hashes = _HASHES.search(text)
    if hashes:
        return hashes.group(1).strip()
    boxed = last_boxed(text)
    return boxed if boxed is not None else text
