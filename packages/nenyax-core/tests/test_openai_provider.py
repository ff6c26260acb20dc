"""The openai provider against loopback servers: a scripted one with injected faults, and raw aiohttp ones.

No real model server runs here: the point is the transport (retries, timeouts, malformed replies),
and a real server cannot be made to fail on cue. A real model behind this provider is tested through
the recording proxy in tests/test_embedded_model.py.
"""

import asyncio
import itertools
import time

import pytest
from aiohttp import web

from nenyax.core import Endpoint, InfraFailure, Status, UsageError
from nenyax.core.builtin_plugins.openai_provider import OpenAIProvider
from nenyax.core.contract.chat import ChatRequest
from nenyax.core.engine.sinks import read_trajectories
from nenyax.core.models.recorder import call_seed
from nenyax.testing.model_server import FaultPlan, ScriptedModelServer
from nenyax_testsupport.fakes import ArithEnvironment, ArithSession

REQUEST = ChatRequest(model="m", messages=({"role": "user", "content": "hi"},), params={"temperature": 0.5})


def run(coro):
    return asyncio.run(coro)


async def _serve(handler):
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    [(host, port)] = runner.addresses
    return runner, f"http://{host}:{port}/v1"


@pytest.mark.parametrize("stream", [False, True])
def test_records_text_token_ids_and_logprobs(stream):
    async def main():
        async with ScriptedModelServer(lambda m: "héllo") as server:
            if stream:
                return await _streamed(server.base_url)
            provider = OpenAIProvider(base_url=server.base_url)
            return await provider.complete(REQUEST)

    call = run(main())
    assert call.response == {"role": "assistant", "content": "héllo"}
    if not stream:
        assert bytes(call.completion_token_ids).decode() == "héllo"
        assert call.logprobs == (-0.5,) * len("héllo".encode())
        assert call.prompt_token_ids == (1, 2, 3)
        assert call.fingerprint == "scripted-1"
        assert call.params == {"temperature": 0.5}
        assert call.usage["completion_tokens"] == 6


async def _streamed(base_url):
    """The scripted server does not stream, so stream through the recording proxy in front of it."""
    from nenyax.core.models.proxy import RecordingProxy

    async with RecordingProxy() as proxy:
        upstream = Endpoint("openai:m", base_url=base_url)
        async with proxy.episode(upstream) as route:
            provider = OpenAIProvider(base_url=route.base_url, stream=True)
            call = await provider.complete(REQUEST)
        assert bytes(call.completion_token_ids).decode() == "héllo"
        assert call.logprobs == (-0.5,) * 6
        assert call.prompt_token_ids == (1, 2, 3)
        return call


def test_retries_429_honouring_retry_after_then_succeeds():
    arrivals = []

    async def handler(request):
        arrivals.append(time.monotonic())
        if len(arrivals) < 3:
            return web.json_response({"error": "busy"}, status=429, headers={"Retry-After": "0.2"})
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})

    async def main():
        runner, url = await _serve(handler)
        try:
            # A near-zero backoff: only honouring Retry-After spaces the attempts 0.2 s apart.
            return await OpenAIProvider(base_url=url, backoff=1e-4, max_backoff=1e-4).complete(REQUEST)
        finally:
            await runner.cleanup()

    call = run(main())
    assert len(arrivals) == 3
    assert call.response["content"] == "ok"
    assert [later - earlier >= 0.2 for earlier, later in itertools.pairwise(arrivals)] == [True, True]


@pytest.mark.parametrize("kind", ["500", "reset", "truncated"])
def test_persistent_faults_become_infra_failure(kind):
    async def main():
        async with ScriptedModelServer(faults=FaultPlan(rate=1.0, kinds=(kind,))) as server:
            provider = OpenAIProvider(base_url=server.base_url, max_retries=2, backoff=0.01)
            with pytest.raises(InfraFailure, match="kept failing after 3 attempts"):
                await provider.complete(REQUEST)
            assert server.requests == 3

    run(main())


def test_a_server_that_never_answers_times_out_into_infra_failure():
    arrived, release = [], asyncio.Event()

    async def handler(request):
        arrived.append(1)
        await release.wait()  # answers only once the test is over: every attempt must time out
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": "late"}}]})

    async def main():
        runner, url = await _serve(handler)
        try:
            provider = OpenAIProvider(base_url=url, max_retries=2, backoff=0.01, timeout=0.2)
            with pytest.raises(InfraFailure, match=r"kept failing after 3 attempts \(last: TimeoutError"):
                await provider.complete(REQUEST)
            await provider.aclose()
        finally:
            release.set()
            await runner.cleanup()

    run(main())
    assert len(arrived) == 3


def test_bad_key_is_a_user_error_and_malformed_json_an_infra_failure():
    async def unauthorized(request):
        return web.json_response({"error": "bad key"}, status=401)

    async def malformed(request):
        return web.json_response({"choices": []})

    async def main():
        for handler, error, fragment in (
            (unauthorized, UsageError, "rejected the API key"),
            (malformed, InfraFailure, "malformed"),
        ):
            runner, url = await _serve(handler)
            try:
                with pytest.raises(error, match=fragment):
                    await OpenAIProvider(base_url=url, max_retries=0).complete(REQUEST)
            finally:
                await runner.cleanup()

    run(main())


def test_a_key_the_server_echoes_back_in_its_error_is_not_in_the_message():
    key = "sk-echoed-0123456789abcdef"

    async def main():
        async with ScriptedModelServer(faults=FaultPlan(rate=1.0, kinds=("401",))) as server:
            with pytest.raises(UsageError, match="rejected the API key") as caught:
                await OpenAIProvider(base_url=server.base_url, api_key=key, max_retries=0).complete(REQUEST)
            assert server.authorizations == {f"Bearer {key}": 1}  # the server was sent it, and echoed it
        return str(caught.value)

    message = run(main())
    assert key not in message
    assert "Incorrect API key provided: <the API key>" in message


def test_server_that_refuses_token_ids_is_asked_again_without_them():
    seen = []

    async def handler(request):
        body = await request.json()
        seen.append("return_token_ids" in body)
        if body.get("return_token_ids"):
            return web.json_response({"error": "Unrecognized request argument supplied: return_token_ids"}, status=400)
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})

    async def main():
        runner, url = await _serve(handler)
        try:
            provider = OpenAIProvider(base_url=url)
            await provider.complete(REQUEST)
            await provider.complete(REQUEST)
        finally:
            await runner.cleanup()

    run(main())
    assert seen == [True, False, False]


def test_one_connection_pool_per_loop_until_aclose():
    peers = []

    async def handler(request):
        peers.append(request.transport.get_extra_info("peername"))
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})

    async def main():
        runner, url = await _serve(handler)
        try:
            provider = OpenAIProvider(base_url=url)
            for _ in range(5):
                await provider.complete(REQUEST)
            await provider.aclose()
            await provider.complete(REQUEST)  # a new pool after aclose
            await provider.aclose()
        finally:
            await runner.cleanup()

    run(main())
    # Sequential calls reuse one kept-alive connection (a pool per call would open five); aclose closed it.
    assert len(set(peers[:5])) == 1
    assert peers[5] != peers[0]


def test_endpoint_records_calls_in_the_trajectory():
    async def main():
        async with ScriptedModelServer(lambda m: "7") as server:
            env = ArithEnvironment("arith:add", size=3, seed=0)
            endpoint = Endpoint("openai:scripted", base_url=server.base_url, temperature=0.0)
            return await env.arollout(endpoint, task="add/0/0")

    traj = run(main())
    assert traj.status is Status.OK
    assert traj.policy.kind == "endpoint"
    assert traj.policy.model == "scripted"
    [call] = traj.model_calls
    assert call.completion_token_ids == tuple(b"7")
    # What was sent: the user's temperature, and the episode's own sampling seed (the server takes any field).
    assert call.params == {"temperature": 0.0, "seed": call_seed("add/0/0:0:0", 1)}
    assert call.requested_params == {}
    assert traj.steps[0].text == "7"
    assert [m["role"] for m in traj.messages] == ["user", "assistant"]


def test_1000_episodes_under_20_percent_faults_lose_nothing_and_score_no_infra_failure(tmp_path):
    sink = tmp_path / "t.jsonl"

    async def main():
        plan = FaultPlan(rate=0.2, seed=1, slow_seconds=1.0)
        async with ScriptedModelServer(lambda m: "0", faults=plan) as server:
            env = ArithEnvironment("arith:add", size=1000, seed=0)
            endpoint = Endpoint(
                "openai:scripted",
                base_url=server.base_url,
                provider_options={"max_retries": 2, "backoff": 0.01, "timeout": 0.5},
            )
            trajs = await env.arollouts(endpoint, 1000, concurrency=128, sink=sink)
            return trajs, server.injected

    trajs, injected = run(main())
    assert set(injected) == {"429", "500", "reset", "slow", "truncated"}
    recorded = list(read_trajectories(sink))
    assert len(trajs) == len(recorded) == 1000
    assert len({t.task_id for t in recorded}) == 1000
    statuses = {t.status for t in recorded}
    assert statuses <= {Status.OK, Status.INFRA_ERROR}
    assert Status.OK in statuses
    for t in recorded:
        if t.status is Status.INFRA_ERROR:
            assert t.judgment is None
            assert "kept failing" in t.error
        else:
            assert t.judgment is not None
            assert len(t.model_calls) == 1


def test_endpoint_from_config_and_its_mistakes():
    endpoint = Endpoint.from_config(
        {"use": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1", "temperature": 0.2}
    )
    assert (endpoint.provider_name, endpoint.model, endpoint.params) == ("openai", "m", {"temperature": 0.2})
    assert endpoint.provider.base_url == "http://127.0.0.1:1/v1"
    with pytest.raises(UsageError, match="Unknown endpoint setting"):
        Endpoint.from_config({"model": "openai:m", "temprature": 1})
    unset = Endpoint("openai:m", api_key_env="NENYAX_TEST_SURELY_UNSET_VARIABLE")  # the key is read when it opens
    with pytest.raises(UsageError, match="holds no API key"):
        unset.provider  # noqa: B018


def test_stream_assembler_joins_content_tool_calls_and_token_ids():
    from nenyax.core.models.openai_wire import StreamAssembler, parse_sse_line

    lines = [
        b'data: {"model":"m","prompt_token_ids":[1,2],"choices":[{"delta":{"role":"assistant","content":"He"},"token_ids":[5],"logprobs":{"content":[{"logprob":-0.1}]}}]}',
        b'data: {"choices":[{"delta":{"content":"y","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"add","arguments":"{\\"a\\":"}}]},"token_ids":[6],"logprobs":{"content":[{"logprob":-0.2}]}}]}',
        b'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":2,"completion_tokens":2}}',
        b"",
        b"data: [DONE]",
    ]
    assembler = StreamAssembler()
    for line in lines:
        parse_sse_line(line, assembler, "test")
    data = assembler.result()
    from nenyax.core.models.openai_wire import parse_response

    call = parse_response(data, REQUEST, where="test", provider="openai")
    assert assembler.done
    assert call.response["content"] == "Hey"
    assert call.response["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a":1}'}}
    ]
    assert call.completion_token_ids == (5, 6)
    assert call.prompt_token_ids == (1, 2)
    assert call.logprobs == (-0.1, -0.2)
    assert call.finish_reason == "tool_calls"
    assert call.usage == {"prompt_tokens": 2, "completion_tokens": 2}


def test_a_base_url_that_cannot_work_is_a_user_error():
    for bad in ("notaurl", "ftp://127.0.0.1:9/v1", "http://[::1"):
        with pytest.raises(UsageError, match="not an http"):
            Endpoint("openai:m", base_url=bad).provider  # noqa: B018 - the property builds the provider


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        ({"choices": [{"message": {"role": "assistant", "content": 123}}]}, "malformed"),
        ("redirect", "kept failing"),
    ],
)
def test_odd_servers_are_infra_failures_not_policy_failures(reply, fragment):
    async def handler(request):
        if reply == "redirect":
            raise web.HTTPTemporaryRedirect(str(request.url))
        return web.json_response(reply)

    async def main():
        runner, url = await _serve(handler)
        try:
            env = ArithEnvironment("arith:add", size=1, seed=0)
            endpoint = Endpoint("openai:m", base_url=url, provider_options={"max_retries": 1, "backoff": 0.01})
            return await env.arollout(endpoint)
        finally:
            await runner.cleanup()

    traj = run(main())
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert fragment in traj.error


def test_a_malformed_stream_chunk_is_an_infra_failure():
    from nenyax.core.models.openai_wire import StreamAssembler, parse_sse_line

    def read(line):  # the chunk is refused as it is parsed or, at the latest, when the reply is assembled
        assembler = StreamAssembler()
        parse_sse_line(line, assembler, "test")
        assembler.result()

    for line in (b"data: 5", b'data: {"choices":[{"delta":{"content":5}}]}'):
        with pytest.raises(InfraFailure, match="malformed"):
            read(line)


def test_no_key_for_openais_own_api_fails_at_once(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UsageError, match=r"No API key for https://api\.openai\.com/v1: set OPENAI_API_KEY"):
        OpenAIProvider()
    OpenAIProvider(base_url="http://127.0.0.1:9/v1")  # a local server needs no key


def test_a_host_that_does_not_resolve_fails_without_retrying():
    retries = []
    # `.invalid` never resolves (RFC 6761); the lookup fails locally, no network needed.
    provider = OpenAIProvider(base_url="http://nenyax-test.invalid/v1", on_retry=retries.append, backoff=5.0)
    began = time.monotonic()
    with pytest.raises(UsageError, match=r"'nenyax-test\.invalid' .* does not resolve"):
        run(provider.complete(REQUEST))
    assert retries == []
    assert time.monotonic() - began < 5


def test_retries_are_reported_as_they_happen(caplog):
    async def main():
        async with ScriptedModelServer(lambda m: "ok", faults=FaultPlan(rate=1.0, kinds=("500",))) as server:
            seen = []
            provider = OpenAIProvider(base_url=server.base_url, max_retries=2, backoff=0.01, on_retry=seen.append)
            with pytest.raises(InfraFailure, match="kept failing after 3 attempts"):
                await provider.complete(REQUEST)
            await provider.aclose()
            return seen

    with caplog.at_level("WARNING", logger="nenyax.models.openai"):
        seen = run(main())
    assert len(seen) == 2
    assert "failed attempt 1 of 3 (HTTP 500" in seen[0]
    assert "retrying in" in seen[0]
    assert [r.getMessage() for r in caplog.records if r.name == "nenyax.models.openai"] == seen


class _ChoiceSession(ArithSession):
    def reply_choices(self):
        return [str(self.a + self.b), "0"]


class _ChoiceEnvironment(ArithEnvironment):
    def session(self, task=None, seed=None):
        return _ChoiceSession(self, task or self.task_ids(limit=1)[0])


def test_a_constrained_endpoint_sends_the_sessions_reply_choices_as_guided_choice():
    async def main(constrain):
        async with ScriptedModelServer(lambda m: "7") as server:
            env = _ChoiceEnvironment("arith:add", size=3, seed=0)
            endpoint = Endpoint("openai:scripted", base_url=server.base_url, constrain=constrain)
            return await env.arollout(endpoint, task="add/0/0"), server.last_body

    traj, body = run(main(constrain=True))
    a, b = ArithEnvironment("arith:add", size=3, seed=0).operands("add/0/0")
    assert body["guided_choice"] == [str(a + b), "0"]
    assert traj.model_calls[0].params["guided_choice"] == [str(a + b), "0"]
    _, body = run(main(constrain=False))
    assert "guided_choice" not in body  # only when asked
    assert ArithEnvironment("arith:add", size=3, seed=0).session().reply_choices() is None  # free text by default
