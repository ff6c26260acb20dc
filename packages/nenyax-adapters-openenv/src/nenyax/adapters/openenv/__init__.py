"""OpenEnv servers as Nenyax step environments (``openenv:ws://host:port``), spoken to over ``/ws``."""

from nenyax.adapters.openenv._version import __version__

__all__ = ["__version__"]
