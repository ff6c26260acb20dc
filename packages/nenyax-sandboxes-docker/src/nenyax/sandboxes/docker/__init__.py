"""A Nenyax sandbox backend on the Docker Engine API (Docker, or podman's compatible service): the plugin ``docker``."""

from nenyax.sandboxes.docker._version import __version__

__all__ = ["__version__"]
