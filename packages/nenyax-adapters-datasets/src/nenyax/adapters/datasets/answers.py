"""Finding the answer in a model's reply, and the gold answer in a dataset's answer column.

The extraction rules are those of the reasoning-gym adapter (copied, not imported: this
distribution must not depend on reasoning-gym), so the same reply scores the same way in both.
"""

from __future__ import annotations

import re
from typing import Any

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANSWER_LINE = re.compile(r"(?:final answer|answer)\s*(?:is|:)\s*(.+?)\s*\.?\s*$", re.IGNORECASE)
_BOXED = "\\boxed{"
# GSM8K-style gold answers put the worked solution first and the final answer after "####".
_HASHES = re.compile(r"####\s*(.+?)\s*$", re.DOTALL)


def _last_boxed(text: str) -> str | None:
    start = text.rfind(_BOXED)
    if start < 0:
        return None
    depth, i = 1, start + len(_BOXED)
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i:j].strip()
    return None


def extract_answer(text: str) -> str:
    """The answer in `text`: the last ``<answer>..</answer>``, else ``\\boxed{..}``, else an
    ``Answer: ..`` / ``the answer is ..`` final line, else the last non-empty line.
    """
    tags = _ANSWER_TAG.findall(text)
    if tags:
        return tags[-1].strip()
    boxed = _last_boxed(text)
    if boxed is not None:
        return boxed
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    match = _ANSWER_LINE.search(lines[-1])
    if match:
        return match.group(1).strip()
    return lines[-1]


def gold_answer(value: Any) -> str:
    """The final answer in a gold cell: after ``####`` (GSM8K), else the last ``\\boxed{}`` (MATH), else the cell."""
    text = "" if value is None else str(value).strip()
    hashes = _HASHES.search(text)
    if hashes:
        return hashes.group(1).strip()
    boxed = _last_boxed(text)
    return boxed if boxed is not None else text
