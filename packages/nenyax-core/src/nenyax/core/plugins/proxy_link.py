"""The "proxy only" network of sandboxes on this machine: one port of a sandbox's own loopback that leads
to the recording proxy. Shared by the sandbox backends whose sandboxes are processes here (bwrap, a
local Docker engine); Linux only, and it takes root (entering another network namespace).

The sandbox keeps a network namespace of its own (only ``lo``, no route out). This process opens a
listening socket *inside* that namespace (a thread enters it with ``setns``, binds, and leaves: a
socket stays in the namespace it was made in) on the proxy's own port, and forwards every
connection to the proxy on this machine's loopback. So the agent inside uses the proxy's URL
unchanged, and nothing else on this machine or beyond is reachable. No program runs inside.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import socket
import threading
from urllib.parse import urlsplit

from nenyax.core.errors import InfraFailure

_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _listen_inside(pid: int, port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:`port` in the network namespace of process `pid`."""
    made: list[socket.socket] = []
    failed: list[BaseException] = []

    def enter_bind_leave() -> None:  # a thread of its own: setns moves only the calling thread
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        target = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            _setns(target)
            try:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", port))
                sock.listen(64)
                sock.setblocking(False)
                made.append(sock)
            finally:
                _setns(home)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which raises it
            failed.append(exc)
        finally:
            os.close(home)
            os.close(target)

    worker = threading.Thread(target=enter_bind_leave, name="nenyax-proxy-link")
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return made[0]


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            writer.close()


class ProxyLink:
    """Forwards connections made inside the sandbox to ``proxy`` (a loopback URL of this machine)."""

    def __init__(self, proxy: str) -> None:
        parts = urlsplit(proxy)
        if parts.hostname not in ("127.0.0.1", "localhost") or parts.port is None:
            msg = f"The proxy-only network links a loopback URL with a port (http://127.0.0.1:PORT/...), not {proxy!r}."
            raise InfraFailure(msg)
        self.url = proxy.replace("localhost", "127.0.0.1", 1)
        self.port = parts.port
        self._server: asyncio.Server | None = None

    async def open(self, pid: int) -> None:
        """Listen inside the network namespace of `pid` (the sandbox's first process)."""
        try:
            sock = _listen_inside(pid, self.port)
        except OSError as exc:
            msg = f"The proxy-only network could not listen inside the sandbox: {exc}."
            raise InfraFailure(msg) from exc

        async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                writer.close()
                return
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

        self._server = await asyncio.start_server(forward, sock=sock)

    async def close(self) -> None:
        """Stop listening (connections still open end with the sandbox)."""
        if self._server is not None:
            self._server.close()
            self._server = None
