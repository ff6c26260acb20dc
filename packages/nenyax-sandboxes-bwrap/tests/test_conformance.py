"""The sandbox kit against the real bwrap backend: every capability it claims, the containment cases included."""

from nenyax.testing import conformance_suite


class TestBwrapConformance(conformance_suite("sandbox")):  # type: ignore[misc]
    plugin = "bwrap"
