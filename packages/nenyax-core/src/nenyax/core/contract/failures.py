"""Mode-neutral failure helpers: which errors stop a run, and how a failure is said in a record.

Both episode loops (step and native) and the recorder use them; each loop classifies the rest of
its failures into a `Status` itself.
"""

from __future__ import annotations

from nenyax.core.errors import PluginLoadError, UsageError

ABORT = (UsageError, PluginLoadError)
"""Errors that are nobody's episode: the user's configuration is wrong, so the run stops and says so."""


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, for a trajectory's (or a call's) error sentence."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
