"""A loopback TCP proxy in front of a real ORS server that cuts one ``/call`` stream after its ``task_id`` event.

This is how a dropped connection looks to a client (a proxy or network failing mid-stream) while
the server itself keeps running, which is the case ORS's resumption by task id exists for.
"""

from __future__ import annotations

import asyncio
import threading


class CuttingProxy:
    """Forwards 127.0.0.1:`port` to `upstream_port`; the first call stream carrying `marker` is cut."""

    def __init__(self, upstream_port: int, marker: bytes = b"/call") -> None:
        self.upstream_port = upstream_port
        self.marker = marker
        self.cuts = 0
        self.connections = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        armed = False

        async def upstream() -> None:
            nonlocal armed
            while data := await client_r.read(65536):
                if self.marker in data and self.cuts == 0:
                    armed = True
                server_w.write(data)
                await server_w.drain()
            server_w.close()

        async def downstream() -> None:
            while data := await server_r.read(65536):
                client_w.write(data)
                await client_w.drain()
                if armed and b"event: task_id" in data and self.cuts == 0:
                    self.cuts += 1
                    break
            client_w.close()
            server_w.close()

        try:
            await asyncio.gather(upstream(), downstream())
        except (ConnectionError, OSError):
            pass
        finally:
            client_w.close()
            server_w.close()

    def start(self) -> CuttingProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        async def _stop() -> None:
            if self._server is not None:
                self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(_stop(), self._loop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> CuttingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
