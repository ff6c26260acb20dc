"""Nenyax learners in torch on a local open model: grpo, dapo, rloo, gspo, rft and dpo."""

from nenyax.learners.torch._version import __version__

__all__ = ["__version__"]
