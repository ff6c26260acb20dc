"""nenyax-acme: the Nenyax learner plugin `acme`."""

__version__ = "0.1.0"
