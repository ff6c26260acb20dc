"""Bad input, limits and failures: every one answered in OpenEnv's shape, and the server keeps serving."""

import asyncio
import time
from collections import Counter

import aiohttp
import orjson
import pytest
from openenv.core import GenericEnvClient

from nenyax.core.errors import VerifierFailure
from nenyax_testsupport.fakes import ArithEnvironment, ArithSession

LIMIT = 2048
BAD_FRAMES = [
    # (frame, how it is sent, the error code it must get back)
    (b"not json{", "text", "INVALID_JSON"),
    (b"\xff\xfe\x00", "binary", "INVALID_JSON"),
    (b"[1, 2]", "text", "VALIDATION_ERROR"),
    (b'"just a string"', "text", "VALIDATION_ERROR"),
    (b'{"type": "bogus"}', "text", "UNKNOWN_TYPE"),
    (b'{"no": "type"}', "text", "UNKNOWN_TYPE"),
    (b'{"type": "step"}', "text", "VALIDATION_ERROR"),
    (b'{"type": "step", "data": 5}', "text", "VALIDATION_ERROR"),
    (b'{"type": "step", "data": {"message": "7"}}', "text", "VALIDATION_ERROR"),  # no reset yet
    (b'{"type": "state", "extra": 1}', "text", "VALIDATION_ERROR"),
    (b'{"type": "reset", "data": {"seed": "seven"}}', "text", "VALIDATION_ERROR"),
    (b'{"type": "reset", "data": {"task_id": "nope/1/2"}}', "text", "VALIDATION_ERROR"),
    (b'{"type": "step", "data": {"message": "' + b"x" * (LIMIT + 100) + b'"}}', "text", "VALIDATION_ERROR"),
]


async def _flood(ws_url, frames_per_connection, connections):
    """Send the bad frames round-robin on a few connections; return the error codes received."""

    async def one(session):
        codes = Counter()
        async with session.ws_connect(ws_url) as ws:
            for i in range(frames_per_connection):
                frame, how, expected = BAD_FRAMES[i % len(BAD_FRAMES)]
                await (ws.send_bytes(frame) if how == "binary" else ws.send_str(frame.decode("utf-8", "replace")))
                reply = orjson.loads((await ws.receive(timeout=10)).data)
                assert reply["type"] == "error", reply
                assert reply["data"]["code"] == expected, (frame[:60], reply)
                codes[expected] += 1
        return codes

    async with aiohttp.ClientSession() as session:
        results = await asyncio.gather(*(one(session) for _ in range(connections)))
    return sum(results, Counter())


async def _too_big(ws_url, count):
    """Frames past the hard limit (4x): each closes its connection with 1009, nothing else."""
    closes = Counter()
    async with aiohttp.ClientSession() as session:
        for _ in range(count):
            async with session.ws_connect(ws_url) as ws:
                await ws.send_str("y" * (LIMIT * 4 + 1))
                msg = await ws.receive(timeout=10)
                closes[(msg.type, ws.close_code)] += 1
    return closes


def test_ten_thousand_bad_frames_leave_the_server_serving(serve):
    with serve("reasoning_gym:basic_arithmetic?size=5", max_frame_bytes=LIMIT) as served:
        codes = asyncio.run(_flood(served.ws_url, frames_per_connection=1238, connections=8))
        assert sum(codes.values()) == 9904
        assert set(codes) == {"INVALID_JSON", "VALIDATION_ERROR", "UNKNOWN_TYPE"}
        closes = asyncio.run(_too_big(served.ws_url, count=96))
        assert closes == Counter({(aiohttp.WSMsgType.CLOSE, 1009): 96})  # 9,904 + 96 = 10,000 bad frames
        assert served.sessions() == 0  # every flooding connection's session was released

        with GenericEnvClient(base_url=served.url).sync() as client:
            first = client.reset(seed=1)
            final = client.step({"message": "<answer>0</answer>"})
        assert first.done is False
        assert final.done is True
        assert final.metadata["judgment"]["judge"] == "reasoning_gym:basic_arithmetic"


def test_capacity_is_bounded_and_freed(serve):
    with serve("gymnasium:CartPole-v1", max_sessions=2) as served:
        clients = [GenericEnvClient(base_url=served.url).sync() for _ in range(2)]
        for client in clients:
            client.connect()
            client.reset(seed=0)
        third = GenericEnvClient(base_url=served.url).sync()
        with pytest.raises(RuntimeError, match=r"Server at capacity: 2/2 .*CAPACITY_REACHED"):
            third.reset()
        third.close()
        clients[0].close()
        deadline = time.monotonic() + 10
        while served.sessions() > 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        with GenericEnvClient(base_url=served.url).sync() as late:
            # The freed slot serves a whole new client: it resets and steps (CartPole pays 1 per step survived).
            assert late.reset(seed=0).done is False
            assert late.step({"action": 0}).reward == 1.0
            assert served.sessions() == 2
        clients[1].close()


def test_idle_sessions_are_reaped(serve):
    async def idle(served):
        async with aiohttp.ClientSession() as session, session.ws_connect(served.ws_url) as ws:
            await ws.send_str('{"type": "reset", "data": {"seed": 0}}')
            assert orjson.loads((await ws.receive(timeout=10)).data)["type"] == "observation"
            # Say nothing: the reaper tells us why and closes the socket.
            notice = orjson.loads((await ws.receive(timeout=10)).data)
            closing = await ws.receive(timeout=10)
            return notice, closing.type

    with serve("gymnasium:CartPole-v1", idle_timeout=0.3) as served:
        mcp_session = served.on_loop(_create_mcp_session(served))
        notice, closing = asyncio.run(idle(served))
        assert notice["data"]["code"] == "SESSION_ERROR"
        assert "without a message" in notice["data"]["message"]
        assert closing == aiohttp.WSMsgType.CLOSE
        assert mcp_session not in served.server.table.slots  # MCP sessions are reaped too
        assert served.server.table.reaped >= 2


def _create_mcp_session(served):
    async def create():
        response = await served.server.mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"})
        return response["result"]["session_id"]

    return create


def test_environment_failure_is_an_error_never_a_reward(serve):
    with (
        serve("gymnasium:serve_test_envs:CrashOnSecondStep") as served,
        GenericEnvClient(base_url=served.url).sync() as client,
    ):
        client.reset(seed=0)
        assert client.step({"action": 1}).reward == 1.0
        with pytest.raises(RuntimeError, match=r"simulator lost its state.*EXECUTION_ERROR"):
            client.step({"action": 1})
        assert client.state()["status"] == "env_error"
        with pytest.raises(RuntimeError, match=r"episode is over \(env_error\)"):
            client.step({"action": 1})
        assert client.reset(seed=1).done is False  # a reset starts afresh on the same connection


def test_step_after_the_end_and_unknown_task(arithmetic):
    with GenericEnvClient(base_url=arithmetic.url).sync() as client:
        with pytest.raises(RuntimeError, match="is not a task of"):
            client.reset(task_id="chain_sum/7/0")
        client.reset(task_id="basic_arithmetic/7/0")
        client.step({"message": "1"})
        with pytest.raises(RuntimeError, match=r"episode is over \(ok\).*VALIDATION_ERROR"):
            client.step({"message": "1"})
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step({"action": "1"})  # a text env's action is {"message": ...}


def test_a_slow_synchronous_environment_moves_off_the_event_loop(serve):
    with serve("gymnasium:serve_test_envs:BusyStep") as served, GenericEnvClient(base_url=served.url).sync() as client:
        assert served.server.served.offload is False
        client.reset(seed=0)
        rewards = [client.step({"action": 0}).reward for _ in range(4)]
        final = client.step({"action": 0})
        assert served.server.served.offload is True  # three slow calls in a row: now in the worker thread
        assert rewards == [1.0] * 4
        assert final.done
        assert final.metadata["judgment"]["score"] == 5.0


class _BrokenVerifierSession(ArithSession):
    """Core's arith fake whose verifier fails: as a grader that lost its database, or a judge that crashed."""

    def judge(self, steps):
        raise RuntimeError("the grader lost its answer key")


class _BrokenVerifierEnvironment(ArithEnvironment):
    """Serves `_BrokenVerifierSession`s; no real environment's verifier fails on demand."""

    def session(self, task=None, seed=None):
        return _BrokenVerifierSession(self, super().session(task, seed).task_id)


class _RejectingVerifierSession(ArithSession):
    """Its verifier says so itself, from `act`: a VerifierFailure, as a remote grader's adapter raises it."""

    def act(self, action):
        raise VerifierFailure("the grading service answered 503")


class _RejectingVerifierEnvironment(ArithEnvironment):
    def session(self, task=None, seed=None):
        return _RejectingVerifierSession(self, super().session(task, seed).task_id)


@pytest.mark.parametrize(
    ("environment", "said"),
    [(_BrokenVerifierEnvironment, "the grader lost its answer key"), (_RejectingVerifierEnvironment, "answered 503")],
)
def test_a_verifier_that_fails_is_verifier_error_never_a_score_of_0(serve, environment, said):
    env = environment("arith:add?size=3", size=3, seed=0)
    with serve(env) as served, GenericEnvClient(base_url=served.url).sync() as client:
        client.reset(task_id="add/0/1")
        with pytest.raises(RuntimeError, match=rf"{said}.*EXECUTION_ERROR"):
            client.step({"message": "7"})
        state = client.state()
        assert state["status"] == "verifier_error"
        assert state["done"] is True
        with pytest.raises(RuntimeError, match=r"episode is over \(verifier_error\)"):
            client.step({"message": "7"})
        assert client.reset(task_id="add/0/2").done is False  # the server keeps serving
