"""The provider behind `Endpoint`, found by name through the registry, used as a policy on a real environment."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import attrs
import pytest

from nenyax.core import Endpoint, Status, UsageError, load
from nenyax.core.contract.chat import ChatRequest
from nenyax.core.contract.serde import converter
from nenyax.core.plugins.registry import Registry, default_registry
from nenyax.providers.local.provider import LocalProvider


def test_discovered_by_name_through_the_entry_point():
    entry = default_registry().get("provider", "local")
    assert entry.distribution == "nenyax-providers-local"
    assert entry.spec.factory == "nenyax.providers.local.provider:LocalProvider"
    # The options every provider accepts (KINDS["provider"].options) are taken and ignored; any other is refused.
    created = Registry().create("provider", "local", base_url="http://unused", api_key="unused", max_batch=2)
    assert isinstance(created, LocalProvider)
    assert created.max_batch == 2
    with pytest.raises(UsageError, match=r"The provider 'local' takes no option 'timeout'; it takes device, dtype"):
        Registry().create("provider", "local", timeout=5)


def test_discovery_imports_nothing_heavy():
    code = (
        "import sys; from nenyax.core.plugins.registry import Registry; "
        "Registry().names('provider'); "
        "print(sorted(m for m in ('torch', 'transformers', 'nenyax.providers.local.provider') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_endpoint_on_reasoning_gym_records_tokens_logprobs_and_model_path(engine, tokenizer):
    env = load("reasoning_gym:basic_arithmetic")
    endpoint = Endpoint("local:smollm2-135m", max_tokens=24, seed=7)
    trajectory = env.rollout(endpoint, task=env.task_ids()[0])
    assert trajectory.status is Status.OK, trajectory.error
    assert trajectory.judgment is not None
    assert trajectory.model_calls
    for call in trajectory.model_calls:
        assert call.provider == "local"
        assert call.model == "smollm2-135m"
        assert call.prompt_token_ids
        assert call.completion_token_ids
        assert len(call.logprobs) == len(call.completion_token_ids) <= 24
        assert tokenizer.decode(list(call.completion_token_ids), skip_special_tokens=True) == call.response["content"]
    assert trajectory.steps[0].text == trajectory.model_calls[0].response["content"]
    policy = trajectory.policy
    assert (policy.kind, policy.provider, policy.model) == ("endpoint", "local", "smollm2-135m")
    assert policy.revision == engine.revision
    assert policy.revision.startswith("sha256:")
    assert endpoint.provider.engine("smollm2-135m") is engine  # one loaded model per process, shared
    # The recorded call survives the trajectory's JSON round trip with its ids and logprobs.
    again = converter.structure(converter.unstructure(trajectory), type(trajectory))
    assert again.model_calls[0].completion_token_ids == trajectory.model_calls[0].completion_token_ids
    assert again.model_calls[0].logprobs == trajectory.model_calls[0].logprobs


def test_a_local_folder_serves_the_same_weights(engine):
    folder_provider = LocalProvider()
    request = ChatRequest(
        model=str(engine.folder), messages=({"role": "user", "content": "Hi"},), params={"max_tokens": 4, "seed": 1}
    )
    by_path = asyncio.run(folder_provider.complete(request))
    by_name = asyncio.run(LocalProvider().complete(attrs.evolve(request, model="smollm2-135m")))
    assert by_path.completion_token_ids == by_name.completion_token_ids
    assert by_path.fingerprint == by_name.fingerprint == engine.revision
    asyncio.run(folder_provider.aclose())
