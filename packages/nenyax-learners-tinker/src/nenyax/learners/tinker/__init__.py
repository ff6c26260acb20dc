"""A Nenyax learner on the Tinker service (hosted LoRA through the ``tinker`` SDK): the learner named ``tinker``."""

from nenyax.learners.tinker._version import __version__

__all__ = ["__version__"]
