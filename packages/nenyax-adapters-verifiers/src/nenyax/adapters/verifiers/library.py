"""Which verifiers is installed, and which of its two APIs it offers.

verifiers 0.3.x ships both the legacy API (`verifiers.legacy`, aliased at ``import verifiers``) and v1
(`verifiers.v1`); 0.4.x ships only v1. What an environment is made of (a legacy `Environment` or a v1
`Taskset`) decides which API runs it; this module only says what is there.
"""

from __future__ import annotations

import importlib.util
from importlib import metadata

import attrs

from nenyax.core import UsageError

INSTALL = "pip install verifiers"


@attrs.frozen
class Library:
    """The installed verifiers distribution."""

    version: str
    legacy: bool
    """`verifiers.legacy` is importable (0.3.x)."""
    v1: bool
    """The v1 API this adapter drives is there: `verifiers.v1` of 0.4 or later (0.3.x ships an earlier v1,
    whose `TaskData`, `Episode` and loop differ, so v1 tasksets are run with 0.4 only)."""


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def installed() -> Library:
    """The installed verifiers; without one, say how to install it in one sentence."""
    try:
        version = metadata.version("verifiers")
    except metadata.PackageNotFoundError:
        version = ""
    if not version or not _has("verifiers"):
        msg = f"verifiers environments need the verifiers package: {INSTALL} (0.3.x for the legacy API, 0.4 for v1)."
        raise UsageError(msg)
    return Library(version=version, legacy=_has("verifiers.legacy"), v1=_at_least_0_4(version) and _has("verifiers.v1"))


def _at_least_0_4(version: str) -> bool:
    parts = version.split(".")
    try:
        return (int(parts[0]), int(parts[1])) >= (0, 4)
    except (IndexError, ValueError):
        return True  # an unusual version string (a source checkout): take the API at its word


def need_v1(library: Library, what: str) -> None:
    """Raise one sentence when `what` is a v1 taskset and this verifiers' v1 is not the one driven here."""
    if not library.v1:
        msg = (
            f"{what} is a verifiers v1 taskset, which Nenyax runs with verifiers 0.4 "
            f"(installed: {library.version}): pip install 'verifiers>=0.4,<0.5'."
        )
        raise UsageError(msg)


def need_legacy(library: Library, what: str) -> None:
    """Raise one sentence when `what` needs the legacy API and this verifiers has none."""
    if not library.legacy:
        msg = (
            f"{what} uses the legacy verifiers API, which verifiers {library.version} no longer ships: "
            "pip install 'verifiers>=0.3,<0.4'."
        )
        raise UsageError(msg)
