"""nenyax-acme: the Nenyax sandbox plugin `acme`."""

__version__ = "0.1.0"
