"""The adapter conformance kit, its examples pointed at the servers this session started."""

import pytest

from nenyax.adapters.openenv.adapter import OpenEnvAdapter
from nenyax.core import default_registry
from nenyax.testing import AdapterConformance, Subject


class TestOpenEnvConformance(AdapterConformance):
    plugin = "openenv"

    @pytest.fixture
    def subject(self, servers):
        # An OpenEnv environment only loads while its server runs, so the examples are this session's servers:
        # the seeded game with its reference (claims audited) and the unseeded one (claims evaluable).
        adapter = OpenEnvAdapter(examples=[servers.uri("seeded", "reference=solution"), servers.uri("unseeded")])
        return Subject(kind="adapter", name=self.plugin, registry=default_registry(), installed=True, instance=adapter)
