"""Real OpenEnv servers on 127.0.0.1, built with OpenEnv's own `create_app` (see `guess_env.py`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from importlib import metadata
from pathlib import Path

import pytest

from nenyax.core.trajectory import PolicyInfo

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

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


@pytest.fixture(scope="session")
def servers():
    """The seeded, unseeded and single-session guess games, served for the whole test session."""
    running = Servers("seeded", "unseeded", "single")
    yield running
    running.stop()


@pytest.fixture
def own_server():
    """A seeded server of this test's own, which the test may kill."""
    running = Servers("seeded")
    yield running
    running.stop()


class ScriptedChat:
    """A text policy replying from a script: stands in for a chat model (the model runs in the integration suite)."""

    info = PolicyInfo(kind="callable", name="scripted-chat")
    speaks_text = True

    def __init__(self, reply):
        self.reply = reply
        self.seen = []

    async def act(self, turn):
        self.seen.append([dict(m) for m in turn.messages])
        return self.reply(turn) if callable(self.reply) else self.reply
