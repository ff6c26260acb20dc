"""What the recording proxy must carry for native loops, each driven by the official `openai` client.

Each test names the loss it guards against (issue 18, "What the proxy must carry"): before, the proxy
dropped every field but the sampling keys, read only ``choices[0]``, let the loop's temperature beat the
user's, sent logprobs with empty token strings, refused list prompts, flattened Responses function calls,
hid the request from a non-Endpoint policy and kept only its last call, answered ``stream=true`` after
the whole completion, blocked on a synchronous loop and lost the calls of an interrupted episode.

Upstream is the scripted server (`nenyax.testing.model_server`) or a small aiohttp handler: these tests
need to see the exact body upstream received, or chunks spaced in time, which no real model server
gives on cue (the embedded model behind the proxy is tested in nenyax-providers-local and tests/).
"""

import asyncio
import contextlib
import json
import time

import openai
import orjson
import pytest
from aiohttp import web

from nenyax.core import Endpoint, EpisodeInterrupted, Status
from nenyax.core.contract.manifest import Capabilities, Manifest, Mode, Split
from nenyax.core.contract.trajectory import Judgment
from nenyax.core.engine.environment import RolloutEnvironment
from nenyax.core.engine.native_loop import NativeResult, run_native_episode
from nenyax.core.engine.policies import as_policy
from nenyax.core.models.proxy import RecordingProxy
from nenyax.testing.model_server import ScriptedModelServer


def run(coro):
    return asyncio.run(coro)


async def _through(body, reply=lambda m: "forty-two", **endpoint):
    async with ScriptedModelServer(reply) as server, RecordingProxy() as proxy:
        upstream = Endpoint("openai:scripted", base_url=server.base_url, **endpoint)
        async with proxy.episode(upstream) as route:
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="unused", max_retries=0)
            try:
                out = await body(client)
            finally:
                await client.close()
        return out, route, server


ASK = [{"role": "user", "content": "what is 6*7?"}]


@contextlib.asynccontextmanager
async def _upstream(handler):
    """An Endpoint on a one-route aiohttp server (``POST /v1/chat/completions`` answered by `handler`)."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield Endpoint("openai:m", base_url=f"http://127.0.0.1:{port}/v1")
    finally:
        await runner.cleanup()


def test_every_request_field_reaches_the_provider():
    fields = {
        "tool_choice": "none",
        "response_format": {"type": "json_object"},
        "logit_bias": {"42": 5},
        "seed": 7,
        "parallel_tool_calls": False,
        "user": "harness-1",
    }
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]

    async def body(client):
        return await client.chat.completions.create(model="m", messages=ASK, tools=tools, **fields)

    _, route, server = run(_through(body))
    for key, value in fields.items():
        assert server.last_body[key] == value, key
    assert server.last_body["tools"] == tools
    [call] = route.calls
    assert {k: call.params[k] for k in fields} == fields  # recorded as sent


def test_n_returns_every_choice_and_records_each_as_a_call():
    async def body(client):
        return await client.chat.completions.create(model="m", messages=ASK, n=3, seed=10)

    reply, route, _ = run(_through(body))
    assert [c.index for c in reply.choices] == [0, 1, 2]
    assert all(c.message.content == "forty-two" for c in reply.choices)
    assert len(route.calls) == 3
    assert sorted(c.params["seed"] for c in route.calls) == [10, 11, 12]  # the i-th sample: seed + i
    assert reply.usage.completion_tokens == 3 * len(b"forty-two")


def test_a_field_upstream_refuses_is_a_400_in_one_sentence_not_an_infra_failure():
    async def refuse(request):
        body = orjson.loads(await request.read())
        if "logit_bias" in body:
            return web.json_response({"error": {"message": "logit_bias is not supported"}}, status=400)
        return web.json_response({"error": "unexpected"}, status=500)

    async def main():
        async with _upstream(refuse) as upstream, RecordingProxy() as proxy, proxy.episode(upstream) as route:
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="x", max_retries=0)
            with pytest.raises(openai.BadRequestError, match="logit_bias is not supported") as refused:
                await client.chat.completions.create(model="m", messages=ASK, logit_bias={"1": 1})
            await client.close()
        return refused.value, route

    refused, route = run(main())
    assert refused.status_code == 400
    assert route.failures == []  # the loop's own request was refused: no infrastructure failed
    assert route.status() is Status.OK


def test_bad_n_is_refused_in_one_sentence():
    async def body(client):
        with pytest.raises(openai.BadRequestError, match="'n' must be an integer from 1 to 128"):
            await client.chat.completions.create(model="m", messages=ASK, n=0)
        return None

    _, route, server = run(_through(body))
    assert server.requests == 0
    assert route.calls == []


def test_the_users_endpoint_parameters_win_over_the_loops_and_both_are_recorded():
    async def body(client):
        return await client.chat.completions.create(model="m", messages=ASK, temperature=0.3, max_tokens=20)

    _, route, server = run(_through(body, temperature=0.9))
    assert server.last_body["temperature"] == 0.9  # the user's explicit Endpoint parameter
    assert server.last_body["max_tokens"] == 20  # the loop's, where the user set none
    [call] = route.calls
    assert call.params == {"temperature": 0.9, "max_tokens": 20}
    assert call.requested_params == {"temperature": 0.3, "max_tokens": 20}


def test_logprobs_carry_token_strings_and_top_logprobs():
    async def body(client):
        return await client.chat.completions.create(model="m", messages=ASK, logprobs=True, top_logprobs=2)

    reply, route, _ = run(_through(body, reply=lambda m: "ab"))
    content = reply.choices[0].logprobs.content
    assert [t.token for t in content] == ["a", "b"]
    assert [[alt.token for alt in t.top_logprobs] for t in content] == [["a", "b"], ["b", "c"]]
    assert content[0].top_logprobs[1].logprob == -1.5
    [call] = route.calls
    assert call.tokens == ("a", "b")
    assert call.top_logprobs[1][1] == {"token": "c", "logprob": -1.5}


def test_raw_prompts_lists_and_token_ids_are_continued_and_recorded():
    async def body(client):
        many = await client.completions.create(model="m", prompt=["1+1=", "2+2="], max_tokens=4)
        ids = await client.completions.create(model="m", prompt=[50, 43, 50, 61], max_tokens=4)
        scored = await client.completions.create(model="m", prompt="2+2=", echo=True, logprobs=1, max_tokens=1)
        return many, ids, scored

    (many, ids, scored), route, _ = run(_through(body, reply=lambda m: "4"))
    assert [c.text for c in many.choices] == ["4", "4"]
    assert [c.index for c in many.choices] == [0, 1]
    assert ids.choices[0].text == "4"
    assert scored.choices[0].text == "2+2=4"
    assert scored.choices[0].logprobs.tokens == ["2", "+", "2", "=", "4"]
    prompts = [c.prompt for c in route.calls]
    assert prompts[:2] == ["1+1=", "2+2="]
    assert route.calls[2].prompt_token_ids == (50, 43, 50, 61)
    assert [p["token"] for p in route.calls[3].prompt_logprobs] == ["2", "+", "2", "="]
    assert all(c.messages == () for c in route.calls)  # raw text: no chat turn was made up


def test_responses_carry_function_calls_both_ways():
    seen = []

    def policy(messages):
        seen.append(messages)
        if messages[-1]["role"] == "tool":
            return "it is 42"
        return {"content": None, "tool_calls": [_call("call_1", "multiply", '{"a": 6, "b": 7}')]}

    async def main():
        async with RecordingProxy() as proxy, proxy.episode(responder=_in_process(policy), policy=policy) as route:
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="x", max_retries=0)
            tools = [{"type": "function", "name": "multiply", "parameters": {"type": "object"}}]
            first = await client.responses.create(model="m", input="6*7?", tools=tools)
            [asked] = [item for item in first.output if item.type == "function_call"]
            follow_up = [
                {"role": "user", "content": "6*7?"},
                {"type": "function_call", "call_id": asked.call_id, "name": asked.name, "arguments": asked.arguments},
                {"type": "function_call_output", "call_id": asked.call_id, "output": "42"},
            ]
            second = await client.responses.create(model="m", input=follow_up, tools=tools)
            await client.close()
            return asked, second, route.calls

    asked, second, calls = run(main())
    assert (asked.name, json.loads(asked.arguments), asked.call_id) == ("multiply", {"a": 6, "b": 7}, "call_1")
    assert second.output_text == "it is 42"
    assert seen[1][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call("call_1", "multiply", asked.arguments)],
    }
    assert seen[1][2] == {"role": "tool", "tool_call_id": "call_1", "content": "42"}
    assert calls[0].tools == ({"type": "function", "function": {"name": "multiply", "parameters": {"type": "object"}}},)


def _call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _in_process(policy):
    from nenyax.core.engine.native_loop import _in_process_call

    async def answer(request):
        return _in_process_call(request, policy(list(request.messages)), "test")

    return answer


class _OneShot(RolloutEnvironment):
    """A rollout environment whose loop is a function of (base_url, api_key) given to the test."""

    def __init__(self, loop):
        self.loop = loop
        super().__init__(
            Manifest(
                uri="oneshot:x",
                format="oneshot",
                format_version="1",
                mode=Mode.ROLLOUT,
                name="x",
                splits=(Split(name="all", count=1),),
                capabilities=Capabilities(stable_task_ids=True),
            )
        )

    def task_ids(self, split=None, limit=None):
        return ["t0"]

    async def run(self, episode):
        return await self.loop(episode)


def _judged(text):
    return NativeResult(judgment=Judgment(score=float(text == "ok"), passed=text == "ok", judge="t"))


def test_a_policy_that_is_no_endpoint_sees_the_whole_request_and_every_call_is_recorded():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]

    class TwoCalls:
        """Asks its model twice per turn (a learner sampling and re-ranking): both calls are the record."""

        def __init__(self, endpoint):
            self.endpoint = endpoint
            self.requests = []

        @property
        def info(self):
            from nenyax.core.contract.trajectory import PolicyInfo

            return PolicyInfo(kind="callable", name="two-calls")

        async def act(self, turn):
            self.requests.append(turn.request)
            for _ in range(2):
                call = await turn.recorder.model_call(turn.request, self.endpoint.send)
            return call.response["content"]

    async def loop(episode):
        client = openai.AsyncOpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
        reply = await client.chat.completions.create(model="m", messages=ASK, tools=tools, temperature=0.2)
        await client.close()
        return _judged(reply.choices[0].message.content)

    async def main():
        async with ScriptedModelServer(lambda m: "ok") as server:
            policy = TwoCalls(Endpoint("openai:m", base_url=server.base_url))
            return policy, await run_native_episode(
                _OneShot(loop), policy, task=None, seed=None, group_id=None, sample=0, timeout=30
            )

    policy, traj = run(main())
    [request] = policy.requests
    assert request.tools == tuple(tools)
    assert request.params == {"temperature": 0.2}
    assert traj.status is Status.OK
    assert len(traj.model_calls) == 2  # both of the policy's own calls, each once
    assert len({c.id for c in traj.model_calls}) == 2


def test_stream_true_passes_tokens_on_as_upstream_produces_them():
    async def slow(request):
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await stream.prepare(request)
        for i, text in enumerate(["first", " second"]):
            if i:
                await asyncio.sleep(1.0)
            piece = {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}
            await stream.write(b"data: " + orjson.dumps({"id": "c", "choices": [piece]}) + b"\n\n")
        end = {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        await stream.write(b"data: " + orjson.dumps(end) + b"\n\ndata: [DONE]\n\n")
        await stream.write_eof()
        return stream

    async def main():
        async with _upstream(slow) as upstream, RecordingProxy() as proxy, proxy.episode(upstream) as route:
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="x", max_retries=0)
            started = time.perf_counter()
            arrivals = []
            async for chunk in await client.chat.completions.create(model="m", messages=ASK, stream=True):
                if chunk.choices and chunk.choices[0].delta.content:
                    arrivals.append((time.perf_counter() - started, chunk.choices[0].delta.content))
            await client.close()
        return arrivals, route.calls

    arrivals, calls = run(main())
    assert [text for _, text in arrivals] == ["first", " second"]
    assert arrivals[0][0] < 0.8 <= arrivals[1][0]  # the first token came before upstream had finished
    [call] = calls
    assert call.response["content"] == "first second"


def test_a_synchronous_native_loop_runs_off_the_proxys_event_loop():
    class Sync(_OneShot):
        def run(self, episode):  # a blocking harness, like lm-eval's
            client = openai.OpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
            text = client.chat.completions.create(model="m", messages=ASK).choices[0].message.content
            client.close()
            return _judged(text)

    traj = run(
        run_native_episode(
            Sync(None), as_policy(lambda m: "ok"), task=None, seed=None, group_id=None, sample=0, timeout=30
        )
    )
    assert traj.status is Status.OK
    assert traj.judgment.score == 1.0
    assert [c.response["content"] for c in traj.model_calls] == ["ok"]


def test_ctrl_c_in_a_native_loop_keeps_its_calls_and_says_interrupted():
    async def loop(episode):
        client = openai.AsyncOpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
        await client.chat.completions.create(model="m", messages=ASK)
        await client.close()
        raise KeyboardInterrupt

    with pytest.raises(EpisodeInterrupted) as stopped:
        run(
            run_native_episode(
                _OneShot(loop), as_policy(lambda m: "ok"), task=None, seed=None, group_id=None, sample=0, timeout=30
            )
        )
    traj = stopped.value.trajectory
    assert traj.status is Status.INTERRUPTED
    assert traj.judgment is None
    assert len(traj.model_calls) == 1
