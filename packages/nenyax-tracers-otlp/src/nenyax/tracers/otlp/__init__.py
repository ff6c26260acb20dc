"""Nenyax tracer presets over OTLP/HTTP: ``otlp``, ``langfuse``, ``phoenix``, ``mlflow``, ``wandb``."""

from nenyax.tracers.otlp._version import __version__

__all__ = ["__version__"]
