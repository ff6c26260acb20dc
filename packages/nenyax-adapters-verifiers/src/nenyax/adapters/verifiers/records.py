"""Turning what verifiers hands back (pydantic messages, rewards, metrics) into Nenyax's JSON-able records."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from nenyax.core.toolkit.failures import describe

KEY_VAR = "NENYAX_VERIFIERS_PROXY_KEY"
"""The environment variable verifiers reads the episode's key from (``api_key_var``).

verifiers names keys by variable, never by value; the name holds no ``API_KEY`` so that nothing strips
it, and the value is the proxy's key, which opens nothing elsewhere.
"""


def jsonable(value: Any) -> Any:
    """`value` as plain JSON data: pydantic models dumped, tuples as lists, anything else as text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return jsonable(dump(exclude_none=True))
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return str(value)


def messages(*parts: Any) -> tuple[dict[str, Any], ...]:
    """Chat messages (dicts) from prompt/completion parts; a plain string prompt is a user message."""
    found: list[dict[str, Any]] = []
    for part in parts:
        if part is None:
            continue
        if isinstance(part, str):
            found.append({"role": "user", "content": part})
            continue
        for message in part:
            data = jsonable(message)
            if isinstance(data, dict):
                found.append(data)
    return tuple(found)


def numbers(values: Mapping[str, Any] | None) -> dict[str, float]:
    """The finite numeric entries of a rewards/metrics mapping, as floats."""
    found: dict[str, float] = {}
    for name, value in (values or {}).items():
        if isinstance(value, bool):
            value = float(value)
        if isinstance(value, int | float) and math.isfinite(value):
            found[str(name)] = float(value)
    return found


def error_text(error: Any) -> str:
    """One line for an error verifiers recorded (an exception, an `Error` model, or text)."""
    if isinstance(error, BaseException):
        text = describe(error)
    elif isinstance(error, Mapping) and "error" in error:  # legacy: the exception serialized
        text = f"{error['error']}: {error.get('message', '')}".rstrip(": ")
    else:
        kind, message = getattr(error, "type", None), getattr(error, "message", None)
        text = f"{kind}: {message}" if kind and message else str(error)
    return " ".join(text.split())


def digest_rows(rows: Iterable[Any]) -> str:
    """A sha256 of the tasks' data, so the manifest digest changes when the tasks do."""
    blob = json.dumps([jsonable(r) for r in rows], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
