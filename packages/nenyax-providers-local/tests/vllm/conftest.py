"""The real vLLM every test here reaches: one server per run, started once (`nox -s vllm` runs this folder on one
pytest worker, so no second server competes for the two cores)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request

import pytest

SERVED = "smollm2-135m"
"""The name vLLM serves the embedded model under (``--served-model-name``)."""
STARTUP_S = 240  # eager start on two busy cores: 30-60 s measured, a loaded CI machine several times that


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def vllm(engine, tmp_path_factory):
    """`python -m vllm.entrypoints.openai.api_server` on loopback, the converted SmolLM2 folder in float32."""
    work = tmp_path_factory.mktemp("vllm")
    port = _free_port()
    env = {
        **os.environ,
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_CACHE_ROOT": str(work / "cache"),
        "TMPDIR": str(work),
        "TORCHINDUCTOR_CACHE_DIR": str(work / "inductor"),
        "HF_HUB_OFFLINE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }
    command = [
        os.environ["NENYAX_VLLM_PYTHON"],
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(engine.folder),
        "--served-model-name",
        SERVED,
        "--dtype",
        "float32",
        "--enforce-eager",
        "--max-model-len",
        "2048",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    log = (work / "server.log").open("w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"vLLM exited ({server.returncode}):\n{(work / 'server.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM did not start in {STARTUP_S} s:\n{(work / 'server.log').read_text()[-3000:]}")
            time.sleep(1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="session")
def served() -> str:
    """The name vLLM serves the model under."""
    return SERVED
