"""A model's sampling is seeded from the episode: the same (task, seed, sample) sends the same seeds again.

The model is core's scripted OpenAI-compatible server on loopback (the real `openai` provider talks to it);
the embedded model's own replay of the same tokens is tested in tests/test_embedded_model.py.
"""

from __future__ import annotations

import asyncio

from nenyax.core import Endpoint
from nenyax.core.contract.chat import ChatRequest
from nenyax.core.models.recorder import EpisodeRecorder, call_seed
from nenyax.testing.model_server import ScriptedModelServer
from nenyax_testsupport.fakes import ArithEnvironment
from nenyax_testsupport.native_fakes import ToolMathEnvironment, operands


def _play(**sampling):
    async def run():
        a, b = operands("mul/0")
        async with ScriptedModelServer(reply=lambda messages: str(a * b)) as server:
            endpoint = Endpoint("openai:scripted", base_url=server.base_url, **sampling)
            arith = ArithEnvironment("arith:add", size=2, seed=0)
            step = [await arith.arollout(endpoint, task="add/0/1", sample=k) for k in (0, 0, 1)]
            native = await ToolMathEnvironment("toolmath:mul").arollout(endpoint, task="mul/0")
            await endpoint.aclose()
            return step, native

    return asyncio.run(run())


def test_the_same_episode_sends_the_same_seed_and_another_sample_another():
    (first, again, other), native = _play()
    seeds = [t.model_calls[0].params["seed"] for t in (first, again, other)]
    assert seeds[0] == seeds[1] != seeds[2]
    assert seeds[0] == call_seed("add/0/1:0:0", 1)  # recorded, and derived from the episode alone
    assert "seed" not in first.model_calls[0].requested_params  # the episode chose it, not the caller
    assert native.model_calls[0].params["seed"] == call_seed("mul/0:None:0", 1)


def test_a_seed_the_user_set_wins():
    (first, _, other), _ = _play(seed=7)
    assert first.model_calls[0].params["seed"] == other.model_calls[0].params["seed"] == 7


def test_each_call_of_an_episode_gets_its_own_seed_even_when_sent_together():
    recorder = EpisodeRecorder()
    recorder.sampling_seed = "t:1:0"
    seen = []

    async def send(request):
        seen.append(request.episode_seed)
        from nenyax.core.contract.trajectory import ModelCall

        return ModelCall(messages=request.messages, response={"role": "assistant", "content": "x"})

    async def run():
        request = ChatRequest(model="m", messages=({"role": "user", "content": "q"},))
        await asyncio.gather(*(recorder.model_call(request, send) for _ in range(3)))

    asyncio.run(run())
    assert seen == [call_seed("t:1:0", n) for n in (1, 2, 3)]
    assert len(set(seen)) == 3


def test_a_provider_that_cannot_take_a_seed_is_not_sent_one():
    class NoSeed:
        honours = frozenset({"temperature", "max_tokens"})

    endpoint = Endpoint("openai:m")
    endpoint._provider = NoSeed()  # the provider an Endpoint opened: only what it honours is sent
    assert endpoint._sent({"temperature": 0.5}, episode_seed=11) == {"temperature": 0.5}
    endpoint._provider.honours = frozenset({"temperature", "seed"})
    assert endpoint._sent({"temperature": 0.5}, episode_seed=11) == {"temperature": 0.5, "seed": 11}
