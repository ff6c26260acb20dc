"""``/ws``: one episode session per WebSocket connection, OpenEnv's reset/step/state/close/mcp frames.

Every frame gets exactly one answer (an observation, state, mcp or error frame) and nothing a client
sends can end the server: malformed JSON, wrong shapes, unknown types and frames over the size
limit are answered with OpenEnv's error frame and the connection stays open. Only a frame past the
hard limit (four times the limit, so a client cannot make the server buffer without bound) closes
the connection, with WebSocket code 1009.
"""

from __future__ import annotations

import enum
import logging
import time
from typing import TYPE_CHECKING, Any, Final

from aiohttp import WSMsgType, web

from nenyax.server.openenv.server import SERVER, Server
from nenyax.server.openenv.wire import (
    EXECUTION_ERROR,
    INVALID_JSON,
    UNKNOWN_TYPE,
    VALIDATION_ERROR,
    WireError,
    check_keys,
    error_frame,
    error_item,
    invalid,
    loads,
    mcp_frame,
    observation_frame,
    state_frame,
)

if TYPE_CHECKING:
    from nenyax.server.openenv.sessions import Slot

log = logging.getLogger("nenyax.server.openenv")

HARD_LIMIT_FACTOR = 4
_MCP_STYLE = ("list_tools", "call_tool")
_WITH_DATA = frozenset({"type", "data"})
_TYPE_ONLY = frozenset({"type"})


class _Signal(enum.Enum):
    """What `dispatch` answers instead of a frame: end the connection, or send nothing."""

    CLOSE = enum.auto()
    NO_REPLY = enum.auto()


_CLOSE: Final = _Signal.CLOSE
_NO_REPLY: Final = _Signal.NO_REPLY


def _data(obj: dict[str, Any], required: bool) -> Any:
    check_keys(obj, _WITH_DATA)
    if "data" not in obj:
        if required:
            raise invalid([error_item("missing", ("data",), "Field required", obj)])
        return {}
    data = obj["data"]
    if not isinstance(data, dict):
        raise invalid([error_item("dict_type", ("data",), "Input should be a valid dictionary", data)])
    return data


async def dispatch(server: Server, slot: Slot, obj: Any) -> bytes | _Signal:
    """The answer to one parsed message (`_CLOSE` for close, `_NO_REPLY` for an MCP notification)."""
    if type(obj) is not dict:
        raise invalid([error_item("model_type", (), "A message is a JSON object with a 'type' field", obj)])
    kind = obj.get("type")
    episode = slot.episode
    if kind == "step":
        data = obj["data"] if len(obj) == 2 and "data" in obj else _data(obj, required=True)
        if type(data) is dict and data.get("type") in _MCP_STYLE:
            return observation_frame(await server.mcp.step_action(slot, data))
        return observation_frame(await episode.step(data))
    if kind == "reset":
        return observation_frame(await episode.reset(_data(obj, required=False)))
    if kind == "state":
        check_keys(obj, _TYPE_ONLY)
        return state_frame(episode.state())
    if kind == "close":
        check_keys(obj, _TYPE_ONLY)
        return _CLOSE
    if kind == "mcp":
        response = await server.mcp.handle(_data(obj, required=True), slot)
        return _NO_REPLY if response is None else mcp_frame(response)
    raise WireError(UNKNOWN_TYPE, f"Unknown message type: {kind}")


async def _answer(server: Server, slot: Slot, raw: bytes | str) -> bytes | _Signal:
    if len(raw) > server.max_frame_bytes:
        message = f"This frame has {len(raw)} bytes; the limit is {server.max_frame_bytes} bytes."
        return error_frame(WireError(VALIDATION_ERROR, message))
    try:
        obj = loads(raw)
    except ValueError as exc:
        return error_frame(WireError(INVALID_JSON, f"Invalid JSON: {exc}"))
    slot.busy += 1
    try:
        if not slot.shared:
            return await dispatch(server, slot, obj)
        async with slot.lock:
            return await dispatch(server, slot, obj)
    except WireError as exc:
        return error_frame(exc)
    except Exception as exc:  # a bug here must cost one answer, never the server or the other sessions
        log.exception("unexpected failure answering a /ws message")
        return error_frame(WireError(EXECUTION_ERROR, f"{type(exc).__name__}: {exc}"))
    finally:
        slot.busy -= 1
        slot.last_active = time.monotonic()


async def handle(request: web.Request) -> web.WebSocketResponse:
    """Accept a connection, open (or attach to) its session, answer frames until it closes."""
    server = request.app[SERVER]
    ws = web.WebSocketResponse(
        max_msg_size=server.max_frame_bytes * HARD_LIMIT_FACTOR, decode_text=False, compress=False
    )
    await ws.prepare(request)
    table = server.table
    session_id = request.query.get("session_id")
    try:
        slot = table.attach(session_id, ws) if session_id else table.open(ws)
    except WireError as exc:  # at capacity or an unknown session: say so, then close (as OpenEnv does)
        await ws.send_frame(error_frame(exc), WSMsgType.TEXT)
        await ws.close()
        return ws
    text = WSMsgType.TEXT
    try:
        while True:
            msg = await ws.receive()
            if msg.type is text or msg.type is WSMsgType.BINARY:
                reply = await _answer(server, slot, msg.data)
                if reply is _CLOSE:
                    break
                if reply is not _NO_REPLY:
                    await ws.send_frame(reply, text)
            elif msg.type is not WSMsgType.PING and msg.type is not WSMsgType.PONG:
                break  # closed by the client, the reaper or shutdown, or a frame past the hard limit
    except ConnectionError:  # the client vanished mid-answer
        pass
    finally:
        slot.ws = None
        if not session_id or slot.pending_close:
            await table.close(slot)
        if not ws.closed:
            await ws.close()
    return ws
