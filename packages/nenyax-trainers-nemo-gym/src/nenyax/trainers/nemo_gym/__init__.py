"""Any Nenyax environment as a NeMo Gym agent server."""

from nenyax.trainers.nemo_gym._version import __version__

__all__ = ["__version__"]
