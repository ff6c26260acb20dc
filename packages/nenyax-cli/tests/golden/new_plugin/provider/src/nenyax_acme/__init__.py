"""nenyax-acme: the Nenyax provider plugin `acme`."""

__version__ = "0.1.0"
