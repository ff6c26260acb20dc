"""``/openapi.json``: an OpenAPI 3.1 description of the routes, as FastAPI publishes one for OpenEnv's server.

``openenv validate --url`` reads ``info.version`` (the ``openenv-http/1.x`` profile) and the paths
(``/reset``, ``/step`` and ``/state`` present: simulation mode). WebSocket routes have no OpenAPI
form; they are listed in the description.
"""

from __future__ import annotations

from typing import Any

from nenyax.server.openenv._version import __version__
from nenyax.server.openenv.loops import ServedLoop
from nenyax.server.openenv.served import ServedEnvironment

API_VERSION = "1.0.0"
"""The OpenEnv HTTP API version this server implements (OpenEnv 0.10 publishes 1.0.0)."""

_JSON = "application/json"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _op(
    summary: str, tag: str, response: dict[str, Any] | None = None, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary,
        "tags": [tag],
        "responses": {"200": {"description": "Successful Response", "content": {_JSON: {"schema": response or {}}}}},
    }
    if body is not None:
        op["requestBody"] = {"content": {_JSON: {"schema": body}}, "required": False}
        op["responses"]["422"] = {"description": "Validation Error"}
    return op


def document(served: ServedEnvironment | ServedLoop) -> dict[str, Any]:
    """The OpenAPI document for `served`."""
    result = {
        "type": "object",
        "properties": {
            "observation": _ref("Observation"),
            "reward": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "done": {"type": "boolean"},
            "metadata": {"anyOf": [{"type": "object"}, {"type": "null"}]},
        },
        "required": ["observation"],
    }
    reset_body = {
        "type": "object",
        "additionalProperties": True,
        "properties": {
            "seed": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
            "episode_id": {"anyOf": [{"type": "string", "maxLength": 255}, {"type": "null"}]},
            "task_id": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "split": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "index": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
        },
    }
    step_body = {
        "type": "object",
        "additionalProperties": True,
        "properties": {
            "action": _ref("Action"),
            "timeout_s": {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "null"}]},
            "request_id": {"anyOf": [{"type": "string", "maxLength": 255}, {"type": "null"}]},
            **reset_body["properties"],  # type: ignore[dict-item]  # a dict of schemas
        },
        "required": ["action"],
    }
    split_body = {"type": "object", "properties": {"split": {"type": "string"}}, "required": ["split"]}
    env = served.name
    paths = {
        "/reset": {
            "post": _op(
                "Reset the environment (a fresh episode, closed after the request)",
                "Environment Control",
                result,
                reset_body,
            )
        },
        "/step": {"post": _op("Execute an action on a fresh episode", "Environment Control", result, step_body)},
        "/state": {"get": _op("Get the state of a fresh episode", "State Management", _ref("State"))},
        "/schema": {"get": _op("Get all JSON schemas", "Schema")},
        "/metadata": {"get": _op("Get environment metadata", "Environment Info")},
        "/health": {"get": _op("Health check", "Health")},
        "/mcp": {
            "post": _op(
                "MCP JSON-RPC 2.0 (tools/list, tools/call, openenv/session/create|close)",
                "MCP",
                None,
                {"type": "object"},
            )
        },
        "/list_environments": {"get": _op("List environments", "Task API")},
        f"/{env}/splits": {"get": _op("List task splits", "Task API")},
        f"/{env}/tasks": {"post": _op("List a split's tasks", "Task API", None, split_body)},
        f"/{env}/num_tasks": {"post": _op("Count a split's tasks", "Task API", None, split_body)},
        f"/{env}/task": {"post": _op("Get one task by index", "Task API", None, split_body)},
        f"/{env}/task_range": {"post": _op("Get a range of tasks", "Task API", None, split_body)},
    }
    manifest = served.manifest
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "OpenEnv Environment HTTP API",
            "version": API_VERSION,
            "description": (
                f"{manifest.uri} served by nenyax serve {__version__} (nenyax-server-openenv). "
                "Episodes run over the WebSocket `/ws` (reset, step, state, close and mcp frames; "
                "`?session_id=` attaches to an MCP session); HTTP /reset and /step are stateless."
            ),
        },
        "paths": paths,
        "components": {
            "schemas": {
                "Action": served.schema["action"],
                "Observation": served.schema["observation"],
                "State": served.schema["state"],
            }
        },
    }
