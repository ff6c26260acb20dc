"""nenyax-acme: the Nenyax tracer plugin `acme`."""

__version__ = "0.1.0"
