"""The ``nenyax`` command line: discovers whatever plugins are installed."""

from nenyax.cli._version import __version__

__all__ = ["__version__"]
