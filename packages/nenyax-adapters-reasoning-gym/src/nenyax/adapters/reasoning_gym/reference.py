"""The reference answer of a reasoning-gym entry (answers are extracted by `nenyax.core.engine.answers`)."""

from __future__ import annotations

import json
from typing import Any

from nenyax.core.toolkit.qa import extract_answer

__all__ = ["extract_answer", "reference_answer"]

# Datasets whose gold answer is None because many answers are valid; the metadata holds one.
_REFERENCE_FIELDS = ("possible_answer", "example_answer", "example_correct_answer")


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
