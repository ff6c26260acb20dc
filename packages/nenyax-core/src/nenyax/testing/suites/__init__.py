"""pytest base classes that plugin tests subclass (imports pytest)."""

from nenyax.testing.suites.adapter import AdapterConformance, conformance_suite

__all__ = ["AdapterConformance", "conformance_suite"]
