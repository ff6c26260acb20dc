"""Frames no real OpenEnv server sends, from a tiny hand-written aiohttp WebSocket server.

Why not a real server: OpenEnv serialises observations through pydantic, which writes a NaN or
infinite reward as ``null`` and always sends well-formed JSON frames, so a real server cannot be made
to send a non-finite reward, a frame that is not JSON, or an observation frame without its
observation. This server answers ``/health``, ``/metadata``, ``/schema`` and the reset/state frames
the way OpenEnv 0.10 does, and misbehaves only on ``step``, in the way its URL path names; or, for
the ``tasks-*`` paths, in its Task API (a real OpenEnv server normalises those answers too).
"""

import asyncio
import json
import threading

import pytest
from aiohttp import WSMsgType, web
from guess_env import GuessAction

from nenyax.core import EnvironmentFailure, Status, load

OBSERVATION = {
    "observation": {"metadata": {}, "hint": "guess a number", "low": 1, "high": 100, "tries_left": 7},
    "reward": None,
    "done": False,
}
STEP_ANSWERS = {
    "nan": '{"type":"observation","data":{"observation":{"metadata":{},"hint":"lower","low":1,"high":100,"tries_left":6},"reward":NaN,"done":false}}',
    "infinite": '{"type":"observation","data":{"observation":{"hint":"lower","low":1,"high":100,"tries_left":6},"reward":1e999,"done":false}}',
    "not-json": "observation: lower",
    "no-type": '{"data":{"observation":{}}}',
    "no-observation": '{"type":"observation","data":{"reward":1.0,"done":true}}',
    "text-reward": '{"type":"observation","data":{"observation":{"hint":"lower"},"reward":"high","done":false}}',
    "session-error": '{"type":"error","data":{"message":"the environment crashed","code":"EXECUTION_ERROR"}}',
}
EXPECTED = {
    "nan": "sent a non-finite number (NaN or Infinity)",
    "infinite": "sent a non-finite number (NaN or Infinity)",
    "not-json": "sent a frame that is not JSON: 'observation: lower'",
    "no-type": "sent a frame without a message type",
    "no-observation": "sent an observation frame without an observation",
    "text-reward": "sent the reward 'high', which is not a number",
    "session-error": "failed the step: the environment crashed (EXECUTION_ERROR)",
}

# Task API answers, by path: (splits answer, tasks answer); a number is an HTTP status to answer with.
TASK_API_ANSWERS = {
    "tasks-not-a-list": (["all"], {"tasks": "every one"}),
    "tasks-splits-fail": (500, None),
    "tasks-nameless-split": ([{"type": "train"}], None),
}
TASK_API_EXPECTED = {
    "tasks-not-a-list": "answered /broken/tasks with {'tasks': 'every one'}, not {\"tasks\": [...]}",
    "tasks-splits-fail": "answered /broken/splits with HTTP 500: 'the dataset is gone'",
    "tasks-nameless-split": "answered /broken/splits with {'type': 'train'}, not a split ({\"name\": ...})",
}


async def _task_api(request):
    mode, route = request.match_info["mode"], request.match_info["route"]
    if mode not in TASK_API_ANSWERS:
        raise web.HTTPNotFound
    answer = TASK_API_ANSWERS[mode][0 if route == "splits" else 1]
    if isinstance(answer, int):
        return web.Response(status=answer, text="the dataset is gone")
    return web.json_response(answer)


async def _environments(request):
    if request.match_info["mode"] not in TASK_API_ANSWERS:
        raise web.HTTPNotFound
    return web.json_response(["broken"])


async def _socket(request):
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    mode = request.match_info["mode"]
    async for message in ws:
        if message.type is not WSMsgType.TEXT:
            break
        kind = json.loads(message.data)["type"]
        if kind == "reset":
            await ws.send_str(json.dumps({"type": "observation", "data": OBSERVATION}))
        elif kind == "state":
            await ws.send_str(
                json.dumps({"type": "state", "data": {"episode_id": None, "step_count": 0, "secret": 42}})
            )
        elif kind == "step":
            await ws.send_str(STEP_ANSWERS[mode])
        else:
            break
    await ws.close()
    return ws


def _app():
    app = web.Application()
    schema = {"action": GuessAction.model_json_schema(), "observation": {}, "state": {}}
    for route, body in (("health", {"status": "healthy"}), ("metadata", {"name": "broken"}), ("schema", schema)):

        async def answer(request, body=body):
            return web.json_response(body)

        app.router.add_get(f"/{{mode}}/{route}", answer)
    app.router.add_get("/{mode}/ws", _socket)
    app.router.add_get("/{mode}/list_environments", _environments)
    app.router.add_get("/{mode}/broken/{route}", _task_api)
    app.router.add_post("/{mode}/broken/{route}", _task_api)
    return app


@pytest.fixture(scope="module")
def broken_server():
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(_app())
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"ws://127.0.0.1:{port}"
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)


@pytest.mark.parametrize("mode", sorted(STEP_ANSWERS))
def test_a_malformed_step_answer_is_env_error_never_scored(broken_server, mode):
    env = load(f"openenv:{broken_server}/{mode}")
    traj = env.rollout("null", task="seed/0")
    assert traj.status is Status.ENV_ERROR
    assert traj.judgment is None
    assert traj.score is None
    assert not traj.status.trainable
    assert EXPECTED[mode] in traj.error
    assert f"{broken_server}/{mode}/ws" in traj.error


@pytest.mark.parametrize("mode", sorted(TASK_API_ANSWERS))
def test_a_malformed_task_api_fails_the_load_naming_the_route(broken_server, mode):
    # Falling back to seeds would hide a broken server behind task ids it never listed.
    with pytest.raises(EnvironmentFailure) as caught:
        load(f"openenv:{broken_server}/{mode}")
    assert f"The OpenEnv server at http://{broken_server[5:]}/{mode} {TASK_API_EXPECTED[mode]}" in str(caught.value)
