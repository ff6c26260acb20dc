"""Start the OpenEnv servers of `guess_env.APPS` in a subprocess and wait until they answer.

Used by this package's fixtures and by the monorepo's integration suite (tests/test_openenv.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).parent

STARTUP_S = 90
"""Importing OpenEnv takes seconds (gradio, huggingface_hub); on a loaded 2-core machine, more."""


def openenv_distribution() -> str:
    """Which OpenEnv distribution is installed: ``openenv`` (0.10 wire) or ``openenv-core`` (0.3 wire)."""
    for name in ("openenv", "openenv-core"):
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    raise RuntimeError("neither openenv nor openenv-core is installed")


class Servers:
    """One process serving some of `guess_env.APPS`, each on its own port."""

    def __init__(self, *names: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "serve_apps.py"), *names],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()  # printed once the sockets are bound (after the OpenEnv import)
        if not line:
            self.proc.wait(timeout=10)
            raise RuntimeError(f"serve_apps.py failed: {self.proc.stderr.read()[-2000:]}")
        self.ports: dict[str, int] = json.loads(line)
        deadline = time.monotonic() + STARTUP_S
        for port in self.ports.values():
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    if time.monotonic() > deadline or self.proc.poll() is not None:
                        self.stop()
                        raise RuntimeError(f"the OpenEnv server on port {port} did not come up") from None
                    time.sleep(0.1)

    def uri(self, name: str, query: str = "", scheme: str = "ws") -> str:
        """``openenv:<scheme>://127.0.0.1:<port>`` of app `name`, with `query` appended."""
        return f"openenv:{scheme}://127.0.0.1:{self.ports[name]}" + (f"?{query}" if query else "")

    def stop(self) -> None:
        """Kill the server process (SIGKILL: the tests of dropped connections want no goodbye)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()
