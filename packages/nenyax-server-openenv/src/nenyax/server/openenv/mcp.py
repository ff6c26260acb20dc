"""``/mcp``: JSON-RPC 2.0 with MCP's ``tools/list`` and ``tools/call``, as OpenEnv's MCP environments serve it.

The environment's actions are two tools: ``observe`` (the current observation; starts the default
episode if none is in progress) and ``act`` (one action, the same object a ``step`` message carries).
A call runs on the session named by ``params.session_id`` (created by OpenEnv's
``openenv/session/create``), on the WebSocket's own session for a ``{"type": "mcp"}`` frame, or else
on a one-call episode of its own, as OpenEnv's stateless ``POST /mcp`` does.
"""

from __future__ import annotations

import time
from typing import Any

from nenyax.server.openenv.episodes import Episode
from nenyax.server.openenv.loops import LoopEpisode, new_episode
from nenyax.server.openenv.sessions import SessionTable, Slot
from nenyax.server.openenv.wire import VALIDATION_ERROR, WireError, dumps

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000
PROTOCOL_VERSION = "2025-06-18"

_REQUEST_KEYS = frozenset({"jsonrpc", "method", "params", "id"})


def error(code: int, message: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response (OpenEnv's shape: ``data`` is always present)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message, "data": data}}


def success(result: Any, request_id: Any) -> dict[str, Any]:
    """A JSON-RPC success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _invalid_request(request: Any) -> str | None:
    if not isinstance(request, dict):
        return "a JSON-RPC request is a JSON object"
    extra = sorted(set(request) - _REQUEST_KEYS)
    if extra:
        return f"unexpected field(s) {', '.join(extra)}"
    if request.get("jsonrpc") != "2.0":
        return "jsonrpc must be '2.0'"
    if not isinstance(request.get("method"), str):
        return "method must be a string"
    if not isinstance(request.get("params", {}), dict):
        return "params must be an object"
    request_id = request.get("id")
    if request_id is not None and (isinstance(request_id, bool) or not isinstance(request_id, str | int)):
        return "id must be a string, an integer or null"
    return None


class Tools:
    """The two tools and how a call on an episode runs."""

    def __init__(self, action_schema: dict[str, Any], about: str) -> None:
        """Tools whose ``act`` input is `action_schema` (minus its ``metadata`` field)."""
        schema = {k: v for k, v in action_schema.items() if k != "title"}
        schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "metadata"}
        self.specs = [
            {
                "name": "observe",
                "description": "The current observation (starts the default episode when none is running).",
                "schema": {"type": "object", "properties": {}, "additionalProperties": False},
            },
            {
                "name": "act",
                "description": f"Take one action in the episode. {about}".strip(),
                "schema": schema,
            },
        ]
        self.names = {spec["name"] for spec in self.specs}

    def listed(self, key: str = "inputSchema") -> list[dict[str, Any]]:
        """The tool list: MCP's ``inputSchema`` on /mcp, OpenEnv's ``input_schema`` in a list_tools observation."""
        return [{"name": t["name"], "description": t["description"], key: t["schema"]} for t in self.specs]

    async def call(self, episode: Episode | LoopEpisode, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run tool `name` on `episode`; the payload is a reset/step result. Raises `WireError`."""
        if name == "observe":
            if not episode.started:
                return await episode.reset({})
            assert episode.last is not None
            return episode.last
        if not episode.started:
            await episode.reset({})
        return await episode.step(arguments)


class McpHandler:
    """JSON-RPC requests from ``POST /mcp`` and ``{"type": "mcp"}`` WebSocket frames."""

    def __init__(self, table: SessionTable, tools: Tools, name: str, version: str) -> None:
        """Serve `tools` over the sessions of `table`."""
        self.table = table
        self.tools = tools
        self.name = name
        self.version = version

    async def handle(self, request: Any, slot: Slot | None = None) -> dict[str, Any] | None:
        """The response to one request (None for a notification); `slot` is the WebSocket's own session."""
        problem = _invalid_request(request)
        if problem is not None:
            return error(INVALID_REQUEST, f"Invalid request: {problem}")
        method, params, request_id = request["method"], request.get("params", {}), request.get("id")
        if method.startswith("notifications/") and request_id is None:
            return None
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion", PROTOCOL_VERSION),
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": self.name, "version": self.version},
            }
            return success(result, request_id)
        if method == "ping":
            return success({}, request_id)
        if method == "tools/list":
            return success({"tools": self.tools.listed()}, request_id)
        if method == "tools/call":
            return await self._call(params, request_id, slot)
        if method == "openenv/session/create":
            if slot is not None:
                slot.shared = True  # its id is out: HTTP calls may now reach it
                return success({"session_id": slot.id}, request_id)
            try:
                created = self.table.open()
            except WireError as exc:
                return error(SERVER_ERROR, exc.message, request_id, data=self.table.capacity())
            return success({"session_id": created.id}, request_id)
        if method == "openenv/session/close":
            return await self._close(params, request_id, slot)
        return error(METHOD_NOT_FOUND, f"Method not found: {method}", request_id)

    async def _close(self, params: dict[str, Any], request_id: Any, slot: Slot | None) -> dict[str, Any]:
        target_id = params.get("session_id")
        if not isinstance(target_id, str) or not target_id:
            return error(INVALID_PARAMS, "Invalid params - 'session_id' is required", request_id)
        if slot is not None and target_id == slot.id:
            return error(INVALID_REQUEST, "Cannot close active WebSocket-managed session via MCP method", request_id)
        target = self.table.slots.get(target_id)
        if target is None:
            return error(INVALID_PARAMS, f"Unknown session_id: {target_id}", request_id)
        if target.ws is not None:  # closed when its WebSocket lets go, as OpenEnv does
            target.pending_close = True
            return success({"session_id": target_id, "closed": False, "closing": True}, request_id)
        await self.table.close(target)
        return success({"session_id": target_id, "closed": True}, request_id)

    async def _call(self, params: dict[str, Any], request_id: Any, slot: Slot | None) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str) or not name:
            return error(INVALID_PARAMS, "Missing 'name' in params", request_id)
        if name not in self.tools.names:
            return error(INVALID_PARAMS, f"Tool not found: {name}", request_id)
        if not isinstance(arguments, dict):
            return error(INVALID_PARAMS, "arguments must be an object", request_id)
        session_id = params.get("session_id")
        if slot is None and session_id is not None:
            slot = self.table.slots.get(session_id) if isinstance(session_id, str) else None
            if slot is None:
                return error(INVALID_PARAMS, f"Unknown session_id: {session_id}", request_id)
        try:
            payload = await self.run(name, arguments, slot)
        except WireError as exc:
            code = INVALID_PARAMS if exc.code == VALIDATION_ERROR else INTERNAL_ERROR
            return error(code, exc.message, request_id, data=exc.extra or None)
        text = dumps(payload).decode()
        result = {"content": [{"type": "text", "text": text}], "structuredContent": payload, "isError": False}
        result["data"] = payload  # what OpenEnv's MCPToolClient.call_tool returns to its caller
        return success(result, request_id)

    async def run(self, name: str, arguments: dict[str, Any], slot: Slot | None) -> dict[str, Any]:
        """Run a tool on `slot`'s episode (taking turns with its other drivers), or on a one-call episode."""
        if slot is None:
            episode = new_episode(self.table.served)
            try:
                return await self.tools.call(episode, name, arguments)
            finally:
                await episode.aclose()
        slot.busy += 1
        try:
            async with slot.lock:
                return await self.tools.call(slot.episode, name, arguments)
        finally:
            slot.busy -= 1
            slot.last_active = time.monotonic()

    async def step_action(self, slot: Slot, data: dict[str, Any]) -> dict[str, Any]:
        """OpenEnv's MCP-style step actions over /ws: ``{"type": "list_tools"}`` and ``{"type": "call_tool", ...}``."""
        if data.get("type") == "list_tools":
            return {
                "observation": {"tools": self.tools.listed("input_schema"), "metadata": {}},
                "reward": None,
                "done": False,
            }
        tool = data.get("tool_name")
        arguments = data.get("arguments", {})
        failure = None
        if not isinstance(tool, str) or tool not in self.tools.names:
            failure = {"error_type": "tool_not_found", "message": f"Tool not found: {tool}"}
        elif not isinstance(arguments, dict):
            failure = {"error_type": "invalid_args", "message": "arguments must be an object"}
        if failure is None:
            try:
                payload = await self.tools.call(slot.episode, str(tool), arguments)
            except WireError as exc:
                kind = "invalid_args" if exc.code == VALIDATION_ERROR else "execution_error"
                failure = {"error_type": kind, "message": exc.message}
            else:
                observation = {"tool_name": tool, "result": payload, "error": None, "metadata": payload["metadata"]}
                return {**payload, "observation": observation}
        observation = {"tool_name": tool, "result": None, "error": failure, "metadata": {}}
        return {"observation": observation, "reward": None, "done": False}
