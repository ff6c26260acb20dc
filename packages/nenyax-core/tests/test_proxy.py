"""The recording proxy, driven by the official `openai` client as a harness would drive it.

Upstream is the scripted server (`nenyax.testing.model_server`), not a model: these tests need exact
replies and upstream failures on cue, which no real server gives; a real model behind the proxy is
tested in tests/test_embedded_model.py.
"""

import asyncio

import openai
import pytest

from nenyax.core import Endpoint
from nenyax.core.contract.events import Observers
from nenyax.core.models.proxy import RecordingProxy
from nenyax.core.models.recorder import EpisodeRecorder
from nenyax.testing.model_server import FaultPlan, ScriptedModelServer


def run(coro):
    return asyncio.run(coro)


async def _with_upstream(body, reply=lambda m: "forty-two", faults=None):
    async with ScriptedModelServer(reply, faults=faults) as server, RecordingProxy() as proxy:
        return await body(proxy, Endpoint("openai:scripted", base_url=server.base_url))


@pytest.mark.parametrize("stream", [False, True])
def test_chat_is_forwarded_and_recorded_with_token_ids(stream):
    async def body(proxy, endpoint):
        async with proxy.episode(endpoint) as route:
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="unused", max_retries=0)
            messages = [{"role": "user", "content": "what is 6*7?"}]
            if stream:
                chunks = await client.chat.completions.create(
                    model="any", messages=messages, stream=True, temperature=0.3
                )
                text = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
            else:
                reply = await client.chat.completions.create(model="any", messages=messages, temperature=0.3)
                text = reply.choices[0].message.content
                assert reply.choices[0].model_extra["token_ids"] == list(b"forty-two")
            await client.close()
            return text, route.calls

    text, calls = run(_with_upstream(body))
    assert text == "forty-two"
    [call] = calls
    assert call.messages == ({"role": "user", "content": "what is 6*7?"},)
    assert call.completion_token_ids == tuple(b"forty-two")
    assert call.params == {"temperature": 0.3}
    assert call.model == "scripted"  # forwarded as the endpoint's model, whatever the harness asked for


def test_in_process_function_answers_and_calls_are_attributed_per_episode():
    async def main():
        async with RecordingProxy() as proxy:
            a = proxy.open_episode(lambda messages: "A:" + messages[-1]["content"])
            b = proxy.open_episode(lambda messages: "B:" + messages[-1]["content"])

            async def ask(route, n):
                client = openai.AsyncOpenAI(base_url=route.base_url, api_key="x", max_retries=0)
                out = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": str(n)}])
                await client.close()
                return out.choices[0].message.content

            answers = await asyncio.gather(*(ask(a if n % 2 else b, n) for n in range(10)))
            return answers, proxy.close_episode(a), proxy.close_episode(b), proxy

    answers, calls_a, calls_b, proxy = run(main())
    assert answers == [("A:" if n % 2 else "B:") + str(n) for n in range(10)]
    assert sorted(c.messages[0]["content"] for c in calls_a) == ["1", "3", "5", "7", "9"]
    assert len(calls_b) == 5
    assert proxy.routes == {}


def test_responses_models_and_completions_routes():
    async def body(proxy, endpoint):
        async with proxy.episode(endpoint, model="served-name") as route:
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="x", max_retries=0)
            response = await client.responses.create(model="m", input="hi", instructions="be brief")
            models = await client.models.list()
            plain = await client.completions.create(model="m", prompt="2+2=")
            scored = await client.completions.create(model="m", prompt="2+2=", echo=True, logprobs=0, max_tokens=0)
            await client.close()
            return response, models, plain, scored, route.calls

    response, models, plain, scored, calls = run(_with_upstream(body))
    assert response.output_text == "forty-two"
    assert [m.id for m in models.data] == ["served-name"]
    assert plain.choices[0].text == "forty-two"
    assert scored.choices[0].text.startswith("2+2=")
    assert scored.choices[0].logprobs.token_logprobs[0] == -0.5
    assert calls[0].messages[0]["role"] == "system"
    assert [(c.messages, c.prompt) for c in calls[1:]] == [((), "2+2="), ((), "2+2=")]  # raw: no chat turn


def test_unknown_episode_and_upstream_failure_are_http_errors():
    async def body(proxy, endpoint):
        gone = proxy.open_episode(endpoint)
        proxy.close_episode(gone)
        client = openai.AsyncOpenAI(base_url=gone.base_url, api_key="x", max_retries=0)
        with pytest.raises(openai.NotFoundError):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        flaky = Endpoint("openai:scripted", base_url=endpoint.provider.base_url, provider_options={"max_retries": 0})
        async with proxy.episode(flaky) as route:
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="x", max_retries=0)
            with pytest.raises(openai.APIStatusError) as info:
                await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
            assert info.value.status_code == 502
        in_process = proxy.open_episode(lambda m: "fine")
        client = openai.AsyncOpenAI(base_url=in_process.base_url, api_key="x", max_retries=0)
        with pytest.raises(openai.BadRequestError, match="scores prompts"):
            await client.completions.create(model="m", prompt="x", echo=True, logprobs=0)
        return True

    assert run(_with_upstream(body, faults=FaultPlan(rate=1.0, kinds=("500",))))


def test_failed_calls_are_classified_on_the_route():
    from nenyax.core import Status

    async def main():
        async with ScriptedModelServer(faults=FaultPlan(rate=1.0, kinds=("500",))) as server, RecordingProxy() as proxy:
            flaky = Endpoint("openai:m", base_url=server.base_url, provider_options={"max_retries": 0})

            def crashes(messages):
                raise ValueError("the policy broke")

            routes = [proxy.open_episode(flaky), proxy.open_episode(crashes), proxy.open_episode(lambda m: "fine")]
            codes = {}
            for route in routes:
                client = openai.AsyncOpenAI(base_url=route.base_url, api_key="x", max_retries=0)
                try:
                    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
                except openai.APIStatusError as exc:
                    codes[route.id] = exc.status_code
                await client.close()
            await flaky.aclose()
            return routes, codes

    (flaky, crashes, fine), codes = run(main())
    assert flaky.status() is Status.INFRA_ERROR
    assert codes[flaky.id] == 502
    assert flaky.calls == []
    assert crashes.status() is Status.POLICY_ERROR
    assert codes[crashes.id] == 500
    assert "the policy broke" in crashes.failures[0][1]
    assert fine.status() is Status.OK
    assert len(fine.calls) == 1


def test_responses_refuses_malformed_input():
    async def main():
        async with RecordingProxy() as proxy, proxy.episode(lambda m: "fine") as route:
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="x", max_retries=0)
            with pytest.raises(openai.BadRequestError, match="input item must be an object"):
                await client.responses.create(model="m", input=[1, 2])
            await client.close()
            return route.calls

    assert run(main()) == []


def test_a_served_policy_answers_at_v1_for_any_client_and_keeps_no_call():
    async def main():
        async with RecordingProxy() as proxy:
            root = f"http://{proxy.host}:{proxy.port}/v1"
            client = openai.AsyncOpenAI(base_url=root, api_key="x", max_retries=0)
            with pytest.raises(openai.NotFoundError):  # nothing served yet
                await client.models.list()
            ended = []

            class Ended:
                def on_model_call_ended(self, event):
                    ended.append(event.call)

            recorder = EpisodeRecorder(Observers([Ended()]))
            route = proxy.serve(lambda messages: "echo " + messages[-1]["content"], "served", recorder=recorder)
            replies = [
                await client.chat.completions.create(model="m", messages=[{"role": "user", "content": str(n)}])
                for n in range(3)
            ]
            models = await client.models.list()
            await client.close()
            return route, replies, models, ended

    route, replies, models, ended = run(main())
    assert route.base_url.endswith("/v1")
    assert [r.choices[0].message.content for r in replies] == ["echo 0", "echo 1", "echo 2"]
    assert [m.id for m in models.data] == ["served"]
    assert len(ended) == 3  # every call reached the observers...
    assert route.calls == []  # ...and none is held while the server runs
