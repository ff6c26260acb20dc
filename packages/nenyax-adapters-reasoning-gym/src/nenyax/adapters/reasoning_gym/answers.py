"""Finding the answer in a model's reply, and the reference answer of an entry."""

from __future__ import annotations

import json
import re
from typing import Any

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANSWER_LINE = re.compile(r"(?:final answer|answer)\s*(?:is|:)\s*(.+?)\s*\.?\s*$", re.IGNORECASE)
_BOXED = "\\boxed{"

# Datasets whose gold answer is None because many answers are valid; the metadata holds one.
_REFERENCE_FIELDS = ("possible_answer", "example_answer", "example_correct_answer")


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


def reference_answer(entry: dict[str, Any]) -> str | None:
    """The gold answer, or a valid example from the metadata when the gold is None; None if neither."""
    if entry.get("answer") is not None:
        return str(entry["answer"])
    metadata = entry.get("metadata") or {}
    for field in _REFERENCE_FIELDS:
        value = metadata.get(field)
        if value is not None:
            return value if isinstance(value, str) else json.dumps(value)
    return None
