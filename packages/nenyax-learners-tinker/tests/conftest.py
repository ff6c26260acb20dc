"""Shared fixtures: the fake tinker SDK (no Tinker service is reachable here) and real trajectories.

The trajectories are made by the real engine: reasoning-gym arithmetic tasks played by the embedded model
(``local:smollm2-135m``) through an `Endpoint`, which records each call's token ids and sampler logprobs.
"""

import pytest
import tinker_fake_sdk  # beside the tests, on `pythonpath`
from support import ENV_URI


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def fake_service(monkeypatch, tmp_path):
    """``tinker.ServiceClient`` replaced by the fake (its checkpoint store in the test's folder), a key set."""
    tinker_fake_sdk.install(monkeypatch, tmp_path / "fake-tinker-store")
    monkeypatch.setenv("TINKER_API_KEY", "tml-test-key")
    return tinker_fake_sdk.FakeServiceClient


@pytest.fixture(scope="session")
def endpoint_groups():
    """Two groups of three episodes each, played by the embedded model through the real engine."""
    from nenyax.core import Endpoint, load

    env = load(ENV_URI)
    endpoint = Endpoint("local:smollm2-135m", temperature=1.0, max_tokens=12)
    groups = env.groups(endpoint, 2, n=3)
    assert len(groups) == 2
    assert all(len(g.trajectories) == 3 for g in groups)
    return groups
