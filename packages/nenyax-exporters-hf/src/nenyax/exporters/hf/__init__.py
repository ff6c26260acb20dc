"""A Nenyax exporter saving Hugging Face datasets: the exporter plugin named ``hf``."""

from nenyax.exporters.hf._version import __version__

__all__ = ["__version__"]
