"""A hand-written ORS server that breaks the protocol on purpose: ``python faulty_server.py PORT``.

Why a fake: the real servers cannot send what these tests need. ors-sdk and openreward serialise
every result through pydantic, which writes a NaN or infinite reward as ``null`` (measured: a tool
returning ``reward=float("nan")`` arrives as ``"reward": null``) and always emits well-formed JSON
and SSE framing. So this server speaks the same routes as ors-sdk 0.1.0 for one environment,
``faultyenv``, whose tools each misbehave in one way:

- ``nan`` / ``inf``: an ``end`` event whose reward is the JSON-ish literal ``NaN`` / ``1e999``;
- ``garbage``: an ``end`` event whose data is not JSON;
- ``string_reward``: a reward that is a string;
- ``not_utf8``: bytes that are not UTF-8 in the stream;
- ``vanish``: the connection closes before the ``task_id`` event;
- ``submit``: a correct result (reward 1, finished), so the fault is all a test sees.
"""

from __future__ import annotations

import json
import sys
import uuid

from aiohttp import web

ENV = "faultyenv"
TOOLS = ["nan", "inf", "garbage", "string_reward", "not_utf8", "vanish", "submit"]


def _sse(*events: tuple[str, str]) -> bytes:
    return b"".join(f"event: {e}\r\ndata: {d}\r\n\r\n".encode() for e, d in events)


async def _stream(request: web.Request, body: bytes, close_early: bool = False) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    if close_early:
        request.transport.close()
        return resp
    await resp.write(body)
    await resp.write_eof()
    return resp


def _result(reward: str) -> str:
    blocks = '[{"text":"done","type":"text"}]'
    return '{"ok":true,"output":{"blocks":' + blocks + ',"metadata":null,"reward":' + reward + ',"finished":true}}'


async def call(request: web.Request) -> web.StreamResponse:
    name = (await request.json())["name"]
    task = ("task_id", uuid.uuid4().hex)
    if name == "vanish":
        return await _stream(request, b"", close_early=True)
    if name == "not_utf8":
        return await _stream(request, _sse(task) + b"event: end\r\ndata: \xff\xfe\r\n\r\n")
    data = {
        "nan": _result("NaN"),
        "inf": _result("1e999"),
        "garbage": "{this is not json",
        "string_reward": _result('"1"'),
        "submit": _result("1.0"),
    }.get(name, json.dumps({"ok": False, "error": f"{name!r} is not a valid tool"}))
    return await _stream(request, _sse(task, ("end", data)))


async def create_session(request: web.Request) -> web.StreamResponse:
    return await _stream(request, _sse(("task_id", uuid.uuid4().hex), ("end", "")))


def app() -> web.Application:
    def reply(value):
        async def handler(_request: web.Request) -> web.Response:
            return web.json_response(value)

        return handler

    tools = {"tools": [{"name": n, "description": f"Misbehave: {n}.", "input_schema": None} for n in TOOLS]}
    application = web.Application()
    application.router.add_get("/health", reply({"status": "ok"}))
    application.router.add_get("/list_environments", reply([ENV]))
    application.router.add_get(f"/{ENV}/tools", reply(tools))
    application.router.add_get(f"/{ENV}/task_tools", reply(tools))
    application.router.add_get(f"/{ENV}/splits", reply([{"name": "test", "type": "test"}]))
    application.router.add_post(f"/{ENV}/tasks", reply({"tasks": [{"question": "Misbehave."}], "env_name": ENV}))
    application.router.add_post("/create_session", create_session)
    application.router.add_post("/create", reply({"sid": "x"}))
    application.router.add_get(f"/{ENV}/prompt", reply([{"text": "Call a tool.", "detail": None, "type": "text"}]))
    application.router.add_post(f"/{ENV}/call", call)
    application.router.add_post("/delete", reply({"sid": "x"}))
    return application


if __name__ == "__main__":
    web.run_app(app(), host="127.0.0.1", port=int(sys.argv[1]), print=None)
