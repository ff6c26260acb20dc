"""The learner's policy in real episodes: reasoning-gym tasks played through the engine, sampled by a fake
of tinker's `SamplingClient` (no Tinker service is reachable here) that runs the embedded model on the
prompt ids it is sent, so the replies, ids and logprobs recorded are real ones."""

import asyncio

import pytest
import tinker
from support import ENV_URI, scored
from tinker_fake_sdk import BASE_MODEL, embedded_tokenizer

from nenyax.core import Status, load
from nenyax.core.contract.chat import ChatRequest
from nenyax.core.errors import RequestRefused
from nenyax.core.plugins.registry import default_registry


def make(**options):
    return default_registry().create("learner", "tinker", model=BASE_MODEL, **options)


def test_episodes_record_the_rendered_prompt_ids_and_the_samplers_tokens(fake_service):
    learner = make(max_tokens=10, temperature=0.7)
    policy = learner.policy()
    groups = load(ENV_URI).groups(policy, 2, n=2)
    tokenizer = embedded_tokenizer()
    requests = policy.sampler.requests
    assert len(requests) == 4
    calls = [c for g in groups for t in g.trajectories for c in t.model_calls]
    assert len(calls) == 4
    for group in groups:
        assert group.policy.kind == "tinker"
        assert group.policy.revision == "step-0"
        assert all(t.status is Status.OK for t in group.trajectories)
    for call in calls:
        # The prompt is the transcript in the base model's chat template, exactly what was sampled from.
        text = tokenizer.apply_chat_template(list(call.messages), add_generation_prompt=True, tokenize=False)
        assert list(call.prompt_token_ids) == tokenizer(text, add_special_tokens=False)["input_ids"]
        assert list(call.prompt_token_ids) in [ids for ids, _, _ in requests]
        assert 0 < len(call.completion_token_ids) <= 10
        assert len(call.logprobs) == len(call.completion_token_ids)
        assert all(lp <= 0.0 for lp in call.logprobs)
        assert call.response["content"] == tokenizer.decode(list(call.completion_token_ids), skip_special_tokens=True)
        assert call.provider == "tinker"
        assert call.model == BASE_MODEL
        assert call.finish_reason in ("stop", "length")
    params = requests[0][2]
    assert isinstance(params, tinker.SamplingParams)
    assert (params.max_tokens, params.temperature, params.top_k) == (10, 0.7, -1)

    # What the policy recorded is what the learner trains on: the Datums end with the sampled tokens.
    metrics = learner.update([scored(g, [1.0, 0.0]) for g in groups])
    [(data, _, _)] = fake_service.made[0].training_clients[0].forward_backward_calls
    assert metrics["datums"] == 4
    for datum, call in zip(data, calls, strict=True):
        n = len(call.completion_token_ids)
        assert datum.loss_fn_inputs["target_tokens"].to_numpy().tolist()[-n:] == list(call.completion_token_ids)


def test_a_sampling_failure_is_an_infra_error_not_a_score(fake_service):
    policy = make(max_tokens=4).policy()
    policy.sampler.fail = ConnectionError("sampler unreachable")
    trajectory = load(ENV_URI).rollout(policy)
    assert trajectory.status is Status.INFRA_ERROR
    assert trajectory.judgment is None
    assert "did not sample a reply" in (trajectory.error or "")


def test_the_learners_parameters_win_and_unknown_fields_are_refused(fake_service):
    policy = make(max_tokens=6, temperature=0.3).policy()
    asked = ChatRequest(
        model="m", messages=({"role": "user", "content": "Say hi."},), params={"temperature": 1.5, "max_tokens": 2}
    )
    call = asyncio.run(policy.send(asked))
    sent = policy.sampler.requests[-1][2]
    assert (sent.temperature, sent.max_tokens) == (0.3, 2)  # the learner's temperature; the loop's own max_tokens
    assert call.requested_params == {"temperature": 1.5, "max_tokens": 2}
    with pytest.raises(RequestRefused, match="cannot honour 'logit_bias'"):
        asyncio.run(policy.send(ChatRequest(model="m", messages=asked.messages, params={"logit_bias": {"1": 2}})))
