"""nenyax-acme: the Nenyax adapter plugin `acme`."""

__version__ = "0.1.0"
