"""The embedded ``local`` provider: a small chat model run in-process with exact token ids and logprobs."""

from nenyax.providers.local._version import __version__

__all__ = ["__version__"]
