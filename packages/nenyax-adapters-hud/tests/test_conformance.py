"""The adapter conformance kit, on the tasksets shipped with the adapter and a task file of the tests'."""

import pytest
from support import task_uri

from nenyax.adapters.hud.adapter import EXAMPLES, HudAdapter
from nenyax.core import default_registry
from nenyax.testing import AdapterConformance, Subject

pytestmark = pytest.mark.hud


class TestHudConformance(AdapterConformance):
    plugin = "hud"

    @pytest.fixture
    def subject(self):
        adapter = HudAdapter(examples=[*EXAMPLES, task_uri("odd", "words")])
        return Subject(kind="adapter", name=self.plugin, registry=default_registry(), installed=True, instance=adapter)


def test_the_default_examples_are_the_shipped_tasksets():
    assert HudAdapter().examples() == [
        "hud:nenyax.adapters.hud.example:arithmetic",
        "hud:nenyax.adapters.hud.example:haiku",
    ]
