"""The embedded SmolLM2-135M behind `nenyax serve-model`: the inference engine SkyRL's generator would reach
(an OpenAI-compatible server returning vLLM's token ids and logprobs)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest


@pytest.fixture(scope="session")
def engine_url():
    """The engine's URL as SkyRL's ``get_endpoint_url()`` gives it (without ``/v1``)."""
    command = [sys.executable, "-m", "nenyax.cli", "serve-model", "--port", "0", "--json"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # While the engine loads its model: skyrl's generator and output-check modules (torch, ray) import.
        import skyrl.train.generators.base
        import skyrl.train.utils.trainer_utils  # noqa: F401

        line = server.stdout.readline()
        assert line, server.stderr.read()
        yield json.loads(line)["base_url"].rstrip("/").removesuffix("/v1")
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0


@pytest.fixture(scope="session")
def tokenizer():
    from transformers import AutoTokenizer

    from nenyax.providers.local.provider import LocalProvider

    return AutoTokenizer.from_pretrained(LocalProvider().weights("smollm2-135m"), local_files_only=True)
