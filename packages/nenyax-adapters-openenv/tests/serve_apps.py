"""Serve some of `guess_env.APPS` with uvicorn on 127.0.0.1, each on a free port.

``python serve_apps.py seeded unseeded`` prints one JSON line ``{"seeded": port, ...}`` once every
socket is bound, then serves until killed. One process serves several apps, so the tests pay for
importing OpenEnv (several seconds) once.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path

import uvicorn

sys.path.insert(0, str(Path(__file__).parent))

from guess_env import APPS


async def main(names: list[str]) -> None:
    servers, ports = [], {}
    for name in names:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        ports[name] = sock.getsockname()[1]
        config = uvicorn.Config(APPS[name](), log_level="warning", ws_ping_interval=None)
        servers.append((uvicorn.Server(config), sock))
    print(json.dumps(ports), flush=True)
    await asyncio.gather(*(server.serve(sockets=[sock]) for server, sock in servers))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
