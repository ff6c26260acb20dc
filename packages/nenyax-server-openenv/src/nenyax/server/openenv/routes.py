"""OpenEnv's HTTP routes: stateless /reset, /step and /state, /schema, /metadata, /health, /mcp.

As in OpenEnv, HTTP ``/reset`` and ``/step`` each run on a fresh episode that is closed after the
request (an episode that spans steps needs ``/ws``). ``/step`` may name the task to start with the
reset keys (``task_id``, ``seed``, ``split`` + ``index``), which makes a single-step environment
(reasoning-gym, a dataset) a whole judged episode per request. Invalid bodies get FastAPI's 422
``{"detail": [...]}``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from nenyax.server.openenv.loops import new_episode, reset_keys
from nenyax.server.openenv.mcp import PARSE_ERROR, error
from nenyax.server.openenv.server import SERVER
from nenyax.server.openenv.wire import VALIDATION_ERROR, WireError, dumps, error_item, loads


def json(value: Any, status: int = 200) -> web.Response:
    """A JSON response encoded like every frame."""
    return web.Response(body=dumps(value), status=status, content_type="application/json")


def _unprocessable(errors: list[dict[str, Any]]) -> web.Response:
    return json({"detail": errors}, status=422)


async def read_body(request: web.Request, *, optional: bool) -> dict[str, Any] | web.Response:
    raw = await request.read()
    if not raw.strip() and optional:
        return {}
    try:
        body = loads(raw)
    except ValueError as exc:
        return _unprocessable(
            [error_item("json_invalid", ("body", 0), "JSON decode error", {}) | {"ctx": {"error": str(exc)}}]
        )
    if not isinstance(body, dict):
        return _unprocessable(
            [error_item("model_attributes_type", ("body",), "Input should be a valid dictionary or object", body)]
        )
    return body


def _failure(exc: WireError, loc: str) -> web.Response:
    if exc.code == VALIDATION_ERROR:
        errors = exc.extra.get("errors")
        if errors:
            return _unprocessable(
                [{**e, "loc": ["body", loc, *e["loc"]] if loc else ["body", *e["loc"]]} for e in errors]
            )
        return _unprocessable([error_item("value_error", ("body",), exc.message, None)])
    return json({"detail": exc.message, "status": exc.extra.get("status", "env_error")}, status=500)


async def reset(request: web.Request) -> web.Response:
    """``POST /reset``: a fresh episode's first observation (the episode is closed afterwards)."""
    body = await read_body(request, optional=True)
    if isinstance(body, web.Response):
        return body
    episode = new_episode(request.app[SERVER].served)
    try:
        return json(await episode.reset(body))
    except WireError as exc:
        return _failure(exc, "")
    finally:
        await episode.aclose()


async def step(request: web.Request) -> web.Response:
    """``POST /step`` ``{"action": {...}}``: one action on a fresh episode (reset with the body's reset keys)."""
    body = await read_body(request, optional=False)
    if isinstance(body, web.Response):
        return body
    action = body.get("action")
    if not isinstance(action, dict):
        kind, msg = (
            ("missing", "Field required") if action is None else ("dict_type", "Input should be a valid dictionary")
        )
        return _unprocessable([error_item(kind, ("body", "action"), msg, body if action is None else action)])
    timeout = body.get("timeout_s")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        return _unprocessable(
            [error_item("greater_than", ("body", "timeout_s"), "Input should be greater than 0", timeout)]
        )
    served = request.app[SERVER].served
    episode = new_episode(served)
    try:
        await episode.reset({key: body[key] for key in reset_keys(served) if key in body})
        return json(await episode.step(action))
    except WireError as exc:
        return _failure(exc, "action" if episode.started else "")
    finally:
        await episode.aclose()


async def state(request: web.Request) -> web.Response:
    """``GET /state``: the state of a fresh, never-reset episode (HTTP holds no episode)."""
    return json(new_episode(request.app[SERVER].served).state())


async def schema(request: web.Request) -> web.Response:
    """``GET /schema``: action, observation, state and reset_observation JSON schemas."""
    return json(request.app[SERVER].served.schema)


async def metadata(request: web.Request) -> web.Response:
    """``GET /metadata``: name, description, version."""
    return json(request.app[SERVER].served.metadata())


async def health(request: web.Request) -> web.Response:
    """``GET /health``."""
    return json({"status": "healthy"})


async def mcp(request: web.Request) -> web.Response:
    """``POST /mcp``: one JSON-RPC 2.0 request; always HTTP 200 with a JSON-RPC body, as OpenEnv answers."""
    try:
        rpc = loads(await request.read())
    except ValueError:
        return json(error(PARSE_ERROR, "Parse error"))
    response = await request.app[SERVER].mcp.handle(rpc)
    if response is None:  # a notification: nothing to answer
        return web.Response(status=202)
    return json(response)


def add_routes(app: web.Application) -> None:
    """Register the core HTTP routes (the app adds the Task API, ``/ws`` and ``/openapi.json``)."""
    app.router.add_post("/reset", reset)
    app.router.add_post("/step", step)
    app.router.add_get("/state", state)
    app.router.add_get("/schema", schema)
    app.router.add_get("/metadata", metadata)
    app.router.add_get("/health", health)
    app.router.add_post("/mcp", mcp)
