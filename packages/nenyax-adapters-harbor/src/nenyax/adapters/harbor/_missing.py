"""Stand-ins for harbor's base classes where harbor is not installed (it needs Python >= 3.12).

They let this distribution's modules import anywhere (Python 3.11 included, as every other nenyax
distribution does); nothing made from them runs, since the adapter refuses to load without harbor.
Only harbor being absent gets them: harbor installed but failing to import (a dependency another
package pinned too old) is said in one sentence, never hidden behind "not installed".
"""

from __future__ import annotations

import sys
from typing import Any

from nenyax.core import UsageError
from nenyax.core.toolkit.imports import absent, broken_import

SUPPORTED = ">=0.23,<0.27"
"""The harbor versions this adapter is tested on (the README's range)."""

BROKEN_HINT = (
    "harbor is installed but cannot run here; check that its dependencies fit it "
    f"(pip install --force-reinstall 'harbor{SUPPORTED}'), or give harbor an environment of its own"
)


def not_installed(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> str:
    """The sentence for harbor being absent, with the install that works on this Python."""
    if version < (3, 12):
        here = ".".join(str(part) for part in version)
        return (
            f"harbor tasks need the harbor package, which needs Python >= 3.12 (this is Python {here}): "
            f"in a Python 3.12 environment, pip install nenyax-adapters-harbor 'harbor{SUPPORTED}'."
        )
    return f"harbor tasks need the harbor package, which is not installed: pip install 'harbor{SUPPORTED}'."


def absent_or_raise(exc: ImportError, module: str) -> None:
    """Return when harbor itself is not installed (the stand-ins apply); raise one sentence when it is
    installed but `module` does not import."""
    if not absent(exc, "harbor"):
        raise broken_import(module, exc, BROKEN_HINT) from exc


class _Unavailable:
    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        raise UsageError(not_installed())


class BaseEnvironment(_Unavailable):
    """harbor's `harbor.environments.base.BaseEnvironment`, absent here."""


class Terminus2(_Unavailable):
    """harbor's terminus-2 agent, absent here."""


class ExecResult(_Unavailable):
    """harbor's `ExecResult`, absent here."""


class EnvironmentCapabilities(_Unavailable):
    """harbor's `EnvironmentCapabilities`, absent here."""
