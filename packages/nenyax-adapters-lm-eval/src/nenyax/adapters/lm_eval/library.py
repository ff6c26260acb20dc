"""Whether lm-eval is installed, and which release: every other module imports it lazily, after this."""

from __future__ import annotations

import importlib.util
from importlib import metadata

from nenyax.core import UsageError

INSTALL = "pip install lm-eval"


def installed() -> str:
    """The installed lm-eval's version; without one, say how to install it in one sentence."""
    try:
        version = metadata.version("lm-eval")
    except metadata.PackageNotFoundError:
        version = ""
    try:
        found = importlib.util.find_spec("lm_eval") is not None
    except ModuleNotFoundError:
        found = False
    if not version or not found:
        raise UsageError(f"lm-evaluation-harness tasks need the lm-eval package: {INSTALL}.")
    return version
