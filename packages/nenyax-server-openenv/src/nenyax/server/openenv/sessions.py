"""The server's sessions: bounded, found by id, reaped when idle, closed on shutdown.

A session is an episode slot owned by one WebSocket connection, or created over MCP
(``openenv/session/create``) and then driven by ``tools/call`` or by a WebSocket that attaches to
it with ``/ws?session_id=``, as OpenEnv's MCP clients do.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

from aiohttp import WSMsgType

from nenyax.server.openenv.loops import ServedLoop, new_episode
from nenyax.server.openenv.served import ServedEnvironment
from nenyax.server.openenv.wire import CAPACITY_REACHED, SESSION_ERROR, WireError, error_frame

log = logging.getLogger("nenyax.server.openenv")


class Slot:
    """One session: its episode, who drives it, when it was last used."""

    __slots__ = ("busy", "episode", "id", "last_active", "lock", "pending_close", "shared", "ws")

    def __init__(self, served: ServedEnvironment | ServedLoop, ws: Any = None) -> None:
        """A fresh slot; `ws` is the WebSocket that owns or drives it, if any."""
        self.id = uuid.uuid4().hex
        self.episode = new_episode(served)
        self.ws = ws
        self.last_active = time.monotonic()
        self.busy = 0
        self.pending_close = False
        # MCP calls and a WebSocket may drive one episode at once: they take turns through the lock.
        # A slot only MCP can reach by id is `shared`; the WebSocket of an unshared one skips the lock.
        self.lock = asyncio.Lock()
        self.shared = ws is None


class SessionTable:
    """At most `max_sessions` slots; a slot idle for `idle_timeout` seconds is closed."""

    def __init__(self, served: ServedEnvironment | ServedLoop, max_sessions: int, idle_timeout: float) -> None:
        """Empty table; call `start` inside the running loop to begin reaping."""
        self.served = served
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.slots: dict[str, Slot] = {}
        self.reaped = 0
        self._reaper: asyncio.Task[None] | None = None

    def open(self, ws: Any = None) -> Slot:
        """A new slot, or CAPACITY_REACHED when `max_sessions` are active."""
        active = len(self.slots)
        if active >= self.max_sessions:
            msg = f"Server at capacity: {active}/{self.max_sessions} sessions active. Cannot accept new connections."
            raise WireError(CAPACITY_REACHED, msg, active_sessions=active, max_sessions=self.max_sessions)
        slot = Slot(self.served, ws)
        self.slots[slot.id] = slot
        return slot

    def attach(self, session_id: str, ws: Any) -> Slot:
        """Hand an MCP-created slot to a WebSocket (one at a time)."""
        slot = self.slots.get(session_id)
        if slot is None:
            raise WireError(SESSION_ERROR, f"Unknown session_id: {session_id}")
        if slot.ws is not None:
            raise WireError(SESSION_ERROR, f"Session {session_id} already has an attached WebSocket")
        slot.ws = ws
        slot.last_active = time.monotonic()
        return slot

    async def close(self, slot: Slot) -> None:
        """Remove `slot` and close its episode."""
        if self.slots.pop(slot.id, None) is not None:
            await slot.episode.aclose()

    def capacity(self) -> dict[str, int]:
        """Active and maximum session counts."""
        return {"active_sessions": len(self.slots), "max_sessions": self.max_sessions}

    # ---- idle reaping

    def start(self) -> None:
        """Begin reaping idle slots (checked every quarter of the timeout, at most every 5 s)."""
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    async def _reap_forever(self) -> None:
        period = min(max(self.idle_timeout / 4, 0.01), 5.0)
        while True:
            await asyncio.sleep(period)
            try:
                await self.reap()
            except Exception:  # a reaper that dies would leak every later idle session
                log.exception("reaping idle sessions failed")

    async def reap(self) -> int:
        """Close every slot idle past the timeout (never one in the middle of a call); return how many."""
        cutoff = time.monotonic() - self.idle_timeout
        idle = [s for s in self.slots.values() if s.last_active < cutoff and not s.busy]
        self.reaped += len(idle)
        for slot in idle:
            ws = slot.ws
            if ws is not None:
                message = f"Session closed after {self.idle_timeout:g} s without a message."
                with contextlib.suppress(Exception):
                    await ws.send_frame(error_frame(WireError(SESSION_ERROR, message)), WSMsgType.TEXT)
                    await ws.close()
            await self.close(slot)
        return len(idle)

    async def shutdown(self) -> None:
        """Stop reaping and close every slot (WebSockets with 1001 going away)."""
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        for slot in list(self.slots.values()):
            if slot.ws is not None:
                with contextlib.suppress(Exception):
                    await slot.ws.close(code=1001, message=b"server shutting down")
            await self.close(slot)
