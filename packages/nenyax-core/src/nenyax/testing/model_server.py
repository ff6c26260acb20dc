"""A scripted OpenAI-compatible chat server with fault injection, for reliability tests and benchmarks.

It is not a model: replies come from a Python function of the messages. Use it where the point is
the transport (retries, timeouts, truncation, concurrency), and a real model everywhere else. Why no
real server there: a real one cannot be made to answer 429, reset the connection or cut a body on
cue, nor to reply with exact text (markup, a malformed answer) that a test needs; and a model server
is no dependency of nenyax-core, whose tests run with core alone.
Token ids are the reply's UTF-8 bytes and every logprob is -0.5, so clients can check that what
the server sent is what they recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import orjson
from aiohttp import web

FAULTS = ("429", "500", "reset", "slow", "truncated")
"""The transport faults a plan draws from by default. A plan may also name "401": the key refused, and
echoed back in the error message as some servers do (for tests that a key is never recorded)."""


@attrs.define
class FaultPlan:
    """Inject a fault into a fraction `rate` of requests, drawn from `kinds` by a seeded generator."""

    rate: float = 0.0
    kinds: tuple[str, ...] = FAULTS
    seed: int = 0
    slow_seconds: float = 2.0


class ScriptedModelServer:
    """``POST /v1/chat/completions`` answered by ``reply(messages) -> str`` after `latency` seconds."""

    def __init__(
        self,
        reply: Callable[[list[dict[str, Any]]], str] = lambda messages: "ok",
        *,
        latency: float = 0.0,
        faults: FaultPlan | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        """Configure replies, latency and faults; call `start()` to serve."""
        self.reply, self.latency, self.faults, self.host = reply, latency, faults or FaultPlan(), host
        self._rng = random.Random(self.faults.seed)
        self.injected: Counter[str] = Counter()
        self.requests = 0
        self.last_body: dict[str, Any] | None = None
        """The JSON body of the latest chat request, for tests that check what a client sent."""
        self.authorizations: Counter[str] = Counter()
        """Each chat request's ``Authorization`` header ("" for none), for tests that check a key was sent."""
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        """``http://host:port/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    async def start(self) -> ScriptedModelServer:
        """Start serving on a free port."""
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/completions", self._completions)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0, backlog=4096)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> ScriptedModelServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _fault(self) -> str | None:
        if self.faults.rate and self._rng.random() < self.faults.rate:
            kind = self._rng.choice(self.faults.kinds)
            self.injected[kind] += 1
            return kind
        return None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        body = self.last_body = orjson.loads(await request.read())
        self.authorizations[request.headers.get("Authorization", "")] += 1
        fault = self._fault()
        if fault == "429":
            return web.json_response({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "0"})
        if fault == "401":
            key = request.headers.get("Authorization", "").removeprefix("Bearer ")
            return web.json_response({"error": {"message": f"Incorrect API key provided: {key}"}}, status=401)
        if fault == "500":
            return web.json_response({"error": {"message": "internal error"}}, status=500)
        if fault == "reset":
            assert request.transport is not None
            request.transport.close()
            return web.Response()
        if fault == "slow":
            await asyncio.sleep(self.faults.slow_seconds)
        if self.latency:
            await asyncio.sleep(self.latency)
        text = self.reply(body["messages"])
        ids = list(text.encode())
        completion = {
            "id": f"chatcmpl-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "system_fingerprint": "scripted-1",
            "prompt_token_ids": [1, 2, 3],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": {"content": [self._scored(i, body.get("top_logprobs") or 0) for i in ids]},
                    "token_ids": ids,
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": len(ids), "total_tokens": 3 + len(ids)},
        }
        if body.get("stream"):
            return await self._stream(request, completion, cut=fault == "truncated")
        raw = orjson.dumps(completion)
        if fault == "truncated":
            raw = raw[: len(raw) // 2]
        return web.Response(body=raw, content_type="application/json")

    async def _stream(self, request: web.Request, completion: dict[str, Any], *, cut: bool) -> web.StreamResponse:
        """The completion as server-sent events, one chunk per token (`cut`: the stream breaks half-way)."""
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await stream.prepare(request)
        head = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint")}
        choice = completion["choices"][0]
        text = choice["message"]["content"]
        at = 0
        for i, character in enumerate(text):  # one chunk per character: its UTF-8 bytes are its tokens
            if cut and i == len(text) // 2:
                assert request.transport is not None
                request.transport.close()
                return stream
            tokens = list(character.encode())
            delta: dict[str, Any] = {"content": character}
            if i == 0:
                delta["role"] = "assistant"
            piece = {"index": 0, "delta": delta, "finish_reason": None, "token_ids": tokens}
            piece["logprobs"] = {"content": choice["logprobs"]["content"][at : at + len(tokens)]}
            at += len(tokens)
            chunk = {**head, "object": "chat.completion.chunk", "choices": [piece]}
            if i == 0:
                chunk["prompt_token_ids"] = completion["prompt_token_ids"]
            await stream.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        last = {"index": 0, "delta": {}, "finish_reason": "stop"}
        end = {**head, "object": "chat.completion.chunk", "choices": [last], "usage": completion["usage"]}
        await stream.write(b"data: " + orjson.dumps(end) + b"\n\n" + b"data: [DONE]\n\n")
        await stream.write_eof()
        return stream

    @staticmethod
    def _scored(token: int, top: int) -> dict[str, Any]:
        """A token's logprob entry: -0.5, with `top` alternatives (itself first, then the next bytes)."""
        alternatives = [{"token": chr(token + k), "logprob": -0.5 - k} for k in range(top)]
        return {"token": chr(token), "logprob": -0.5, "top_logprobs": alternatives}

    async def _completions(self, request: web.Request) -> web.Response:
        """Text completions; with ``echo`` the prompt's bytes come back as tokens with logprob -0.5."""
        self.requests += 1
        body = orjson.loads(await request.read())
        prompt = str(body.get("prompt", ""))
        text = (prompt if body.get("echo") else "") + self.reply([{"role": "user", "content": prompt}])
        logprobs = None
        if body.get("logprobs") is not None:
            logprobs = {
                "tokens": list(text),
                "token_logprobs": [-0.5] * len(text),
                "text_offset": list(range(len(text))),
            }
        choice = {"index": 0, "text": text, "finish_reason": "stop", "logprobs": logprobs}
        return web.json_response({"object": "text_completion", "model": body.get("model"), "choices": [choice]})


def main() -> None:
    """``python -m nenyax.testing.model_server --latency 0.1``: serve until killed; print the base URL."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--reply", default="ok", help="the reply text")
    args = parser.parse_args()

    async def serve() -> None:
        server = await ScriptedModelServer(lambda messages: args.reply, latency=args.latency).start()
        print(server.base_url, flush=True)
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    main()


@contextlib.contextmanager
def serving_in_thread(server: ScriptedModelServer) -> Iterator[ScriptedModelServer]:
    """Serve `server` on an event loop of its own thread while the block runs (for synchronous tests that
    run the CLI in a subprocess against it)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result()
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
