"""OpenEnv 0.10's Task API (ORS-compatible): the environment's splits and stable task ids over HTTP.

A task listed here is started by a reset with ``{"split": ..., "index": ...}`` or its
``{"task_id": ...}``, so a client can replay exactly the same task.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from nenyax.core import UsageError
from nenyax.server.openenv.routes import json, read_body
from nenyax.server.openenv.server import SERVER
from nenyax.server.openenv.wire import dumps, error_item

MAX_LISTED_TASKS = 10_000
"""The most task ids one answer lists (a split may be unbounded)."""
_SPLIT_TYPES = ("train", "validation", "test")


def _fail(status: int, detail: Any) -> web.HTTPException:
    cls = {400: web.HTTPBadRequest, 404: web.HTTPNotFound, 422: web.HTTPUnprocessableEntity}[status]
    return cls(text=dumps({"detail": detail}).decode(), content_type="application/json")


def _split_names(request: web.Request) -> list[str]:
    return [s.name for s in request.app[SERVER].served.manifest.splits] or ["default"]


def _check_env(request: web.Request) -> None:
    name = request.match_info["env_name"]
    if name.lower() != request.app[SERVER].served.name.lower():
        raise _fail(404, f"unknown environment {name!r}")


async def _request(request: web.Request, keys: dict[str, type]) -> dict[str, Any]:
    """The body, validated like OpenEnv's request models (extra keys forbidden; ``split`` required)."""
    _check_env(request)
    body = await read_body(request, optional=False)
    if isinstance(body, web.Response):
        raise web.HTTPUnprocessableEntity(text=body.text, content_type="application/json")
    errors = [
        error_item("extra_forbidden", ("body", k), "Extra inputs are not permitted", v)
        for k, v in body.items()
        if k not in keys
    ]
    for key, kind in keys.items():
        value = body.get(key)
        if value is None and key != "split":
            continue
        if isinstance(value, bool) or not isinstance(value, kind):
            errors.append(
                error_item(f"{kind.__name__}_type", ("body", key), f"Input should be a valid {kind.__name__}", value)
            )
    if errors:
        raise _fail(422, errors)
    return body


async def _task_ids(request: web.Request, split: str, limit: int) -> list[str]:
    served = request.app[SERVER].served
    if split not in _split_names(request):
        raise _fail(404, f"unknown split {split!r}; the splits are {', '.join(_split_names(request))}")
    try:
        return list(await served.run(served.env.task_ids, split if served.manifest.splits else None, limit))
    except UsageError as exc:
        raise _fail(400, str(exc)) from exc


def _task(task_id: str, index: int) -> dict[str, Any]:
    return {"id": task_id, "index": index}


async def list_environments(request: web.Request) -> web.Response:
    """``GET /list_environments``."""
    return json([request.app[SERVER].served.name])


async def splits(request: web.Request) -> web.Response:
    """``GET /{env}/splits``: name, type (train, validation or test) and task count when known."""
    _check_env(request)
    counts = {s.name: s.count for s in request.app[SERVER].served.manifest.splits}
    names = _split_names(request)
    return json([{"name": n, "type": n if n in _SPLIT_TYPES else "validation", "count": counts.get(n)} for n in names])


async def tasks(request: web.Request) -> web.Response:
    """``POST /{env}/tasks`` ``{"split"}``: the split's task ids (at most `MAX_LISTED_TASKS`)."""
    body = await _request(request, {"split": str})
    ids = await _task_ids(request, body["split"], MAX_LISTED_TASKS)
    return json({"tasks": [_task(t, i) for i, t in enumerate(ids)], "env_name": request.app[SERVER].served.name})


async def num_tasks(request: web.Request) -> web.Response:
    """``POST /{env}/num_tasks`` ``{"split"}``."""
    body = await _request(request, {"split": str})
    count = {s.name: s.count for s in request.app[SERVER].served.manifest.splits}.get(body["split"])
    if count is None:
        count = len(await _task_ids(request, body["split"], MAX_LISTED_TASKS))
    return json({"num_tasks": count})


async def task(request: web.Request) -> web.Response:
    """``POST /{env}/task`` ``{"split", "index"}``."""
    body = await _request(request, {"split": str, "index": int})
    index = body.get("index")
    ids = await _task_ids(request, body["split"], index + 1) if index is not None and index >= 0 else []
    if index is None or not 0 <= index < len(ids):
        return json({"detail": "Invalid task index"}, status=400)
    return json({"task": _task(ids[index], index)})


async def task_range(request: web.Request) -> web.Response:
    """``POST /{env}/task_range`` ``{"split", "start", "stop"}`` (start inclusive, stop exclusive)."""
    body = await _request(request, {"split": str, "start": int, "stop": int})
    start, stop = max(body.get("start") or 0, 0), body.get("stop")
    limit = MAX_LISTED_TASKS if stop is None else min(max(stop, 0), MAX_LISTED_TASKS)
    ids = await _task_ids(request, body["split"], limit)
    return json({"tasks": [_task(ids[i], i) for i in range(start, len(ids))]})


def add_routes(app: web.Application) -> None:
    """Register the Task API routes."""
    app.router.add_get("/list_environments", list_environments)
    app.router.add_get("/{env_name}/splits", splits)
    app.router.add_post("/{env_name}/tasks", tasks)
    app.router.add_post("/{env_name}/num_tasks", num_tasks)
    app.router.add_post("/{env_name}/task", task)
    app.router.add_post("/{env_name}/task_range", task_range)
