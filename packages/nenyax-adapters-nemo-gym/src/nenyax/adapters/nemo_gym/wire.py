"""The resources-server wire: JSON POSTs over aiohttp, the session carried in a cookie.

One connection pool per event loop, shared by that loop's sessions and closed when the last of
them closes (so a loop that ends leaves nothing open). The pool keeps no cookies: each episode's
session cookie lives on its own `Reply` chain, never in a jar two episodes could share.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
import weakref
from http.cookies import SimpleCookie
from typing import Any

import aiohttp
import attrs

from nenyax.core import InfraFailure


@attrs.frozen
class Reply:
    """A server's answer to one POST."""

    status: int
    text: str
    cookies: dict[str, str]

    def json(self) -> Any:
        """The body as JSON; raise `ValueError` when it is not."""
        return json.loads(self.text)

    def detail(self, limit: int = 300) -> str:
        """The error the server gave, short: FastAPI's ``detail`` (validation errors by field) or the body."""
        try:
            body = self.json()
        except ValueError:
            body = self.text
        if isinstance(body, dict) and "detail" in body:
            body = body["detail"]
        if isinstance(body, list):  # FastAPI validation errors: [{"loc": [...], "msg": ...}, ...]
            body = "; ".join(
                f"{'.'.join(str(p) for p in e.get('loc', []))}: {e.get('msg', '')}" if isinstance(e, dict) else str(e)
                for e in body
            )
        text = " ".join(str(body).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


def probe(url: str, timeout: float = 10.0) -> list[str] | None:
    """Check the liveness route ``GET /`` synchronously (load may run inside a loop), then return the POST
    routes FastAPI's ``/openapi.json`` lists (None when it lists none); a server that is down is `InfraFailure`."""
    try:
        with urllib.request.urlopen(url + "/", timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        msg = f"The server at {url} answered GET / with {exc.code}, so it is not a NeMo Gym resources server."
        raise InfraFailure(msg) from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        msg = f"No NeMo Gym resources server answers at {url} ({reason}); start it, or check the URL."
        raise InfraFailure(msg) from exc
    return _post_routes(url, timeout)


def _post_routes(url: str, timeout: float) -> list[str] | None:
    """The POST paths in the server's OpenAPI schema; None when it publishes none (then nothing is assumed)."""
    try:
        with urllib.request.urlopen(url + "/openapi.json", timeout=timeout) as response:
            schema = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
    paths = schema.get("paths") if isinstance(schema, dict) else None
    if not isinstance(paths, dict):
        return None
    return sorted(path for path, item in paths.items() if isinstance(item, dict) and "post" in item)


class Client:
    """POSTs to one resources server."""

    def __init__(self, url: str, timeout: float) -> None:
        """`url` is the server's base URL; `timeout` bounds each request in seconds."""
        self.url = url
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = weakref.WeakKeyDictionary()

    def _pool(self) -> list[Any]:
        loop = asyncio.get_running_loop()
        entry = self._pools.get(loop)
        if entry is None or entry[0].closed:
            connector = aiohttp.TCPConnector(limit=0)
            session = aiohttp.ClientSession(
                connector=connector, timeout=self.timeout, cookie_jar=aiohttp.DummyCookieJar()
            )
            entry = self._pools[loop] = [session, 0]
        return entry

    def hold(self) -> None:
        """A session starts on this loop: keep its pool open until `release`."""
        self._pool()[1] += 1

    async def release(self) -> None:
        """A session on this loop ended; close the pool when it was the last."""
        entry = self._pools.get(asyncio.get_running_loop())
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del self._pools[asyncio.get_running_loop()]
            await entry[0].close()

    async def aclose(self) -> None:
        """Close this loop's pool whatever holds it."""
        entry = self._pools.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].close()

    async def post(self, path: str, body: Any, cookies: dict[str, str]) -> Reply:
        """POST `body` as JSON to `path` with `cookies`; a lost connection or timeout is `InfraFailure`."""
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} if cookies else {}
        where = f"{self.url}{path}"
        try:
            async with self._pool()[0].post(where, json=body, headers=headers) as response:
                text = await response.text()
                jar = SimpleCookie()
                for header in response.headers.getall("Set-Cookie", []):
                    jar.load(header)
                fresh = {name: morsel.value for name, morsel in jar.items()}
                return Reply(status=response.status, text=text, cookies={**cookies, **fresh})
        except TimeoutError as exc:
            msg = f"The NeMo Gym server at {self.url} did not answer POST {path} within {self.timeout.total:g} s."
            raise InfraFailure(msg) from exc
        except aiohttp.ServerDisconnectedError as exc:
            msg = f"The NeMo Gym server at {self.url} dropped the connection during POST {path}."
            raise InfraFailure(msg) from exc
        except aiohttp.ClientConnectorError as exc:
            msg = f"No NeMo Gym resources server answers at {self.url} ({exc.os_error}) for POST {path}."
            raise InfraFailure(msg) from exc
        except aiohttp.ClientError as exc:
            msg = f"The connection to the NeMo Gym server at {self.url} failed during POST {path}: {exc}."
            raise InfraFailure(msg) from exc
