"""HUD tasksets as Nenyax rollout environments (``hud:<module>[:<attribute>]`` or ``hud:<file.py>``)."""

from nenyax.adapters.hud._version import __version__

__all__ = ["__version__"]
