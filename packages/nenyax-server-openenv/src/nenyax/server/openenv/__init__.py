"""``nenyax serve``: any Nenyax environment as a standard OpenEnv server (step mode turn by turn; rollout
and task mode loop-owning, the episode run server-side against a policy URL the client names: `loops`).

from nenyax.server.openenv import serve
serve("reasoning_gym:basic_arithmetic", port=8000)   # blocks until SIGTERM / SIGINT

`running(env, host, port)` is the same server as an async context manager (tests, embedding).
"""

from nenyax.server.openenv._version import __version__
from nenyax.server.openenv.app import build_app, running, serve

__all__ = ["__version__", "build_app", "running", "serve"]
