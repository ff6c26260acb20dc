"""Stand-ins for harbor's base classes where harbor is not installed (it needs Python >= 3.12).

They let this distribution's modules import anywhere (Python 3.11 included, as every other nenyax
distribution does); nothing made from them runs, since the adapter refuses to load without harbor.
"""

from __future__ import annotations

from typing import Any

from nenyax.core import UsageError

WHY = "harbor is not installed (it needs Python >= 3.12): pip install harbor."


class _Unavailable:
    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        raise UsageError(WHY)


class BaseEnvironment(_Unavailable):
    """harbor's `harbor.environments.base.BaseEnvironment`, absent here."""


class Terminus2(_Unavailable):
    """harbor's terminus-2 agent, absent here."""


class ExecResult(_Unavailable):
    """harbor's `ExecResult`, absent here."""


class EnvironmentCapabilities(_Unavailable):
    """harbor's `EnvironmentCapabilities`, absent here."""
