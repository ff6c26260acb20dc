"""The sandbox kit against a real engine: every claimed capability proven, containment included."""

import pytest

from nenyax.testing import conformance_suite

pytestmark = pytest.mark.engine


class TestDockerConformance(conformance_suite("sandbox")):
    plugin = "docker"
