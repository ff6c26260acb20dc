"""NeMo Gym resources servers as Nenyax step environments (``nemo_gym:http://host:port`` or ``nemo_gym:<server>``)."""

from nenyax.adapters.nemo_gym._version import __version__

__all__ = ["__version__"]
