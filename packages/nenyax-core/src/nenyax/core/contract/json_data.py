"""Free-form data in the form a JSON round trip gives back, so a record holding it survives one unchanged.

A record's free-form field (a manifest's ``extra``) is written by `serde` and read back as JSON: a tuple
comes back a list, a key ``1`` comes back ``"1"``. Held in that form from the start, the record read back
equals the record written, whatever the adapter (or the URI grammar behind it) put there.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import orjson

_INT64 = range(-(2**63), 2**64)
"""The integers orjson writes as JSON numbers (signed 64-bit, and unsigned up to 2**64 - 1)."""


class NotJSONError(TypeError):
    """A value has no JSON form (an arbitrary object); the caller names the field in its own sentence."""


def json_data(value: Any) -> Any:
    """`value` as the JSON round trip gives it back: lists for tuples, text keys, no NaN or infinity.

    A non-finite float has no JSON number, and an integer beyond 64 bits no orjson one: each is kept as the
    text Python writes for it (``"nan"``, ``"inf"``, ``"123456789012345678901234567890"``) rather than lost.
    """
    kind = type(value)  # exact types: a subclass (an enum, a numpy scalar) is written as orjson writes it
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if value in _INT64 else str(value)
    if kind is float:
        return value if math.isfinite(value) else repr(value)
    if kind is list or kind is tuple:
        return [json_data(item) for item in value]
    if kind is dict:
        return {_key(key): json_data(item) for key, item in value.items()}
    return _through_orjson(value)


def _key(key: Any) -> str:
    """A mapping key as orjson writes it (``OPT_NON_STR_KEYS``): text as it is, else its JSON text."""
    if type(key) is str:
        return key
    if isinstance(key, bool) or key is None:
        return orjson.dumps(key).decode()
    written = json_data(key)
    return written if isinstance(written, str) else orjson.dumps(written).decode()


def _through_orjson(value: Any) -> Any:
    """Numpy scalars and arrays, enums, dates, sets, attrs objects: the JSON orjson writes for them, read back."""
    try:
        raw = orjson.dumps(value, default=_default, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)
    except TypeError as exc:
        msg = f"{type(value).__name__} has no JSON form"
        raise NotJSONError(msg) from exc
    return json_data(orjson.loads(raw))


def _default(value: Any) -> Any:
    """What orjson cannot write itself: a set as a list, an attrs object as its fields (as `serde` writes them)."""
    if isinstance(value, set | frozenset):
        return list(value)
    if attrs.has(type(value)):
        return attrs.asdict(value, recurse=False)
    raise TypeError(type(value).__name__)
