"""The adapter conformance kit, on the shipped quiz."""

import pytest

from nenyax.testing import AdapterConformance

pytestmark = pytest.mark.agentenv


class TestAgentEnvConformance(AdapterConformance):
    plugin = "agentenv"
