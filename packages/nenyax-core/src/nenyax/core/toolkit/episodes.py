"""Playing one episode where a backend's worker runs (the runner loads here: the recording proxy with it)."""

from __future__ import annotations

from nenyax.core.engine.runner import run_episode

__all__ = ["run_episode"]
