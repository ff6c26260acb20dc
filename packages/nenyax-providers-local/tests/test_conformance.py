"""The provider kit against the real ``local`` provider: one real chat call and stream of SmolLM2-135M."""

from nenyax.testing import conformance_suite


class TestLocalConformance(conformance_suite("provider")):  # type: ignore[misc]
    plugin = "local"
