"""OpenEnv's wire protocol, spoken with aiohttp: ``GET /health /metadata /schema`` and the ``/ws`` session.

A ``/ws`` connection is one environment instance on the server (the HTTP ``/reset`` and ``/step``
make a fresh one per request, so they cannot hold an episode). Frames are JSON objects
``{"type": "reset"|"step"|"state"|"close", "data": ...}``; the server answers ``observation``,
``state`` or ``error`` (``{"message", "code", ...}``; codes INVALID_JSON, UNKNOWN_TYPE,
VALIDATION_ERROR, EXECUTION_ERROR, CAPACITY_REACHED, FACTORY_ERROR, SESSION_ERROR).

Failures are mapped onto the failure vocabulary here, once: a connection that cannot open, drops or
times out is an `InfraFailure`; a frame that breaks the protocol (not JSON, a non-finite number, a
missing field) and any server-side error other than a rejected action is an `EnvironmentFailure`;
a rejected action (VALIDATION_ERROR on a step) is the caller's to turn into a `PolicyFailure`.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import aiohttp
import attrs
import orjson

from nenyax.core import EnvironmentFailure, InfraFailure

CAPACITY_REACHED = "CAPACITY_REACHED"
VALIDATION_ERROR = "VALIDATION_ERROR"
_CLOSE_WAIT = 5.0
"""Seconds to wait for the server to answer a ``close`` frame by closing its end (its slot is free then)."""


class ServerError(Exception):
    """The server answered a frame with ``{"type": "error"}``."""

    def __init__(self, code: str, message: str, data: dict[str, Any]) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def details(self) -> str:
        """The server's message with its validation errors, in one line."""
        errors = self.data.get("errors")
        if isinstance(errors, list) and errors:
            parts = []
            for error in errors[:3]:
                if isinstance(error, dict):
                    loc = ".".join(str(p) for p in error.get("loc", ()))
                    parts.append(f"{loc}: {error.get('msg', error)}" if loc else str(error.get("msg", error)))
                else:
                    parts.append(str(error))
            return "; ".join(parts)
        return self.message


@attrs.frozen(kw_only=True)
class Reply:
    """An observation frame, checked: the observation without bookkeeping, reward, done, metadata."""

    observation: dict[str, Any]
    reward: float | None
    done: bool
    metadata: dict[str, Any] | None
    """The observation's metadata (openenv 0.10); None when the wire carries none (openenv-core 0.3)."""


def clip(text: str, limit: int = 120) -> str:
    """`text` on one line, cut to `limit` characters."""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


def decode(raw: str | bytes, where: str) -> dict[str, Any]:
    """One frame as a JSON object; `EnvironmentFailure` saying how it is malformed otherwise."""
    try:
        frame = orjson.loads(raw)
    except orjson.JSONDecodeError:
        # The standard library reads NaN and Infinity, which JSON does not have: say so if that is why.
        try:
            json.loads(raw)
        except (ValueError, TypeError):
            msg = f"The OpenEnv server at {where} sent a frame that is not JSON: {clip(str(raw))!r}."
            raise EnvironmentFailure(msg) from None
        msg = f"The OpenEnv server at {where} sent a non-finite number (NaN or Infinity): {clip(str(raw))!r}."
        raise EnvironmentFailure(msg) from None
    if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
        msg = f"The OpenEnv server at {where} sent a frame without a message type: {clip(str(raw))!r}."
        raise EnvironmentFailure(msg)
    return frame


def observation_reply(data: Any, where: str) -> Reply:
    """Check an ``observation`` frame's data; a missing part or a non-finite reward is an `EnvironmentFailure`."""
    if not isinstance(data, dict) or not isinstance(data.get("observation"), dict):
        msg = f"The OpenEnv server at {where} sent an observation frame without an observation: {clip(str(data))!r}."
        raise EnvironmentFailure(msg)
    reward = data.get("reward")
    if reward is not None:
        # OpenEnv's Observation.reward is bool | int | float | None: a bool counts as 0 or 1.
        if not isinstance(reward, int | float):
            msg = f"The OpenEnv server at {where} sent the reward {clip(repr(reward), 60)}, which is not a number."
            raise EnvironmentFailure(msg)
        reward = float(reward)
        if not math.isfinite(reward):
            msg = f"The OpenEnv server at {where} sent the non-finite reward {reward!r}; the episode is not scored."
            raise EnvironmentFailure(msg)
    done = data.get("done", False)
    if not isinstance(done, bool):
        msg = f"The OpenEnv server at {where} sent done={done!r}, which is not true or false."
        raise EnvironmentFailure(msg)
    observation = dict(data["observation"])
    metadata = observation.pop("metadata", None)
    if metadata is None and isinstance(data.get("metadata"), dict):
        metadata = data["metadata"]
    return Reply(observation=observation, reward=reward, done=done, metadata=metadata)


async def get_json(http: aiohttp.ClientSession, base: str, path: str) -> Any:
    """``GET base+path`` as JSON; `InfraFailure` when the server cannot be reached, None on 404."""
    url = base + path
    try:
        async with http.get(url) as response:
            if response.status == 404:
                return None
            if response.status >= 400:
                body = clip(await response.text())
                msg = f"The OpenEnv server at {base} answered {path} with HTTP {response.status}: {body!r}."
                raise InfraFailure(msg)
            text = await response.read()
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        msg = f"Cannot reach the OpenEnv server at {base} ({reason(exc)}); start it or correct the URL."
        raise InfraFailure(msg) from exc
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        body = clip(text.decode(errors="replace"))
        msg = f"The server at {base} answered {path} with something that is not JSON: {body!r}."
        raise EnvironmentFailure(msg) from None


def reason(exc: BaseException) -> str:
    """Why a request failed, in a few words (the OS error, "no answer in time", the exception)."""
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return clip(str(exc.os_error) if exc.os_error else str(exc), 100)
    text = str(exc).strip()
    return clip(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, 100)


class Channel:
    """One ``/ws`` connection: send a frame, read its answer, close politely."""

    def __init__(self, http: aiohttp.ClientSession, url: str, timeout: float) -> None:
        """Not connected yet: call `open`."""
        self.http = http
        self.url = url
        self.timeout = timeout
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self.broken = False
        """True once the connection failed: nothing more is sent on it."""

    async def open(self) -> None:
        """Connect; `InfraFailure` naming the URL when the server cannot be reached."""
        try:
            async with asyncio.timeout(self.timeout):
                self._ws = await self.http.ws_connect(self.url, autoping=True, max_msg_size=0)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            self.broken = True
            msg = f"Cannot open a WebSocket session at {self.url} ({reason(exc)}); start the server or fix the URL."
            raise InfraFailure(msg) from exc

    async def request(self, kind: str, data: Any = None) -> tuple[str, Any]:
        """Send one frame and return the answer's (type, data); an ``error`` answer raises `ServerError`."""
        ws = self._ws
        if ws is None or self.broken:
            msg = f"The WebSocket session at {self.url} is no longer open."
            raise InfraFailure(msg)
        frame: dict[str, Any] = {"type": kind} if data is None else {"type": kind, "data": data}
        try:
            await ws.send_str(orjson.dumps(frame).decode())
            async with asyncio.timeout(self.timeout):
                message = await ws.receive()
        except TimeoutError as exc:
            self.broken = True
            msg = f"The OpenEnv server at {self.url} did not answer a {kind} frame within {self.timeout:g} s."
            raise InfraFailure(msg) from exc
        except (aiohttp.ClientError, OSError, RuntimeError) as exc:
            self.broken = True
            msg = f"The connection to the OpenEnv server at {self.url} failed during a {kind} frame ({reason(exc)})."
            raise InfraFailure(msg) from exc
        if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED):
            self.broken = True
            code = ws.close_code if ws.close_code is not None else message.data
            msg = f"The OpenEnv server at {self.url} closed the connection (code {code}) instead of answering {kind}."
            raise InfraFailure(msg)
        if message.type is aiohttp.WSMsgType.ERROR:
            self.broken = True
            why = reason(message.data)
            msg = f"The connection to the OpenEnv server at {self.url} broke while waiting for a {kind} answer ({why})."
            raise InfraFailure(msg)
        answer = decode(message.data, self.url)
        if answer["type"] == "error":
            data = answer.get("data")
            error: dict[str, Any] = data if isinstance(data, dict) else {}
            raise ServerError(str(error.get("code", "UNKNOWN")), str(error.get("message", "no message")), error)
        return answer["type"], answer.get("data")

    async def close(self) -> None:
        """Send ``close`` and wait for the server to close its end (which frees its session slot)."""
        ws, self._ws = self._ws, None
        if ws is None:
            return
        try:
            if not self.broken and not ws.closed:
                await ws.send_str('{"type":"close"}')
                async with asyncio.timeout(_CLOSE_WAIT):
                    while (await ws.receive()).type not in (
                        aiohttp.WSMsgType.CLOSE,
                        aiohttp.WSMsgType.CLOSING,
                        aiohttp.WSMsgType.CLOSED,
                        aiohttp.WSMsgType.ERROR,
                    ):
                        pass
        except (aiohttp.ClientError, TimeoutError, OSError, RuntimeError):
            pass  # a server that is gone has nothing left to free
        finally:
            await ws.close()
