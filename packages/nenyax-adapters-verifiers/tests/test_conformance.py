"""The adapter conformance kit, on the demo shipped with the adapter and the tests' gsm8k-style env.

The default example (the demo) builds with whichever API is installed; the gsm8k one of the installed
API is added, so the kit measures an environment shaped like the Hub's too.
"""

import pytest
from conftest import APIS

from nenyax.adapters.verifiers.adapter import EXAMPLE, VerifiersAdapter
from nenyax.core import default_registry
from nenyax.testing import AdapterConformance, Subject


class TestVerifiersConformance(AdapterConformance):
    plugin = "verifiers"

    @pytest.fixture
    def subject(self):
        gsm8k = "verifiers:vf-gsm8k-legacy?num_examples=3" if APIS["legacy"] else "verifiers:vf-gsm8k-v1?num_tasks=2"
        adapter = VerifiersAdapter(examples=[EXAMPLE, gsm8k])
        return Subject(kind="adapter", name=self.plugin, registry=default_registry(), installed=True, instance=adapter)


def test_the_default_example_is_the_shipped_demo():
    assert VerifiersAdapter().examples() == ["verifiers:nenyax.adapters.verifiers.demo:load_environment"]
