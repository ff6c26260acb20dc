"""pytest base classes that plugin tests subclass (imports pytest)."""

from nenyax.testing.suites.adapter import AdapterConformance

__all__ = ["AdapterConformance"]
