"""What every route shares: the served environment, the session table, the MCP handler, the limits."""

from __future__ import annotations

from aiohttp import web

from nenyax.server.openenv._version import __version__
from nenyax.server.openenv.loops import ServedLoop
from nenyax.server.openenv.mcp import McpHandler, Tools
from nenyax.server.openenv.served import ServedEnvironment
from nenyax.server.openenv.sessions import SessionTable

DEFAULT_MAX_SESSIONS = 1024
DEFAULT_IDLE_TIMEOUT = 300.0
DEFAULT_MAX_FRAME_BYTES = 1 << 20


class Server:
    """One served environment and its limits."""

    def __init__(
        self,
        served: ServedEnvironment | ServedLoop,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        """`max_sessions` bounds open sessions, `idle_timeout` reaps quiet ones, `max_frame_bytes` bounds a message."""
        self.served = served
        self.max_frame_bytes = max_frame_bytes
        self.table = SessionTable(served, max_sessions, idle_timeout)
        tools = Tools(served.schema["action"], served.manifest.action)
        self.mcp = McpHandler(self.table, tools, f"nenyax:{served.manifest.uri}", __version__)


SERVER = web.AppKey("nenyax.server", Server)
"""Where the application keeps its `Server`."""
