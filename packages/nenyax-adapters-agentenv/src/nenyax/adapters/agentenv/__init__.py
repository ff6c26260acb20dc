"""AgentEnv bundles as Nenyax task environments (``agentenv:<bundle folder or installed bundle>[?task=...]``)."""

from nenyax.adapters.agentenv._version import __version__

__all__ = ["__version__"]
