"""`nenyax serve-model` as a test's model server: the embedded SmolLM2-135M behind an OpenAI-compatible URL
that answers with vLLM's token ids, what a trainer's inference server is to the bridges' tests."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def served_model(*args: str, stop_timeout: float = 120, meanwhile: Callable[[], object] | None = None) -> Iterator[str]:
    """Start ``nenyax serve-model ARGS --port 0 --json``; yield its base URL (ending ``/v1``, no slash), and stop
    it at the end, asserting it exited cleanly (`stop_timeout`: a call still being sampled finishes first).

    `meanwhile` runs while the server loads its model (a test's own slow imports, say)."""
    command = [sys.executable, "-m", "nenyax.cli", "serve-model", *args, "--port", "0", "--json"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if meanwhile is not None:
            meanwhile()
        line = server.stdout.readline() if server.stdout else ""
        if not line:
            raise AssertionError(f"nenyax serve-model did not start: {server.stderr.read() if server.stderr else ''}")
        yield str(json.loads(line)["base_url"]).rstrip("/")
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=stop_timeout) == 0
