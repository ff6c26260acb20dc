"""The policy the hooks are tested against: `nenyax serve-model` (the embedded SmolLM2-135M, answering with
vLLM's token ids), behind a small session server of the tests' own that stands in for miles' (miles is not on
the package registry): it serves ``/sessions/<id>/v1/chat/completions``, forwards each call to the model
server and keeps what each session's calls sent and got back, as miles' TITO recorder does."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import defaultdict
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from nenyax_testsupport.served_model import served_model


@pytest.fixture(scope="session")
def model_url():
    with served_model() as url:
        yield url


class SessionServer:
    """miles' session server, reduced to what the agent hook sees: a session-scoped OpenAI URL whose calls
    are recorded (request messages, the ids and logprobs the model server answered)."""

    def __init__(self, model_url: str) -> None:
        self.model_url = model_url
        self.records: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.base = ""
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._serve, daemon=True).start()
        self._ready.wait(30)

    def session_url(self, session: str) -> str:
        return f"{self.base}/sessions/{session}"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/sessions/{session}/v1/chat/completions", self._complete)
        runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base = f"http://127.0.0.1:{port}"
        self._ready.set()
        self._loop.run_forever()

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        # miles' session server forces these, whatever the agent sends (its TITO records need them).
        body.update(logprobs=True, return_token_ids=True)
        record = {"messages": body["messages"], "max_tokens": body.get("max_tokens"), "token_ids": [], "logprobs": []}
        url = f"{self.model_url}/chat/completions"
        async with aiohttp.ClientSession() as client, client.post(url, json=body) as answer:
            if not body.get("stream"):
                reply = await answer.json()
                self._add(record, reply)
                relayed: web.StreamResponse = web.json_response(reply)
            else:  # relay the events as they come, reading each chunk's ids
                relayed = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
                await relayed.prepare(request)
                async for line in answer.content:
                    data = line.strip().removeprefix(b"data:").strip()
                    if data and data != b"[DONE]":
                        self._add(record, json.loads(data))
                    await relayed.write(line)
                await relayed.write_eof()
        self.records[request.match_info["session"]].append(record)
        return relayed

    @staticmethod
    def _add(record: dict[str, Any], reply: dict[str, Any]) -> None:
        if reply.get("prompt_token_ids"):
            record["prompt_token_ids"] = reply["prompt_token_ids"]
        for choice in reply.get("choices") or ():
            if choice.get("prompt_token_ids"):
                record["prompt_token_ids"] = choice["prompt_token_ids"]
            record["token_ids"].extend(choice.get("token_ids") or ())
            record["logprobs"].extend(item["logprob"] for item in (choice.get("logprobs") or {}).get("content") or ())


@pytest.fixture(scope="session")
def sessions(model_url):
    return SessionServer(model_url)
