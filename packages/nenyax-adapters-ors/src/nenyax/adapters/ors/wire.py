"""The ORS HTTP protocol over aiohttp: JSON requests, the ``/call`` event stream and its resumption.

Failures leave this module as Nenyax's vocabulary: the server unreachable or a stream that stays
dropped is `InfraFailure`; a refusal with an HTTP status is `Refused` (its caller decides whose fault
it is); a tool that crashed on the server is `EnvironmentFailure`; a stream that is not server-sent
events is `VerifierFailure` (the call's verdict cannot be read, so the episode is never scored).
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from typing import Any

import aiohttp

from nenyax.adapters.ors._version import __version__
from nenyax.adapters.ors.sse import MalformedStream, read_events
from nenyax.core import EnvironmentFailure, InfraFailure, VerifierFailure

USER_AGENT = f"nenyax-adapters-ors/{__version__}"
HEARTBEAT_S = 30.0
"""A stream silent this long is dropped: servers ping every 10 s while a tool runs."""
REQUEST_TIMEOUT_S = 300.0
"""Bound on a plain JSON request (``/prompt`` waits for the session's ``setup()``)."""
RESUMES = 3
"""How often a dropped ``/call`` stream is resumed by its task id before the episode is given up."""
CONNECT_RETRIES = 2
"""Retries of a request whose connection was refused (it never reached the server, so it is safe)."""
BACKOFF_S = 0.2


class Refused(Exception):
    """The server answered with an HTTP error status; `detail` is its message."""

    def __init__(self, base_url: str, path: str, status: int, detail: str) -> None:
        """Record what was refused and why."""
        super().__init__(f"{base_url}{path} answered HTTP {status}: {detail}")
        self.path, self.status, self.detail = path, status, detail


def loads(text: str) -> Any:
    """JSON as Python reads it, NaN and Infinity included, so a non-finite reward can be named, not lost."""
    return json.loads(text)


def _reason(exc: BaseException) -> str:
    # aiohttp's own messages nest reprs of inner exceptions; these say the same in words.
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the response was cut off"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server disconnected"
    if isinstance(exc, TimeoutError):
        return "the server went silent"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _detail(resp: aiohttp.ClientResponse) -> str:
    text = await resp.text(errors="replace")
    try:
        body = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300] or resp.reason or ""
    detail = body.get("detail", body) if isinstance(body, dict) else body
    return detail if isinstance(detail, str) else json.dumps(detail)[:300]


class Client:
    """One ORS server's base URL, spoken to through an aiohttp session owned by the caller."""

    def __init__(self, base_url: str, http: aiohttp.ClientSession) -> None:
        """Talk to `base_url` (no trailing slash) through `http`."""
        self.base_url = base_url
        self.http = http

    def _headers(self, sid: str | None, stream: bool = False) -> dict[str, str]:
        headers = {"User-Agent": USER_AGENT}
        if sid is not None:
            headers["X-Session-ID"] = sid
        if stream:
            headers["Accept"] = "text/event-stream"
        return headers

    @staticmethod
    def _short(exc: BaseException) -> str:
        errno = getattr(getattr(exc, "os_error", None), "errno", None)
        return os.strerror(errno).lower() if errno else _reason(exc)

    def unreachable(self, exc: BaseException) -> InfraFailure:
        """The one sentence for a server that cannot be reached."""
        why = self._short(exc)
        return InfraFailure(f"Cannot reach the ORS server at {self.base_url} ({why}); is it running there?")

    async def request(self, method: str, path: str, body: Any = None, *, sid: str | None = None) -> Any:
        """One JSON request; an error status raises `Refused`, a lost connection `InfraFailure`."""
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
        for attempt in range(CONNECT_RETRIES + 1):
            try:
                async with self.http.request(
                    method, self.base_url + path, json=body, headers=self._headers(sid), timeout=timeout
                ) as resp:
                    if resp.status >= 400:
                        raise Refused(self.base_url, path, resp.status, await _detail(resp))
                    text = await resp.text()
                break
            except aiohttp.ClientConnectorError as exc:
                if attempt == CONNECT_RETRIES:
                    raise self.unreachable(exc) from exc
                await asyncio.sleep(BACKOFF_S * 2**attempt)
            except (aiohttp.ClientError, TimeoutError) as exc:
                msg = f"The ORS server at {self.base_url} dropped the request {method} {path} ({_reason(exc)})."
                raise InfraFailure(msg) from exc
        try:
            return loads(text)
        except ValueError as exc:
            msg = f"The ORS server at {self.base_url} answered {method} {path} with non-JSON text {text[:120]!r}."
            raise EnvironmentFailure(msg) from exc

    async def stream(self, path: str, body: dict[str, Any], *, sid: str | None, what: str) -> tuple[str | None, str]:
        """POST `body`; return the task id the stream named and its ``end`` data (``chunk`` events joined before it).

        A stream that drops after the server named its task id is resumed with that id, which replays
        the result without running the tool again; one that drops before is not (the tool may have
        run), and either way a lost stream is `InfraFailure`.
        """
        timeout = aiohttp.ClientTimeout(total=None, sock_read=HEARTBEAT_S)
        task_id: str | None = None
        drops: list[str] = []
        refusals = 0
        while True:
            payload = body if task_id is None else {**body, "task_id": task_id}
            try:
                async with self.http.post(
                    self.base_url + path, json=payload, headers=self._headers(sid, stream=True), timeout=timeout
                ) as resp:
                    if resp.status >= 400:
                        raise Refused(self.base_url, path, resp.status, await _detail(resp))
                    chunks: list[str] = []
                    async for event in read_events(resp.content.iter_any()):
                        if event.event == "task_id":
                            task_id = event.data.strip() or task_id
                        elif event.event == "chunk":
                            chunks.append(event.data)
                        elif event.event == "end":
                            chunks.append(event.data)
                            return task_id, "".join(chunks)
                        elif event.event == "error":
                            raise self._error_event(event.data.strip(), what, resuming=bool(drops))
                    drops.append("the stream closed before its end event")
            except aiohttp.ClientConnectorError as exc:
                if task_id is None:
                    # Never connected, so nothing ran: retrying is safe.
                    refusals += 1
                    if refusals > CONNECT_RETRIES:
                        raise self.unreachable(exc) from exc
                    await asyncio.sleep(BACKOFF_S * 2 ** (refusals - 1))
                    continue
                drops.append(self._short(exc))
            except MalformedStream as exc:
                msg = f"The ORS server at {self.base_url} sent a malformed event stream for {what}: {exc}."
                raise VerifierFailure(msg) from exc
            except (aiohttp.ClientError, TimeoutError) as exc:
                drops.append(_reason(exc))
            if task_id is None:
                msg = (
                    f"The connection to the ORS server at {self.base_url} dropped during {what} before the server "
                    f"named its task ({drops[0]}); it was not retried, since the tool may already have run."
                )
                raise InfraFailure(msg)
            if len(drops) > RESUMES:
                msg = (
                    f"The connection to the ORS server at {self.base_url} dropped during {what} ({drops[0]}) and "
                    f"resuming task {task_id} failed {RESUMES} times (last: {drops[-1]})."
                )
                raise InfraFailure(msg)
            await asyncio.sleep(BACKOFF_S * 2 ** (len(drops) - 1))

    def _error_event(self, data: str, what: str, *, resuming: bool) -> Exception:
        if resuming and data == "unknown task_id":
            return InfraFailure(f"The ORS server at {self.base_url} lost the result of {what} while resuming it.")
        # ors-sdk streams an error event when the tool's own code raised: the environment failed.
        return EnvironmentFailure(f"The ORS server at {self.base_url} reports that {what} failed: {data}")


def new_http() -> aiohttp.ClientSession:
    """An aiohttp session for one event loop, sized for thousands of concurrent episodes."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), trust_env=False)


class Connections:
    """One aiohttp session per event loop, shared by that loop's open episodes and closed with the last of them.

    Episodes started by the synchronous API each run on a loop of their own that then ends, so a
    session kept per loop until `close()` would be left open on a dead loop.
    """

    def __init__(self) -> None:
        """No loop has a session yet."""
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = weakref.WeakKeyDictionary()

    def acquire(self) -> aiohttp.ClientSession:
        """This loop's session (made on first use); pair every call with `release`."""
        loop = asyncio.get_running_loop()
        entry = self._by_loop.get(loop)
        if entry is None or entry[0].closed:
            entry = self._by_loop[loop] = [new_http(), 0]
        entry[1] += 1
        return entry[0]  # type: ignore[no-any-return]

    async def release(self) -> None:
        """Give this loop's session back; the last episode to leave closes it."""
        entry = self._by_loop.get(asyncio.get_running_loop())
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del self._by_loop[asyncio.get_running_loop()]
            await entry[0].close()
