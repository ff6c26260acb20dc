"""The adapter conformance kit, on the mcqa and reasoning_gym servers the fixtures started.

The kit asks the adapter for `examples()`; its default ones start their own servers, so here the
subject is the installed plugin with an adapter whose examples name the fixtures' servers.
"""

import pytest
from nemo_gym_helpers import uri

from nenyax.adapters.nemo_gym.adapter import NemoGymAdapter
from nenyax.core import default_registry
from nenyax.testing import AdapterConformance, Subject


class TestNemoGymConformance(AdapterConformance):
    plugin = "nemo_gym"

    @pytest.fixture
    def subject(self, mcqa, reasoning_gym):
        adapter = NemoGymAdapter(examples=[uri(mcqa), uri(reasoning_gym)])
        return Subject(kind="adapter", name=self.plugin, registry=default_registry(), installed=True, instance=adapter)
