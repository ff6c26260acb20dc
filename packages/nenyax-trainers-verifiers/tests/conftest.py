"""`nenyax serve-model`: the embedded SmolLM2-135M behind an OpenAI-compatible server that returns the token ids
and logprobs it sampled (vLLM's ``return_token_ids`` shape): what verifiers' runner plays against here."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest


@pytest.fixture(scope="session")
def served():
    command = [sys.executable, "-m", "nenyax.cli", "serve-model", "--port", "0", "--json"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert line, server.stderr.read()
        yield json.loads(line)["base_url"]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
