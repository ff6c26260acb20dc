"""Start the scripted loopback model server in its own process (so it does not share the client's core)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def scripted_server(latency: float = 0.0, reply: str = "ok") -> Iterator[str]:
    """Yield the base URL of a `nenyax.testing.model_server` process; stop it afterwards."""
    command = [sys.executable, "-m", "nenyax.testing.model_server", "--latency", str(latency), "--reply", reply]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)
