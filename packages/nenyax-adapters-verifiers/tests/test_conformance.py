"""The adapter conformance kit, on the demo shipped with the adapter and (legacy) the tests' gsm8k-style env.

The default example (the demo) builds with whichever API is installed. With the legacy API the gsm8k env
is added, so the kit measures an environment shaped like the Hub's too; with v1 it is not, since every v1
episode starts a harness process (a check of it costs about a minute) and `test_v1.py` checks that env's
tier already.
"""

import pytest
from support import APIS

from nenyax.adapters.verifiers.adapter import EXAMPLE, VerifiersAdapter
from nenyax.core import default_registry
from nenyax.testing import AdapterConformance, Subject


class TestVerifiersConformance(AdapterConformance):
    plugin = "verifiers"

    @pytest.fixture
    def subject(self):
        examples = [EXAMPLE, "verifiers:vf-gsm8k-legacy?num_examples=3"] if APIS["legacy"] else [EXAMPLE]
        adapter = VerifiersAdapter(examples=examples)
        return Subject(kind="adapter", name=self.plugin, registry=default_registry(), installed=True, instance=adapter)


def test_the_default_example_is_the_shipped_demo():
    assert VerifiersAdapter().examples() == ["verifiers:nenyax.adapters.verifiers.demo:load_environment"]
