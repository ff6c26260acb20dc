"""The ``tokens`` provider over SGLang's native ``/generate`` wire, and the rule every turn follows: a later
turn's prompt is the earlier turns' exact ids, then the template's tokens for what came since.

No SGLang server runs on this machine (it has no CPU build on PyPI): the server here is a loopback that
answers in the exact shapes SGLang documents for ``/generate`` (``output_ids``, ``meta_info`` with
``output_token_logprobs`` as ``[logprob, id, text]`` and ``finish_reason.type``), sampling with the real
embedded model, so its ids and logprobs are a real model's. The vLLM wire is tested against a real vLLM
(``tests/vllm/``, ``nox -s vllm``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
from typing import Any

import pytest
from aiohttp import web

from nenyax.core import ChatRequest, Endpoint, TextRequest
from nenyax.core.errors import InfraFailure, UsageError
from nenyax.providers.local.token_server import Sampled, TokenServerProvider
from nenyax.providers.local.turns import ChatTemplate, Transcripts
from nenyax.testing import conformance_suite
from nenyax.testing.subject import Subject

MODEL = "smollm2-135m"
TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
        },
    },
)


class LoopbackSGLang:
    """SGLang's ``/generate`` shapes, sampled by the embedded model (or a scripted reply, to test parsing)."""

    def __init__(self, provider: Any, tokenizer: Any) -> None:
        self.provider, self.tokenizer = provider, tokenizer
        self.received: list[dict[str, Any]] = []
        self.scripted: str | None = None
        self.status = 200

    async def generate(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.received.append(body)
        if self.status != 200:
            return web.Response(status=self.status, text="scheduler crashed")
        sampling = body["sampling_params"]
        if self.scripted is not None:  # spelled a character at a time: ids that tokenizing the text never gives
            spelled = [i for ch in self.scripted for i in self.tokenizer(ch, add_special_tokens=False)["input_ids"]]
            ids = [*spelled, self.tokenizer.eos_token_id]
            logprobs, reason = [-0.5] * len(ids), {"type": "stop", "matched": self.tokenizer.eos_token_id}
        else:
            params = {"max_tokens": sampling["max_new_tokens"], "temperature": sampling.get("temperature", 1.0)}
            call = await self.provider.complete_text(
                TextRequest(model=MODEL, prompt=tuple(body["input_ids"]), params=params)
            )
            ids, logprobs = list(call.completion_token_ids), list(call.logprobs)
            ended = call.finish_reason == "stop"
            reason = {"type": "stop", "matched": ids[-1]} if ended else {"type": "length", "length": len(ids)}
        return web.json_response(
            {
                "text": self.tokenizer.decode(ids, skip_special_tokens=True),
                "output_ids": ids,
                "meta_info": {
                    "id": "loopback",
                    "finish_reason": reason,
                    "prompt_tokens": len(body["input_ids"]),
                    "completion_tokens": len(ids),
                    "cached_tokens": 0,
                    "output_token_logprobs": [[lp, i, None] for lp, i in zip(logprobs, ids, strict=True)],
                },
            }
        )


def serve(app: web.Application):
    """Run `app` on a free loopback port inside the test's event loop; returns (runner, base url)."""

    async def start():
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return runner, f"http://127.0.0.1:{port}"

    return start()


def run_against(server: LoopbackSGLang, scenario, **sampling):
    async def main():
        app = web.Application()
        app.router.add_post("/generate", server.generate)
        runner, url = await serve(app)
        endpoint = Endpoint(f"tokens:{MODEL}", base_url=url, provider_options={"server": "sglang"}, **sampling)
        try:
            return await scenario(endpoint)
        finally:
            await endpoint.aclose()
            await runner.cleanup()

    return asyncio.run(main())


@pytest.fixture
def sglang(provider, tokenizer) -> LoopbackSGLang:
    return LoopbackSGLang(provider, tokenizer)


def test_a_second_turn_extends_the_first_turns_exact_ids_and_records_what_the_server_sampled(sglang, tokenizer):
    async def two_turns(endpoint):
        first_messages = [{"role": "user", "content": "Name a colour."}]
        first = await endpoint.send(ChatRequest(model=MODEL, messages=tuple(first_messages), params={"seed": 1}))
        # The harness hands the reply back as harnesses do: with an id and a null field of its own.
        said = {**first.response, "id": "msg_1", "refusal": None}
        later = [*first_messages, said, {"role": "user", "content": "And another one?"}]
        second = await endpoint.send(ChatRequest(model=MODEL, messages=tuple(later)))
        return first, second, later

    first, second, later = run_against(sglang, two_turns, max_tokens=24)
    sent = [body["input_ids"] for body in sglang.received]
    assert sent == [list(first.prompt_token_ids), list(second.prompt_token_ids)]
    earlier = [*first.prompt_token_ids, *first.completion_token_ids]
    assert list(second.prompt_token_ids[: len(earlier)]) == earlier  # the exact ids, never re-tokenized text
    # What follows them is the template's: the whole transcript rendered reads the same.
    rendered = tokenizer.apply_chat_template(
        [{"role": m["role"], "content": m["content"]} for m in later], add_generation_prompt=True, tokenize=False
    )
    assert tokenizer.decode(second.prompt_token_ids, skip_special_tokens=False) == rendered
    assert first.logprobs
    assert len(first.logprobs) == len(first.completion_token_ids)
    assert all(lp <= 0 for lp in first.logprobs)
    assert first.response["content"] == tokenizer.decode(first.completion_token_ids, skip_special_tokens=True)
    assert sglang.received[0]["sampling_params"]["max_new_tokens"] == 24
    assert sglang.received[0]["sampling_params"]["sampling_seed"] == 1


def test_a_tool_call_is_parsed_back_and_the_tool_result_turn_extends_it(sglang):
    sglang.scripted = '<tool_call>[{"name":"add","arguments":{"a":2,"b":3}}]</tool_call>'

    async def call_then_result(endpoint):
        asked = [{"role": "user", "content": "What is 2 + 3?"}]
        first = await endpoint.send(ChatRequest(model=MODEL, messages=tuple(asked), tools=TOOLS))
        call = first.response["tool_calls"][0]
        result = {"role": "tool", "tool_call_id": call["id"], "name": "add", "content": "5"}
        sglang.scripted = "5"
        second = await endpoint.send(ChatRequest(model=MODEL, messages=(*asked, first.response, result), tools=TOOLS))
        return first, second

    first, second = run_against(sglang, call_then_result)
    # No max_tokens asked: the provider's default is sent, and recorded (never a server's silent 16).
    assert [body["sampling_params"]["max_new_tokens"] for body in sglang.received] == [256, 256]
    assert first.params["max_tokens"] == 256
    assert first.finish_reason == "tool_calls"
    function = first.response["tool_calls"][0]["function"]
    assert function["name"] == "add"
    assert json.loads(function["arguments"]) == {"a": 2, "b": 3}
    earlier = [*first.prompt_token_ids, *first.completion_token_ids]
    assert list(second.prompt_token_ids[: len(earlier)]) == earlier  # rendering the call again would not give these
    assert second.response == {"role": "assistant", "content": "5"}


def test_a_server_failure_is_an_infrastructure_failure(sglang):
    sglang.status = 500

    async def ask(endpoint):
        return await endpoint.send(ChatRequest(model=MODEL, messages=({"role": "user", "content": "hi"},)))

    with pytest.raises(InfraFailure, match="failed the request"):
        run_against(sglang, ask)


def test_a_subclass_samples_over_its_own_wire_through_the_public_generate_hook(provider, tokenizer):
    """What a trainer's bridge overrides (verl's server manager): the chat, tools and turns stay the provider's."""

    asked: list[tuple[list[int], dict[str, Any]]] = []

    class OverTheEngine(TokenServerProvider):
        async def generate(self, model, ids, sampling):
            asked.append((ids, sampling))
            call = await provider.complete_text(TextRequest(model=MODEL, prompt=tuple(ids), params=sampling))
            return Sampled(list(call.completion_token_ids), list(call.logprobs), call.finish_reason)

    async def main():
        endpoint = Endpoint.over(OverTheEngine(tokenizer=tokenizer), MODEL, max_tokens=8, temperature=0.0)
        try:
            return await endpoint.send(ChatRequest(model=MODEL, messages=({"role": "user", "content": "2+2?"},)))
        finally:
            await endpoint.aclose()

    call = asyncio.run(main())
    ((ids, sampling),) = asked
    assert list(call.prompt_token_ids) == ids
    assert sampling["max_tokens"] == 8
    assert len(call.completion_token_ids) == len(call.logprobs) > 0
    assert call.response["content"] == tokenizer.decode(call.completion_token_ids, skip_special_tokens=True)
    assert call.usage == {"prompt_tokens": len(ids), "completion_tokens": len(call.completion_token_ids)}


def test_a_template_that_renders_earlier_turns_anew_is_rendered_again_and_said(tokenizer, caplog):
    class Counting:
        """SmolLM2's tokenizer under a template that heads the prompt with the number of turns so far."""

        chat_template = (
            "turns: {{ messages|length }}\n{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        )

        def apply_chat_template(self, messages, **kwargs):
            from jinja2 import Template

            return Template(self.chat_template).render(messages=messages)

        def __call__(self, text, **kwargs):
            return tokenizer(text, **kwargs)

        def decode(self, ids, **kwargs):
            return tokenizer.decode(ids, **kwargs)

    template = ChatTemplate(Counting(), name="counting")
    transcripts = Transcripts(template)
    asked = [{"role": "user", "content": "hi"}]
    first = transcripts.prompt(asked)
    reply = {"role": "assistant", "content": "hello"}
    transcripts.remember(asked, (), reply, first.ids, tokenizer("hello", add_special_tokens=False)["input_ids"])
    later = [*asked, reply, {"role": "user", "content": "again"}]
    with caplog.at_level(logging.WARNING, logger="nenyax.providers.turns"):
        second = transcripts.prompt(later)
    assert second.rerendered
    assert "renders earlier turns differently" in second.rerendered
    assert second.ids == template.ids(later, ())
    assert second.rerendered in caplog.text


def test_bad_settings_are_one_sentence():
    with pytest.raises(UsageError, match="speaks to vllm or sglang servers, not 'triton'"):
        TokenServerProvider(server="triton")
    with pytest.raises(UsageError, match="is not an http"):
        TokenServerProvider(base_url="localhost:8000")


@pytest.fixture(scope="module")
def sglang_in_a_thread(provider, tokenizer):
    """The loopback server on an event loop of its own, for the synchronous kit; yields its base URL."""
    server, loop, started = LoopbackSGLang(provider, tokenizer), asyncio.new_event_loop(), concurrent.futures.Future()

    def run():
        app = web.Application()
        app.router.add_post("/generate", server.generate)
        runner, url = loop.run_until_complete(serve(app))
        started.set_result(url)
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield started.result(timeout=30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=30)


class TestTokensConformance(conformance_suite("provider")):  # type: ignore[misc]
    """The provider kit against the ``tokens`` provider over the loopback SGLang wire."""

    plugin = "tokens"

    @pytest.fixture
    def subject(self, sglang_in_a_thread, engine):
        options = {"base_url": sglang_in_a_thread, "server": "sglang", "tokenizer": str(engine.folder)}
        return Subject.from_environment(kind="provider", name=self.plugin, options=options)
