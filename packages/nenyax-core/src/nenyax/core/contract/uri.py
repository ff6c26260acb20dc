"""Environment URIs: ``<format>:<target>?key=value&...``, one grammar for every format.

Grammar of a query value (after percent-decoding; ``+`` is a literal plus, never a space; write a
space as ``%20``, and ``&``, ``=``, ``%`` inside a value as ``%26``, ``%3D``, ``%25``):

- ``true`` / ``false`` (any case): a boolean; ``null`` / ``none``: None;
- an ASCII integer (``-3``, ``+7``): an int; a decimal or exponent number (``0.5``, ``1e3``): a float;
- ``[...]`` or ``{...}`` in JSON: a list or an object (``[1,"a"]``, ``{"k":2}``);
- ``(...)``: a tuple of JSON values (``(1,2)``, ``("a",)``; ``()`` is the empty tuple);
- anything else: the string itself. A string that would read as one of the above is written quoted
  in JSON (``"true"``, ``"42"``) and stays a string.

Text that is not valid Unicode (a lone surrogate, written ``"\\ud800"`` in JSON) is refused: nothing can record it.
Every value read here survives a manifest's JSON round trip (`contract.json_data`): its ``extra`` holds a
tuple as a list and ``nan``/``inf`` as their text.

`format_uri` writes any such value so that `parse_uri` reads back exactly the same value.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote, unquote

import attrs

from nenyax.core.errors import BadURIError

MAX_SEED = 2**63 - 1
"""Largest seed accepted anywhere: seeds are recorded as JSON integers, which orjson keeps to 64 bits."""

# Any case is read here so that 'Gymnasium:...' reaches the loader, which suggests the installed spelling.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9_]*):(.*)$", re.DOTALL)
# A scheme written with '-' or '.' (the distribution's or the library's spelling: 'reasoning-gym').
_SPELLED_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]*):(.*)$", re.DOTALL)


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
    # int() and float() also read '²', '1_000' and padded text: only plain ASCII numbers are numbers here.
    if text.isascii() and "_" not in text and text == text.strip():
        try:
            return int(text)
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
    if text.startswith("(") and text.endswith(")"):
        inner = text[1:-1].strip()
        try:
            items = json.loads(f"[{inner.removesuffix(',')}]") if inner else []
        except json.JSONDecodeError:
            pass
        else:
            return tuple(items)
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError:
            pass
        else:
            if isinstance(decoded, str):
                return decoded
    return text


def _is_plain(text: str) -> bool:
    """Whether `text` reads back as itself (a string) under `parse_value`."""
    return isinstance(parse_value(text), str) and parse_value(text) == text


def format_value(value: Any) -> str:
    """Write `value` (bool, None, int, float, str, list, dict, tuple) in the grammar `parse_value` reads."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if "." in text or "e" in text or "n" in text else f"{text}.0"
    if isinstance(value, str):
        return value if value and _is_plain(value) else json.dumps(value)
    if isinstance(value, tuple):
        inner = ",".join(json.dumps(_jsonable(v)) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list | dict):
        return json.dumps(_jsonable(value), separators=(",", ":"))
    msg = f"A URI value must be a boolean, null, number, string, list, tuple or object, not {type(value).__name__}."
    raise BadURIError(msg)


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        msg = "A tuple can only be a top-level URI value; inside a list or object write a list."
        raise BadURIError(msg)
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def format_uri(fmt: str, target: str, params: dict[str, Any] | None = None) -> str:
    """The URI ``<fmt>:<target>?k=v`` whose `parse_uri` gives back exactly `target` and `params`."""
    query = "&".join(
        f"{quote(str(k), safe='')}={quote(format_value(v), safe='[](),:{}/')}" for k, v in (params or {}).items()
    )
    uri = f"{fmt}:{quote(target, safe='/:._-~@')}"
    return f"{uri}?{query}" if query else uri


def _pairs(uri: str, query: str) -> list[tuple[str, str]]:
    """Split a query on ``&`` and ``=`` and percent-decode each side (``+`` stays a plus)."""
    pairs = []
    for part in query.split("&") if query else []:
        key, eq, value = part.partition("=")
        if not key or not eq:
            msg = f"The query of {uri!r} is malformed (bad field {part!r}); write it as '?key=value&key=value'."
            raise BadURIError(msg)
        pairs.append((unquote(key), unquote(value)))
    return pairs


def _is_text(value: Any) -> bool:
    """Whether every string in `value` is valid Unicode: a lone surrogate (``\\ud800`` in JSON, or a byte a
    terminal could not decode) can be neither recorded nor sent anywhere."""
    if isinstance(value, str):
        return value.isascii() or not any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, list | tuple):
        return all(_is_text(v) for v in value)
    if isinstance(value, dict):
        return all(_is_text(k) and _is_text(v) for k, v in value.items())
    return True


def _refuse_surrogates(uri: str, values: Any) -> None:
    if not (_is_text(uri) and _is_text(values)):
        msg = f"The URI {uri.encode('utf-8', 'backslashreplace').decode()!r} holds text that is not valid Unicode."
        raise BadURIError(msg)


def parse_uri(uri: str) -> EnvURI:
    """Parse ``<format>:<target>?k=v``; raise `BadURIError` with a sentence saying what is wrong."""
    if not isinstance(uri, str) or not uri.strip():
        msg = "An environment URI must be a non-empty string like 'reasoning_gym:basic_arithmetic'."
        raise BadURIError(msg)
    match = _SCHEME.match(uri.strip())
    spelled = None if match else _SPELLED_SCHEME.match(uri.strip())
    if spelled:
        fmt = re.sub(r"[.-]", "_", spelled.group(1))
        msg = (
            f"{spelled.group(1)!r} is not a format name: format names use underscores, never '-' or '.'. "
            f"Did you mean {fmt!r}, as in {fmt + ':' + spelled.group(2)!r}?"
        )
        raise BadURIError(msg)
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
    for key, value in _pairs(uri, query):
        if key in params:
            msg = f"The URI {uri!r} sets {key!r} twice."
            raise BadURIError(msg)
        params[key] = parse_value(value)
    _refuse_surrogates(uri, params)
    return EnvURI(raw=uri, format=fmt, target=unquote(target), params=params)
