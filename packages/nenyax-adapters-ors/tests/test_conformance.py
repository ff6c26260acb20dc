import pytest

from nenyax.adapters.ors.adapter import OrsAdapter
from nenyax.core import default_registry
from nenyax.testing import AdapterConformance, Subject


class TestOrsConformance(AdapterConformance):
    plugin = "ors"

    @pytest.fixture
    def subject(self, ors_server):
        # ORS environments live on servers, so the examples are the ones the fixture started;
        # the registry is still the installed one (the laziness check runs in a fresh interpreter).
        # mathenv claims audited (a gold answer and a submit tool); diceenv with its answer tool named, trainable.
        examples = [f"ors:{ors_server.url}/mathenv", f"ors:{ors_server.url}/diceenv?answer_tool=roll"]
        adapter = OrsAdapter(examples=examples)
        return Subject(kind="adapter", name=self.plugin, registry=default_registry(), installed=True, instance=adapter)


def test_the_default_example_is_the_ors_sdk_quickstart_address():
    assert OrsAdapter().examples() == ["ors:http://127.0.0.1:8080/mathenv"]
