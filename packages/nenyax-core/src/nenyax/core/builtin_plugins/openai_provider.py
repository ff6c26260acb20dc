"""The ``openai`` provider: any OpenAI-compatible chat server over aiohttp, with retries.

One aiohttp session per event loop (never one per call). 429 (honouring Retry-After), 5xx, resets,
timeouts and truncated bodies are retried with exponential backoff; what still fails raises
`InfraFailure`, so the episode ends ``infra_error`` and is never scored. What no retry can fix fails
at once, as a `UsageError`: no API key for OpenAI's own API, a host name that does not resolve,
HTTP 401/403/404. Each retry is logged (logger ``nenyax.models.openai``, WARNING) and handed to
`on_retry`, so a user sees it as it happens instead of a silent minute.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
import urllib.parse
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import orjson

from nenyax.core.contract.chat import ChatRequest, Delta, TextRequest
from nenyax.core.contract.trajectory import ModelCall
from nenyax.core.errors import InfraFailure, RequestRefused, UsageError
from nenyax.core.models.openai_wire import (
    StreamAssembler,
    parse_response,
    parse_sse_line,
    parse_text_response,
    request_body,
    text_request_body,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
LOG = logging.getLogger("nenyax.models.openai")
_USER_STATUS = {401: "rejected the API key", 403: "refused access", 404: "does not serve that model or route"}


class _Retry(Exception):
    """A failure worth another attempt; `wait` overrides the backoff (Retry-After)."""

    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


class OpenAIProvider:
    """Chat completions against ``base_url`` (``OPENAI_BASE_URL``, else OpenAI's API)."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 6,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        stream: bool = False,
        token_ids: bool | None = None,
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        """Configure the transport; `token_ids=None` asks for vLLM token ids until the server refuses.

        `on_retry(sentence)` is called before each retry with what failed and how long it waits.
        """
        self.base_url = _checked_url((base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/"))
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not self.api_key and urllib.parse.urlsplit(self.base_url).hostname == "api.openai.com":
            # OpenAI's API answers 401 to every keyless request: say so now, not after the retries.
            msg = (
                f"No API key for {self.base_url}: set OPENAI_API_KEY (or --api-key-env NAME), "
                "or point --base-url at your own OpenAI-compatible server."
            )
            raise UsageError(msg)
        self.on_retry = on_retry
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.max_retries, self.backoff, self.max_backoff = max_retries, backoff, max_backoff
        self.stream_completions = stream
        # Real OpenAI rejects unknown body fields; vLLM-style servers return exact ids when asked.
        self.token_ids = token_ids if token_ids is not None else "api.openai.com" not in self.base_url
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = (
            weakref.WeakKeyDictionary()
        )

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
            session = aiohttp.ClientSession(headers=headers, timeout=self.timeout, connector=connector)
            self._sessions[loop] = session
        return session

    async def aclose(self) -> None:
        """Close this loop's session."""
        loop = asyncio.get_running_loop()
        session = self._sessions.pop(loop, None)
        if session is not None:
            await session.close()

    async def complete(self, request: ChatRequest) -> ModelCall:
        """One chat completion, retried on transient failures."""

        def body() -> dict[str, Any]:  # rebuilt per attempt: token_ids may be switched off
            return request_body(request, token_ids=self.token_ids, stream=self.stream_completions)

        data = await self._with_retries("/chat/completions", body, stream=self.stream_completions)
        return parse_response(data, request, where=self.base_url, provider=self.name)

    async def complete_text(self, request: TextRequest) -> ModelCall:
        """One raw text completion (``/completions``; with echo, the prompt's logprobs), retried like a chat call."""

        def body() -> dict[str, Any]:
            return text_request_body(request, token_ids=self.token_ids)

        data = await self._with_retries("/completions", body, stream=False)
        return parse_text_response(data, request, where=self.base_url, provider=self.name)

    async def stream(self, request: ChatRequest) -> AsyncIterator[Delta | ModelCall]:
        """The reply chunk by chunk as the server streams it, then the recorded call.

        Retried like `complete` until the first chunk arrives; a stream that breaks after that raises
        `InfraFailure` (what was already passed on cannot be taken back).
        """
        url = f"{self.base_url}/chat/completions"
        for attempt in range(self.max_retries + 1):
            assembler = StreamAssembler()
            started = False
            try:
                body = request_body(request, token_ids=self.token_ids, stream=True)
                async with self._session().post(url, data=orjson.dumps(body), headers=_JSON) as response:
                    if response.status != 200:
                        await self._refuse(response)
                    if response.content_type == "application/json":  # a server that does not stream
                        call = parse_response(await response.json(), request, where=self.base_url, provider=self.name)
                        yield Delta(text=str(call.response.get("content") or ""))
                        yield call
                        return
                    async for line in response.content:
                        delta = parse_sse_line(line, assembler, self.base_url)
                        if delta is not None and (delta.text or delta.token_ids or delta.tool_calls):
                            started = True
                            yield delta
                if not assembler.done:
                    raise _Retry("the stream ended before [DONE]")
            except (_Retry, aiohttp.ClientError, TimeoutError) as exc:
                if started or attempt == self.max_retries:
                    msg = (
                        f"The model server at {self.base_url} broke off a streamed reply ({type(exc).__name__}: {exc})."
                    )
                    raise InfraFailure(msg) from exc
                wait = exc.wait if isinstance(exc, _Retry) and exc.wait is not None else self._delay(attempt)
                LOG.warning("The stream from %s failed (%s); retrying in %.1f s.", self.base_url, exc, wait)
                await asyncio.sleep(wait)
                continue
            yield parse_response(assembler.result(), request, where=self.base_url, provider=self.name)
            return

    async def _with_retries(self, path: str, body: Any, *, stream: bool) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        last = "no attempt was made"
        for attempt in range(self.max_retries + 1):
            try:
                return await self._attempt(url, body(), stream)
            except _Retry as exc:
                last = str(exc)
                if attempt == self.max_retries:
                    break
                wait = exc.wait if exc.wait is not None else self._delay(attempt)
                note = (
                    f"The model server at {self.base_url} failed attempt {attempt + 1} of {self.max_retries + 1} "
                    f"({last}); retrying in {wait:.1f} s."
                )
                LOG.warning(note)
                if self.on_retry is not None:
                    self.on_retry(note)
                await asyncio.sleep(wait)
        msg = f"The model server at {self.base_url} kept failing after {self.max_retries + 1} attempts (last: {last})."
        raise InfraFailure(msg)

    def _delay(self, attempt: int) -> float:
        # Full jitter: spreads retries of many concurrent episodes instead of synchronising them.
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))

    async def _attempt(self, url: str, body: dict[str, Any], stream: bool) -> dict[str, Any]:
        try:
            async with self._session().post(url, data=orjson.dumps(body), headers=_JSON) as response:
                if response.status != 200:
                    await self._refuse(response)
                if stream:
                    return await self._read_stream(response)
                raw = await response.read()
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, socket.gaierror):  # the name does not resolve: no retry changes that
                host = urllib.parse.urlsplit(self.base_url).hostname
                msg = f"The model server host {host!r} (from {self.base_url}) does not resolve; check --base-url."
                raise UsageError(msg) from exc
            raise _Retry(f"{type(exc).__name__}: {exc}") from exc
        except (aiohttp.ClientError, TimeoutError) as exc:  # resets, redirect loops, bad payloads...
            raise _Retry(f"{type(exc).__name__}: {exc}") from exc
        try:
            return orjson.loads(raw)  # type: ignore[no-any-return]
        except orjson.JSONDecodeError as exc:
            # A body cut off mid-way is a transport fault, not the model's answer.
            raise _Retry(f"truncated or invalid JSON ({len(raw)} bytes)") from exc

    async def _refuse(self, response: aiohttp.ClientResponse) -> None:
        text = self._redacted(await response.text(errors="replace"))[:300]
        status = response.status
        if status == 400 and self.token_ids and "return_token_ids" in text:
            self.token_ids = False
            raise _Retry("the server does not accept return_token_ids; asking without it", wait=0.0)
        if status in _RETRY_STATUS or status >= 500:
            wait = _retry_after(response.headers.get("Retry-After"))
            raise _Retry(f"HTTP {status}: {text}", wait=wait)
        if status in (400, 422):  # the server refused what the caller asked: retrying cannot change it
            msg = f"The model server at {self.base_url} refused the request (HTTP {status}): {text.strip()}"
            raise RequestRefused(msg)
        if status in _USER_STATUS:
            msg = f"The model server at {self.base_url} {_USER_STATUS[status]} (HTTP {status}): {text.strip()}"
            raise UsageError(msg)
        msg = f"The model server at {self.base_url} refused the request (HTTP {status}): {text.strip()}"
        raise InfraFailure(msg)

    def _redacted(self, text: str) -> str:
        """`text` without the API key: some servers echo a refused key in their error, and an error is recorded."""
        return text.replace(self.api_key, "<the API key>") if self.api_key else text

    async def _read_stream(self, response: aiohttp.ClientResponse) -> dict[str, Any]:
        assembler = StreamAssembler()
        async for line in response.content:
            parse_sse_line(line, assembler, self.base_url)
        if not assembler.done:
            raise _Retry("the stream ended before [DONE]")
        return assembler.result()


_JSON = {"Content-Type": "application/json"}


def _checked_url(url: str) -> str:
    """Refuse a base URL that can never work, at construction rather than as failed episodes."""
    try:
        parts = urllib.parse.urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if not ok:
        msg = f"The base URL {url!r} is not an http(s) URL; write it like 'http://127.0.0.1:8000/v1'."
        raise UsageError(msg)
    return url


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
