"""nenyax-acme: the Nenyax exporter plugin `acme`."""

__version__ = "0.1.0"
