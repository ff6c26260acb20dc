"""Prime Intellect's verifiers environments as Nenyax rollout environments (``verifiers:<env id>``)."""

from nenyax.adapters.verifiers._version import __version__

__all__ = ["__version__"]
