"""The real model, really sampling: tokens, text, logprobs, seeds, greedy, stops and micro-batching."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time

import attrs
import pytest
import torch

from nenyax.core.contract.chat import ChatRequest
from nenyax.core.errors import RequestRefused, UsageError
from nenyax.providers.local.cache import sha256_file


def test_tokens_decode_to_text_and_logprobs_match_a_teacher_forced_pass(provider, tokenizer, ask, teacher_forced):
    call = ask("Name three colours.", max_tokens=12, seed=3)
    ids = call.completion_token_ids
    assert ids
    assert len(call.logprobs) == len(ids)
    assert tokenizer.decode(list(ids), skip_special_tokens=True) == call.response["content"]
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Name three colours."}], add_generation_prompt=True, tokenize=False
    )
    assert list(call.prompt_token_ids) == tokenizer(rendered, add_special_tokens=False)["input_ids"]
    reference = teacher_forced(call.prompt_token_ids, ids)
    assert max(abs(a - b) for a, b in zip(call.logprobs, reference, strict=True)) < 1e-4
    assert all(lp <= 0 for lp in call.logprobs)
    assert call.usage == {
        "prompt_tokens": len(call.prompt_token_ids),
        "completion_tokens": len(ids),
        "total_tokens": len(call.prompt_token_ids) + len(ids),
    }
    assert call.provider == "local"
    assert call.model == "smollm2-135m"
    assert call.params == {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "max_tokens": 12, "seed": 3}


def test_revision_and_template_hash_identify_what_served(provider, engine, tokenizer, ask):
    call = ask("Hi", max_tokens=2)
    weights = engine.folder / "model.safetensors"
    assert call.fingerprint == provider.revision == f"sha256:{sha256_file(weights)}"
    assert call.chat_template_hash == "sha256:" + hashlib.sha256(tokenizer.chat_template.encode()).hexdigest()


def test_logprobs_are_raw_not_temperature_scaled(ask, teacher_forced):
    call = ask("Tell me a fact.", max_tokens=6, temperature=0.3, top_p=0.9, seed=5)
    reference = teacher_forced(call.prompt_token_ids, call.completion_token_ids)
    assert max(abs(a - b) for a, b in zip(call.logprobs, reference, strict=True)) < 1e-4


def test_same_seed_same_tokens_other_seeds_differ(ask):
    first = ask("Write a word.", max_tokens=10, seed=11)
    again = ask("Write a word.", max_tokens=10, seed=11)
    assert again.completion_token_ids == first.completion_token_ids
    others = {ask("Write a word.", max_tokens=10, seed=s).completion_token_ids for s in (12, 13, 14)}
    assert others - {first.completion_token_ids}


def test_greedy_takes_the_argmax_every_step(engine, ask):
    call = ask("What is the capital of France? One word.", temperature=0, max_tokens=16)
    again = ask("What is the capital of France? One word.", temperature=0, max_tokens=16)
    assert again.completion_token_ids == call.completion_token_ids
    ids = torch.tensor([[*call.prompt_token_ids, *call.completion_token_ids]])
    with torch.inference_mode():
        logits = engine.model(input_ids=ids).logits[0]
    start = len(call.prompt_token_ids) - 1
    argmax = [int(logits[start + i].argmax()) for i in range(len(call.completion_token_ids))]
    assert list(call.completion_token_ids) == argmax
    assert "Paris" in call.response["content"]


def test_eos_is_kept_in_the_ids_and_dropped_from_the_text(tokenizer, ask):
    call = ask("What is the capital of France? One word.", temperature=0, max_tokens=16)
    assert call.finish_reason == "stop"
    assert call.completion_token_ids[-1] == tokenizer.eos_token_id
    assert tokenizer.eos_token not in call.response["content"]


def test_max_tokens_ends_with_length(ask):
    call = ask("Write a long story about a dragon.", max_tokens=3, seed=0)
    assert call.finish_reason == "length"
    assert len(call.completion_token_ids) == 3


def test_stop_string_ends_generation_at_the_token_that_completes_it(tokenizer, ask):
    call = ask("Count from 1 to 10, separated by commas.", temperature=0, max_tokens=40, stop=["5"])
    text = call.response["content"]
    assert call.finish_reason == "stop"
    assert "5" in text
    shorter = tokenizer.decode(list(call.completion_token_ids[:-1]), skip_special_tokens=True)
    assert "5" not in shorter
    assert tokenizer.decode(list(call.completion_token_ids), skip_special_tokens=True) == text


def test_min_tokens_holds_eos_and_stop_strings_back(tokenizer, ask):
    free = ask("What is the capital of France? One word.", temperature=0, max_tokens=40)
    assert free.finish_reason == "stop"
    assert len(free.completion_token_ids) < 12
    held = ask("What is the capital of France? One word.", temperature=0, max_tokens=40, min_tokens=12, stop=["."])
    ids = held.completion_token_ids
    assert len(ids) >= 12
    assert tokenizer.eos_token_id not in ids[:12]
    assert held.params["min_tokens"] == 12


@pytest.mark.parametrize("temperature", [0, 1.5])
def test_guided_choice_replies_with_exactly_one_choice_then_eos(tokenizer, ask, teacher_forced, temperature):
    # Prefix-sharing choices ("up" is a prefix of "upward"): the tree must allow both an end and a continuation.
    choices = ["<action>up</action>", "<action>upward</action>", "<action>left</action>", "banana"]
    seen = set()
    for seed in range(6):
        call = ask(
            "Which way? Write a long essay first.",
            temperature=temperature,
            max_tokens=64,
            seed=seed,
            guided_choice=choices,
        )
        text = call.response["content"]
        assert text in choices
        assert call.finish_reason == "stop"
        ids = list(call.completion_token_ids)
        assert ids[-1] == tokenizer.eos_token_id
        assert ids[:-1] == tokenizer(text, add_special_tokens=False)["input_ids"]
        # The recorded logprobs are the model's raw ones for those tokens, not the constrained distribution's.
        expected = teacher_forced(call.prompt_token_ids, ids)
        assert call.logprobs == pytest.approx(expected, abs=2e-3)
        assert call.params["guided_choice"] == choices
        seen.add(text)
    assert len(seen) >= (1 if temperature == 0 else 2)  # sampling still samples among the choices


def test_top_k_one_is_greedy(ask):
    greedy = ask("Say something.", temperature=0, max_tokens=8)
    top1 = ask("Say something.", temperature=1.5, top_k=1, max_tokens=8, seed=99)
    assert top1.completion_token_ids == greedy.completion_token_ids


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"temperature": -1}, "temperature must lie between"),
        ({"n": 2}, "one completion per call"),
        ({"max_tokens": 0}, "max_tokens must be an integer of at least 1"),
        ({"top_p": 0}, "top_p must be above 0"),
        ({"stop": [""]}, "stop must be a non-empty string"),
        ({"min_tokens": 9, "max_tokens": 8}, r"min_tokens \(9\) cannot exceed max_tokens \(8\)"),
        ({"guided_choice": []}, "guided_choice must be a non-empty list"),
        ({"guided_choice": "yes"}, "guided_choice must be a non-empty list"),
        ({"guided_choice": ["a"], "min_tokens": 2}, "cannot be combined"),
    ],
)
def test_bad_sampling_parameters_are_one_sentence(params, fragment, ask):
    with pytest.raises(UsageError, match=fragment) as info:
        ask("Hi", **params)
    assert "\n" not in str(info.value)


def test_a_field_it_cannot_honour_is_refused_not_dropped(ask):
    with pytest.raises(RequestRefused, match=r"cannot honour 'logit_bias' \(it honours .*temperature") as info:
        ask("Hi", logit_bias={})
    assert "\n" not in str(info.value)


async def _until_queued(engine, tasks):
    """Yield to the event loop until every task has queued its request (or ended without one)."""
    while engine.queued + sum(t.done() for t in tasks) < len(tasks):
        await asyncio.sleep(0)


def test_concurrent_requests_share_one_batch_and_each_gets_its_own_result(provider, engine, tokenizer, teacher_forced):
    prompts = ["Name a fruit.", "Write a haiku about rain.", "What is 7 times 8?", "Say hi."]
    params = [
        {"max_tokens": 10, "seed": 1},
        {"max_tokens": 16, "seed": 2, "temperature": 0.7},
        {"max_tokens": 6, "temperature": 0},
        {"max_tokens": 12, "seed": 4, "top_p": 0.8},
    ] * 2
    requests = [
        ChatRequest(model="smollm2-135m", messages=({"role": "user", "content": prompts[i % 4]},), params=params[i])
        for i in range(8)
    ]

    async def together():
        # Held until all eight are queued, so they share one batch however slowly this machine runs.
        with engine.hold():
            tasks = [asyncio.ensure_future(provider.complete(r)) for r in requests]
            await _until_queued(engine, tasks)
        return await asyncio.gather(*tasks)

    before = len(engine.batch_sizes)
    calls = asyncio.run(together())
    assert list(engine.batch_sizes)[before:] == [8]
    for request, call in zip(requests, calls, strict=True):
        assert call.messages == request.messages
        assert len(call.completion_token_ids) <= request.params["max_tokens"]
        assert tokenizer.decode(list(call.completion_token_ids), skip_special_tokens=True) == call.response["content"]
        reference = teacher_forced(call.prompt_token_ids, call.completion_token_ids)
        assert max(abs(a - b) for a, b in zip(call.logprobs, reference, strict=True)) < 1e-4
    # A seeded (or greedy) request samples the same tokens batched as alone: each row has its own stream.
    for i in (0, 2):
        alone = asyncio.run(provider.complete(requests[i]))
        assert alone.completion_token_ids == calls[i].completion_token_ids
        assert calls[i + 4].completion_token_ids == calls[i].completion_token_ids


def test_a_cancelled_request_is_skipped_and_the_engine_keeps_serving(provider, engine):
    long = ChatRequest(model="smollm2-135m", messages=({"role": "user", "content": "Tell a story."},), params={})

    async def scenario():
        with engine.hold():  # the worker takes nothing until the request is cancelled
            doomed = asyncio.ensure_future(provider.complete(long))
            await _until_queued(engine, [doomed])
            doomed.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await doomed
        return await provider.complete(attrs.evolve(long, params={"max_tokens": 3, "seed": 0}))

    before = len(engine.batch_sizes)
    kept = asyncio.run(scenario())
    assert list(engine.batch_sizes)[before:] == [1]  # the cancelled 256-token request never ran
    assert len(kept.completion_token_ids) == 3
    assert kept.finish_reason == "length"


def test_a_request_cancelled_while_decoding_stops_the_generation_loop(provider, engine):
    """A timeout (or Ctrl-C) on the awaiting task reaches the decode worker: it stops at the next token."""
    # ignore_eos is not offered, so a long story with a high max_tokens keeps the decoder busy for seconds.
    long = ChatRequest(
        model="smollm2-135m",
        messages=({"role": "user", "content": "Write a very long story about a lighthouse keeper."},),
        params={"max_tokens": 4000, "temperature": 1.0, "seed": 1},
    )
    seen = {}
    original = engine.submit

    def spy(*args, **kwargs):
        seen["future"] = original(*args, **kwargs)
        return seen["future"]

    async def scenario():
        engine.submit = spy
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(provider.complete(long), 0.5)
        finally:
            del engine.submit
        began = time.perf_counter()
        await asyncio.to_thread(engine.wait_idle, 30.0)
        return time.perf_counter() - began

    idle_after = asyncio.run(scenario())
    assert idle_after < 2.0  # the worker stopped promptly, not after up to 4000 tokens
    done = seen["future"].result(timeout=0)
    assert done.finish_reason == "cancelled"
    assert len(done.completion_ids) < 4000
