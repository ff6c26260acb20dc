"""nenyax-acme: the Nenyax judge plugin `acme`."""

__version__ = "0.1.0"
