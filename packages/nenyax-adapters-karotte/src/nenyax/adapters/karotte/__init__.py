"""Karotte environments as Nenyax task environments (``karotte:<environment folder>[?task=...]``)."""

from nenyax.adapters.karotte._version import __version__

__all__ = ["__version__"]
