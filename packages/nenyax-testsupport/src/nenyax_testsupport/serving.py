"""`nenyax serve` run as a user runs it, for the tests that serve an environment and check it back."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def nenyax_serve(uri: str, *, share_reference: bool = True) -> Iterator[str]:
    """Serve `uri` with the `nenyax` beside this interpreter on a free port; yields the server's base URL.

    The server is stopped (SIGTERM) when the block ends.
    """
    nenyax = Path(sys.executable).with_name("nenyax")
    argv = [str(nenyax), "serve", uri, "--port", "0", *(["--share-reference"] if share_reference else [])]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        announced = server.stdout.readline()
        found = re.search(r"at (http://\S+) \(WebSocket", announced)
        if found is None:
            rest = server.stdout.read() if server.poll() is not None else ""
            raise AssertionError(f"nenyax serve {uri} did not announce its URL: {announced}{rest}")
        yield found.group(1)
    finally:
        server.terminate()
        server.wait(30)


@contextmanager
def python_server(script: Path, *, health: str = "/health", timeout: float = 60.0) -> Iterator[str]:
    """Run ``python SCRIPT PORT`` (a real server of some library) on a free loopback port until it answers
    `health`; yields its base URL. The server is killed when the block ends; its output is in the error of a
    server that never answered."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    # Its output goes to a file, not a pipe: a chatty server never blocks on it.
    with tempfile.TemporaryFile() as log:
        yield from _serving(script, port, url, log, health, timeout)


def _serving(script: Path, port: int, url: str, log: IO[bytes], health: str, timeout: float) -> Iterator[str]:
    server = subprocess.Popen([sys.executable, str(script), str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                server.wait(30)
                log.seek(0)
                output = log.read().decode(errors="replace")
                raise AssertionError(f"{script.name} did not answer {health} within {timeout:g} s: {output[-2000:]}")
            try:
                with urllib.request.urlopen(url + health, timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        server.kill()
        server.wait(30)
