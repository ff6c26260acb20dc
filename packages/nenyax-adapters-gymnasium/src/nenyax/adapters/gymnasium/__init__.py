"""Gymnasium environments as Nenyax step environments (``gymnasium:<env id>``)."""

from nenyax.adapters.gymnasium._version import __version__

__all__ = ["__version__"]
