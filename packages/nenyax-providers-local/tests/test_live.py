"""A live model: the model object a trainer holds in this process, sampled with its weights as they are
at each call (no copy, no load), exact ids and logprobs, concurrent requests in one batch; and an Endpoint
over it playing a real environment (reasoning-gym), every call recorded with the revision it names."""

from __future__ import annotations

import asyncio

import pytest
import torch

from nenyax.core import Endpoint, load
from nenyax.core.contract.chat import ChatRequest
from nenyax.core.errors import UsageError
from nenyax.providers.local.provider import LocalProvider


@pytest.fixture(scope="module")
def trainer_model(engine):
    """A model and tokenizer loaded by "the trainer" (its own objects, not the engine's)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(engine.folder, local_files_only=True, dtype=torch.float32)
    return model, AutoTokenizer.from_pretrained(engine.folder, local_files_only=True)


def _forced(model, prompt, completion):
    ids = torch.tensor([[*prompt, *completion]])
    with torch.inference_mode():
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
    return [float(logprobs[len(prompt) - 1 + i, token]) for i, token in enumerate(completion)]


def _ask(provider, content, **params):
    request = ChatRequest(model="policy", messages=({"role": "user", "content": content},), params=params)
    return asyncio.run(provider.complete(request))


def test_a_live_model_is_sampled_with_its_weights_as_they_are_now(trainer_model):
    model, tokenizer = trainer_model
    step = [0]
    provider = LocalProvider.live(model, tokenizer, name="policy", revision=lambda: f"trainer@{step[0]}")
    before = _ask(provider, "What is 7 times 8?", max_tokens=8, temperature=0)
    assert before.fingerprint == "trainer@0"
    assert before.completion_token_ids
    assert (
        max(
            abs(a - b)
            for a, b in zip(
                before.logprobs, _forced(model, before.prompt_token_ids, before.completion_token_ids), strict=True
            )
        )
        < 1e-4
    )
    final_norm = model.model.norm.weight
    saved = final_norm.detach().clone()
    try:
        with torch.no_grad():  # an optimizer step, as far as the sampler can tell: the same object changed
            final_norm.mul_(0.25)
        step[0] = 1
        after = _ask(provider, "What is 7 times 8?", max_tokens=8, temperature=0)
        assert after.fingerprint == "trainer@1"
        recomputed = _forced(model, after.prompt_token_ids, after.completion_token_ids)
        assert max(abs(a - b) for a, b in zip(after.logprobs, recomputed, strict=True)) < 1e-4
        assert after.logprobs[0] != pytest.approx(before.logprobs[0], abs=1e-3)  # not a copy of the old weights
    finally:
        with torch.no_grad():
            final_norm.copy_(saved)


def test_concurrent_requests_to_a_live_model_share_a_batch(trainer_model):
    model, tokenizer = trainer_model
    provider = LocalProvider.live(model, tokenizer, name="policy")
    engine = provider.engine("policy")
    requests = [
        ChatRequest(
            model="policy",
            messages=({"role": "user", "content": f"Count to {n}."},),
            params={"max_tokens": 6, "seed": n},
        )
        for n in range(4)
    ]

    async def together():
        with engine.hold():
            tasks = [asyncio.ensure_future(provider.complete(r)) for r in requests]
            while engine.queued < len(tasks):
                await asyncio.sleep(0.01)
        return await asyncio.gather(*tasks)

    calls = asyncio.run(together())
    assert list(engine.batch_sizes)[-1] == 4
    assert all(c.fingerprint == "live:policy" for c in calls)
    with pytest.raises(UsageError, match=r"^This provider serves the live model 'policy' only, not 'other'\.$"):
        provider.engine("other")


def test_an_endpoint_over_a_live_model_plays_an_environment_and_records_exact_ids(trainer_model):
    model, tokenizer = trainer_model
    provider = LocalProvider.live(model, tokenizer, name="policy", revision=lambda: "trainer@7")
    endpoint = Endpoint.over(provider, "policy", max_tokens=24, temperature=0)
    traj = load("reasoning_gym:basic_arithmetic?size=3").rollout(endpoint)
    (call,) = traj.model_calls
    assert call.fingerprint == "trainer@7"
    assert traj.policy.provider == "local"
    assert tokenizer.decode(list(call.completion_token_ids), skip_special_tokens=True) == call.response["content"]
    with pytest.raises(UsageError, match=r"serves a provider object of this process \(Endpoint\.over\)"):
        endpoint.config()
