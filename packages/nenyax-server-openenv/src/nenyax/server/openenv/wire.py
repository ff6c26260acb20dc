"""OpenEnv 0.10's wire shapes: frames, error codes and pydantic-style validation errors.

Everything the server sends is built here, so the JSON shapes live in one place. Frames are encoded
with orjson (numpy arrays and scalars included, so a Gymnasium observation needs no conversion);
anything orjson cannot encode natively goes through `_fallback`.
"""

from __future__ import annotations

from typing import Any

import orjson

INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
FACTORY_ERROR = "FACTORY_ERROR"
SESSION_ERROR = "SESSION_ERROR"

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def _fallback(value: Any) -> Any:
    # Sets, numpy values orjson refuses (0-d object arrays), attrs/pydantic objects: their plain form.
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    tolist = getattr(value, "tolist", None)
    if tolist is not None:
        return tolist()
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump()
    return str(value)


def dumps(value: Any) -> bytes:
    """JSON bytes of `value`; NaN and infinities become null (a non-finite reward is never sent as a number)."""
    return orjson.dumps(value, default=_fallback, option=_OPTIONS)


def loads(data: bytes | str) -> Any:
    """Parse one JSON document; raises `orjson.JSONDecodeError` (a ValueError)."""
    return orjson.loads(data)


class WireError(Exception):
    """A message the server answers with an OpenEnv error frame instead of a result."""

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        """`code` is one of OpenEnv's WSErrorCode values; `extra` goes into the frame's data."""
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

    def data(self) -> dict[str, Any]:
        """The ``data`` object of the error frame."""
        return {"message": self.message, "code": self.code, **self.extra}


def invalid(errors: list[dict[str, Any]], message: str = "Invalid message") -> WireError:
    """A VALIDATION_ERROR carrying pydantic-style `errors`, as OpenEnv sends for a rejected message."""
    return WireError(VALIDATION_ERROR, message, errors=errors)


def error_item(kind: str, loc: tuple[Any, ...], msg: str, value: Any) -> dict[str, Any]:
    """One entry of a pydantic ``errors()`` list: type, loc, msg, input."""
    return {"type": kind, "loc": list(loc), "msg": msg, "input": value}


def check_keys(obj: dict[str, Any], allowed: frozenset[str], loc: tuple[Any, ...] = ()) -> None:
    """Reject keys outside `allowed` the way pydantic's ``extra="forbid"`` does."""
    extra = [key for key in obj if key not in allowed]
    if extra:
        raise invalid(
            [error_item("extra_forbidden", (*loc, k), "Extra inputs are not permitted", obj[k]) for k in extra]
        )


def error_frame(exc: WireError) -> bytes:
    """``{"type": "error", "data": {"message", "code", ...}}``."""
    return dumps({"type": "error", "data": exc.data()})


def observation_frame(result: dict[str, Any]) -> bytes:
    """``{"type": "observation", "data": {"observation", "reward", "done", "metadata"}}``."""
    return orjson.dumps({"type": "observation", "data": result}, default=_fallback, option=_OPTIONS)


def state_frame(state: dict[str, Any]) -> bytes:
    """``{"type": "state", "data": {...}}``."""
    return dumps({"type": "state", "data": state})


def mcp_frame(response: dict[str, Any]) -> bytes:
    """``{"type": "mcp", "data": <JSON-RPC response>}``."""
    return dumps({"type": "mcp", "data": response})
