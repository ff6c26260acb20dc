"""Environment URIs: ``<format>:<target>?key=value&...``."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, unquote

import attrs

from nenyax.core.errors import BadURIError

MAX_SEED = 2**63 - 1
"""Largest seed accepted anywhere: seeds are recorded as JSON integers, which orjson keeps to 64 bits."""

_SCHEME = re.compile(r"^([a-z][a-z0-9_]*):(.*)$", re.DOTALL)


@attrs.frozen(kw_only=True)
class EnvURI:
    """A parsed environment URI."""

    raw: str
    """The URI as given."""
    format: str
    """The scheme: which adapter loads it."""
    target: str
    """Everything between the scheme and the query (a dataset, env id, path...)."""
    params: dict[str, Any] = attrs.field(factory=dict)
    """Query parameters, with numbers, booleans and JSON values decoded."""


def parse_value(text: str) -> Any:
    """Decode a query value: int, float, true/false/null, JSON list/object, else the string."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    try:
        return int(text) if text.isascii() else text  # int() also reads '²' and other digit forms
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return text


def parse_uri(uri: str) -> EnvURI:
    """Parse ``<format>:<target>?k=v``; raise `BadURIError` with a sentence saying what is wrong."""
    if not isinstance(uri, str) or not uri.strip():
        msg = "An environment URI must be a non-empty string like 'reasoning_gym:basic_arithmetic'."
        raise BadURIError(msg)
    match = _SCHEME.match(uri.strip())
    if not match:
        msg = (
            f"{uri!r} is not an environment URI; write it as '<format>:<name>', "
            "for example 'reasoning_gym:basic_arithmetic'."
        )
        raise BadURIError(msg)
    fmt, rest = match.groups()
    target, _, query = rest.partition("?")
    if not target:
        msg = f"The URI {uri!r} names no environment after '{fmt}:'."
        raise BadURIError(msg)
    params: dict[str, Any] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        msg = f"The query of {uri!r} is malformed ({exc}); write it as '?key=value&key=value'."
        raise BadURIError(msg) from exc
    for key, value in pairs:
        if key in params:
            msg = f"The URI {uri!r} sets {key!r} twice."
            raise BadURIError(msg)
        params[key] = parse_value(value)
    return EnvURI(raw=uri, format=fmt, target=unquote(target), params=params)
