"""reasoning-gym's procedural datasets as Nenyax step environments (``reasoning_gym:<dataset>``)."""

from nenyax.adapters.reasoning_gym._version import __version__

__all__ = ["__version__"]
