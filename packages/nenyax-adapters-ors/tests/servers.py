"""Start a real ORS server in a child process on a free loopback port, and stop it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """A server process serving `script` (a file beside this one) on 127.0.0.1."""

    def __init__(self, script: str, port: int | None = None) -> None:
        self.script = HERE / script
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = Path(tempfile.gettempdir()) / "nenyax-ors-servers" / f"{self.script.stem}-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60.0) -> Served:
        self.log.parent.mkdir(exist_ok=True)
        # openreward checks the package index for a newer release on import unless told not to (we are offline).
        env = {**os.environ, "OPENREWARD_DISABLE_UPDATE_CHECK": "1", "PYTHONUNBUFFERED": "1"}
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, str(self.script), str(self.port)], stdout=log, stderr=subprocess.STDOUT, env=env
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.script.name} exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as resp:
                    if resp.status == 200:
                        return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.script.name} did not answer /health within {timeout} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def __enter__(self) -> Served:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
