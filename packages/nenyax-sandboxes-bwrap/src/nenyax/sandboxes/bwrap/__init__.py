"""A Nenyax sandbox backend on bubblewrap (``bwrap``): the sandbox plugin named ``bwrap``."""

from nenyax.sandboxes.bwrap._version import __version__

__all__ = ["__version__"]
