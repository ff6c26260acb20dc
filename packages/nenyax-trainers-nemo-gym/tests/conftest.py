"""What the tests share: `nenyax serve-model` behind a recording pass-through (what the model server answered),
the agent server run by uvicorn in a thread of the test process, and nemo-gym's own client posting rows to it.

nemo-gym (Ray, FastAPI, MLflow) and the embedded model each take many seconds to import: the model server is
started first and read last, and nemo-gym is imported inside the functions, so the two start side by side.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web


class ModelServer:
    """`nenyax serve-model` (the embedded SmolLM2-135M), started at once; `url` waits for it."""

    def __init__(self) -> None:
        command = [sys.executable, "-m", "nenyax.cli", "serve-model", "--port", "0", "--json"]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._url: str | None = None

    @property
    def url(self) -> str:
        if self._url is None:
            line = self.process.stdout.readline()
            assert line, self.process.stderr.read()
            self._url = json.loads(line)["base_url"]
        return self._url


class Recorder:
    """A pass-through in front of the model server that keeps every chat completion body it answered."""

    def __init__(self, upstream: Callable[[], str]) -> None:
        from nenyax.trainers.nemo_gym.cli import free_port

        self.upstream = upstream
        """The model server's URL, waiting for it to start (call before posting rows)."""
        self.answers: list[dict[str, Any]] = []
        self.port = free_port("127.0.0.1")
        self.url = f"http://127.0.0.1:{self.port}/v1"
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def forward(request: web.Request) -> web.Response:
            sent = await request.read()
            url, headers = f"{upstream().rstrip('/')}/chat/completions", {"Content-Type": "application/json"}
            async with aiohttp.ClientSession() as session, session.post(url, data=sent, headers=headers) as answer:
                body = await answer.read()
                if answer.status == 200:
                    self.answers.append(json.loads(body))
                return web.Response(body=body, status=answer.status, content_type="application/json")

        async def start() -> None:
            app = web.Application()
            app.router.add_post("/v1/chat/completions", forward)
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", self.port).start()
            ready.set()

        threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True).start()
        assert ready.wait(30)


@pytest.fixture(scope="session", autouse=True)
def model_server() -> Iterator[ModelServer]:
    """Started before the first test (autouse), read when a test first needs its URL."""
    server = ModelServer()
    try:
        yield server
    finally:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


@pytest.fixture(scope="session")
def recorder(model_server: ModelServer) -> Recorder:
    return Recorder(lambda: model_server.url)


def serving(agent: Any) -> Iterator[str]:
    """Run the agent's app (set up as nemo-gym's `run_webserver` sets it up) on its port; yield its URL."""
    import uvicorn

    from nenyax.trainers.nemo_gym.serve import app_of

    config = uvicorn.Config(app_of(agent), host=agent.config.host, port=agent.config.port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive(), "the agent server stopped"
        assert time.monotonic() < deadline, "the agent server did not start"
        time.sleep(0.05)
    try:
        yield f"http://{agent.config.host}:{agent.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def client_for(url: str, name: str) -> Any:
    """nemo-gym's ServerClient, its global config naming the agent server as a NeMo Gym deployment does."""
    from nemo_gym.server_utils import BaseServerConfig, ServerClient
    from omegaconf import OmegaConf

    host, port = url.removeprefix("http://").split(":")
    config = {name: {"responses_api_agents": {"nenyax_agent": {"host": host, "port": int(port)}}}}
    return ServerClient(
        head_server_config=BaseServerConfig(host=host, port=int(port)), global_config_dict=OmegaConf.create(config)
    )


def run_all(client: Any, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Post every row to /run at once, as `RolloutCollectionHelper.run_examples` does (its global aiohttp client,
    set up from the client's global config as `setup_server_client` sets it)."""
    from nemo_gym.server_utils import (
        GlobalAIOHTTPAsyncClientConfig,
        get_response_json,
        global_aiohttp_client_exit,
        raise_for_status,
        set_global_aiohttp_client,
    )

    async def run(row: dict[str, Any]) -> dict[str, Any]:
        answer = await client.post(server_name=row["agent_ref"]["name"], url_path="/run", json=row)
        await raise_for_status(answer)
        return await get_response_json(answer)

    async def everything() -> list[dict[str, Any]]:
        set_global_aiohttp_client(GlobalAIOHTTPAsyncClientConfig.model_validate(client.global_config_dict))
        return await asyncio.gather(*(run(row) for row in batch))

    try:
        return asyncio.run(everything())
    finally:
        global_aiohttp_client_exit()
