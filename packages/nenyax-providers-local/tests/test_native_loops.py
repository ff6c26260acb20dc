"""What a native loop needs from the embedded model, through the recording proxy and the official openai
client: tool calls, token strings and alternatives, raw prompts and their scores, real streaming, and a
refusal for what the model cannot honour. All with the real SmolLM2-135M-Instruct."""

from __future__ import annotations

import asyncio
import json
import math
import time

import openai
import pytest

from nenyax.core import Endpoint
from nenyax.core.contract.chat import ChatRequest
from nenyax.core.models.proxy import RecordingProxy
from nenyax.providers.local.tools import TOOLS_PROMPT, parse, render

MODEL = "local:smollm2-135m"
ASK = [{"role": "user", "content": "Say hello to Ada."}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "greet",
            "description": "Greet a person by name.",
            "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        },
    }
]


async def _client(body, endpoint=None):
    endpoint = endpoint or Endpoint(MODEL, max_tokens=24, seed=3)
    async with RecordingProxy() as proxy, proxy.episode(endpoint) as route:
        client = openai.AsyncOpenAI(base_url=route.base_url, api_key="x", max_retries=0)
        try:
            out = await body(client)
        finally:
            await client.close()
        return out, route.calls


# ------------------------------------------------------------------ tool calls: rendering and parsing


def test_smollm2_and_hermes_tool_calls_parse_into_openai_tool_calls():
    text, calls, ok = parse('<tool_call>[{"name": "greet", "arguments": {"name": "Ada"}}]</tool_call>')
    assert ok
    assert text is None
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("greet", {"name": "Ada"})
    ]
    hermes = 'Sure.\n<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\n<tool_call>{"name": "b", "arguments": {"x": 1}}</tool_call>'
    text, calls, ok = parse(hermes)
    assert ok
    assert text == "Sure."
    assert [c["function"]["name"] for c in calls] == ["a", "b"]
    assert len({c["id"] for c in calls}) == 2
    assert parse("<tool_call>[]</tool_call>") == ("", None, True)  # SmolLM2's "no call needed"
    assert parse("<tool_call>{not json</tool_call>")[1:] == (None, False)
    assert parse("no call here") == ("no call here", None, True)


def test_tools_go_into_the_system_prompt_and_earlier_calls_are_written_back():
    history = [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "greet", '{"name": "Ada"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "Hello Ada"},
    ]
    rendered = render(history, TOOLS)
    assert rendered[0]["content"].startswith("Be kind.\n\n" + TOOLS_PROMPT.split("\n")[0])
    assert '"name": "greet"' in rendered[0]["content"]
    assert rendered[2]["content"] == '<tool_call>[{"name": "greet", "arguments": {"name": "Ada"}}]</tool_call>'
    assert all(isinstance(m["content"], str) for m in rendered)


def _call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_tool_episode_with_the_embedded_model_renders_the_tools_and_says_how_the_reply_ended(engine):
    async def body(client):
        return await client.chat.completions.create(model="m", messages=ASK, tools=TOOLS, temperature=0)

    reply, [call] = asyncio.run(_client(body))
    prompt = engine.decode(list(call.prompt_token_ids))
    assert "<tools>" in prompt
    assert '"greet"' in prompt
    choice = reply.choices[0]
    # Greedy, SmolLM2-135M answers this one in prose (its tool calls are rare; the parsing of real call
    # markup is tested above): no markup, so no tool_calls, and the text is the decoded completion.
    assert parse(engine.decode(list(call.completion_token_ids))) == (choice.message.content, None, True)
    assert choice.message.tool_calls is None
    assert choice.finish_reason == call.finish_reason == "length"


def test_a_forced_tool_choice_is_refused_in_one_sentence():
    async def body(client):
        with pytest.raises(openai.BadRequestError, match="cannot be forced to call a tool") as refused:
            await client.chat.completions.create(model="m", messages=ASK, tools=TOOLS, tool_choice="required")
        return refused.value

    refused, calls = asyncio.run(_client(body))
    assert refused.status_code == 400
    assert calls == []


def test_a_field_the_model_cannot_honour_is_refused_not_dropped():
    async def body(client):
        with pytest.raises(openai.BadRequestError, match="cannot honour 'logit_bias'"):
            await client.chat.completions.create(model="m", messages=ASK, logit_bias={"1": 3})
        return None

    _, calls = asyncio.run(_client(body))
    assert calls == []


# ------------------------------------------------------------------ logprobs: token strings and alternatives


def test_token_strings_and_top_logprobs_match_the_sampled_tokens(engine):
    async def body(client):
        return await client.chat.completions.create(
            model="m", messages=ASK, logprobs=True, top_logprobs=3, temperature=0, max_tokens=8
        )

    reply, [call] = asyncio.run(_client(body))
    content = reply.choices[0].logprobs.content
    assert "".join(t.token for t in content) == engine.decode(list(call.completion_token_ids)) + ""
    for token, logprob in zip(content, call.logprobs, strict=True):
        assert len(token.top_logprobs) == 3
        assert token.top_logprobs[0].token == token.token  # greedy: the sampled token is the most likely
        assert math.isclose(token.top_logprobs[0].logprob, logprob, abs_tol=1e-9)
        assert token.top_logprobs[0].logprob >= token.top_logprobs[1].logprob >= token.top_logprobs[2].logprob


# ------------------------------------------------------------------ raw prompts and echo


def test_raw_prompt_scores_agree_with_what_generation_sampled(engine):
    """Score the prompt + what the model generated from it: each generated token's echoed logprob is the
    logprob it was sampled with (one plain forward pass against the decoder's cached one)."""

    async def body(client):
        made = await client.completions.create(
            model="m", prompt="The capital of France is", max_tokens=5, temperature=0
        )
        return made

    plain = Endpoint(MODEL, seed=3)  # no max_tokens of its own: the loop's 5 and 0 are what is sent
    _made, [call] = asyncio.run(_client(body, plain))
    assert call.messages == ()
    assert call.prompt == "The capital of France is"
    ids = [*call.prompt_token_ids, *call.completion_token_ids]

    async def score(client):
        return await client.completions.create(model="m", prompt=ids, echo=True, logprobs=1, max_tokens=0)

    scored, [scoring] = asyncio.run(_client(score, plain))
    values = scored.choices[0].logprobs.token_logprobs
    assert values[0] is None  # the first token has nothing before it
    tail = values[len(call.prompt_token_ids) :]
    assert len(tail) == len(call.logprobs)
    for echoed, sampled in zip(tail, call.logprobs, strict=True):
        assert math.isclose(echoed, sampled, abs_tol=1e-3)
    assert scored.choices[0].text == engine.decode(ids)
    assert scoring.completion_token_ids == ()


# ------------------------------------------------------------------ streaming


def test_stream_true_sends_tokens_as_the_model_samples_them():
    async def body(client):
        started = time.perf_counter()
        arrivals = []
        stream = await client.chat.completions.create(
            model="m", messages=ASK, stream=True, max_tokens=24, temperature=0, extra_body={"min_tokens": 24}
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                arrivals.append((time.perf_counter() - started, chunk.choices[0].delta.content))
        return arrivals

    arrivals, [call] = asyncio.run(_client(body))
    assert "".join(text for _, text in arrivals) == call.response["content"]
    assert len(arrivals) > 5  # token by token, not one piece
    first, last = arrivals[0][0], arrivals[-1][0]
    assert first < last / 2  # the first token came long before the last one was sampled
    assert len(call.completion_token_ids) == 24


def test_detokenize_is_the_tokenizers_decode(engine):
    endpoint = Endpoint(MODEL)
    request = ChatRequest(model="smollm2-135m", messages=tuple(ASK), params={"max_tokens": 6, "seed": 1})
    call = asyncio.run(endpoint.send(request))
    assert endpoint.detokenize(call.completion_token_ids) == call.response["content"]


# ------------------------------------------------------------------ token fidelity over a multi-turn native loop


class _TwoTurns:
    """A rollout environment whose loop asks twice, keeping the reply (as `edit` leaves it) in the transcript."""

    def __init__(self, edit):
        from nenyax.core.contract.manifest import Capabilities, Manifest, Mode, Split
        from nenyax.core.engine.environment import RolloutEnvironment

        edit_reply = edit

        class Env(RolloutEnvironment):
            def task_ids(self, split=None, limit=None):
                return ["t0"]

            async def run(self, episode):
                from nenyax.core.contract.trajectory import Judgment
                from nenyax.core.engine.native_loop import NativeResult

                client = openai.AsyncOpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
                messages = list(ASK)
                for follow_up in ("And to Grace?", None):
                    reply = await client.chat.completions.create(model="m", messages=messages, temperature=0)
                    messages.append({"role": "assistant", "content": edit_reply(reply.choices[0].message.content)})
                    if follow_up:
                        messages.append({"role": "user", "content": follow_up})
                await client.close()
                return NativeResult(judgment=Judgment(score=1.0, judge="t"), messages=tuple(messages))

        manifest = Manifest(
            uri="twoturns:x",
            format="twoturns",
            format_version="1",
            mode=Mode.ROLLOUT,
            name="x",
            splits=(Split(name="all", count=1),),
            capabilities=Capabilities(stable_task_ids=True, multi_turn=True),
        )
        self.env = Env(manifest)


def _two_turn_episode(edit):
    from nenyax.core.engine.native_loop import run_native_episode

    endpoint = Endpoint(MODEL, max_tokens=16)
    env = _TwoTurns(edit).env
    return asyncio.run(run_native_episode(env, endpoint, task=None, seed=None, group_id=None, sample=0, timeout=120))


def test_a_loop_that_keeps_the_replies_as_sampled_is_token_faithful():
    traj = _two_turn_episode(lambda text: text)
    assert len(traj.model_calls) == 2
    first, second = traj.model_calls
    assert second.prompt_token_ids[: len(first.prompt_token_ids) + len(first.completion_token_ids)] == (
        first.prompt_token_ids + first.completion_token_ids
    )
    assert traj.token_faithful is True


def test_a_loop_that_rewrites_a_reply_is_not_and_the_record_says_so():
    # (Text appended after a reply is no break: the sampled ids stay in the next prompt as sampled, and what
    # follows them is the environment's, like any observation.)
    traj = _two_turn_episode(lambda text: "Edited: " + text)
    from nenyax.core.contract.fidelity import token_fidelity

    verdict = token_fidelity(traj.model_calls, Endpoint(MODEL).detokenize)
    assert traj.token_faithful is False
    assert verdict.call == 2
