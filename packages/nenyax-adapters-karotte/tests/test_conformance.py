"""The adapter conformance kit, on one task of the shipped example (the kit checks its tier: a dozen karotte
runs; tests/test_cli.py checks both tasks through the CLI)."""

import pytest
from support import EXAMPLE

from nenyax.adapters.karotte.adapter import KarotteAdapter
from nenyax.core import default_registry
from nenyax.testing import AdapterConformance, Subject

pytestmark = pytest.mark.podman


class TestKarotteConformance(AdapterConformance):
    plugin = "karotte"

    @pytest.fixture
    def subject(self):
        adapter = KarotteAdapter(examples=[f"karotte:{EXAMPLE}?task=count-words"])
        return Subject(kind="adapter", name=self.plugin, registry=default_registry(), installed=True, instance=adapter)


def test_the_default_example_is_the_shipped_environment():
    assert KarotteAdapter().examples() == [f"karotte:{EXAMPLE}"]
