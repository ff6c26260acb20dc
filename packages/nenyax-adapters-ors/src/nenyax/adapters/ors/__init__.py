"""ORS (Open Reward Standard) environment servers as Nenyax step environments (``ors:http://host:port/<env>``)."""

from nenyax.adapters.ors._version import __version__

__all__ = ["__version__"]
