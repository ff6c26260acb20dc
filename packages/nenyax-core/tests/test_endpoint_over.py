"""`Endpoint.over`: an Endpoint over a provider object made in this process (a trainer's live model),
used as given, never rebuilt from the registry by name, and never written as a config."""

from __future__ import annotations

import pytest

from nenyax.core import Endpoint
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry


class Named:
    """A provider object of this process (no registry knows it)."""

    name = "trainer"

    async def complete(self, request):
        raise NotImplementedError

    async def aclose(self):
        """Nothing to release."""


def test_an_endpoint_over_a_provider_object_uses_that_object_and_has_no_config():
    provider = Named()
    endpoint = Endpoint.over(provider, "policy", temperature=0.5, registry=Registry.from_plugins())
    assert endpoint.provider is provider  # not made by name: the empty registry would have refused
    assert (endpoint.provider_name, endpoint.model, endpoint.params) == ("trainer", "policy", {"temperature": 0.5})
    with pytest.raises(UsageError, match=r"^Endpoint\(trainer:policy\) serves a provider object of this process"):
        endpoint.config()
    assert Endpoint("openai:m").config() == {"model": "openai:m"}  # an endpoint made by name keeps its config
