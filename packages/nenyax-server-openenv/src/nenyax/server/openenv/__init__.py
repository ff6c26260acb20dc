"""``nenyax serve``: any Nenyax step-mode environment as a standard OpenEnv server.

from nenyax.server.openenv import serve
serve("reasoning_gym:basic_arithmetic", port=8000)   # blocks until SIGTERM / SIGINT

`running(env, host, port)` is the same server as an async context manager (tests, embedding).
"""

from nenyax.server.openenv._version import __version__
from nenyax.server.openenv.app import build_app, running, serve

__all__ = ["__version__", "build_app", "running", "serve"]
