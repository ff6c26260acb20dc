"""EleutherAI's lm-evaluation-harness tasks as Nenyax rollout environments (``lm_eval:<task>``)."""

from nenyax.adapters.lm_eval._version import __version__

__all__ = ["__version__"]
