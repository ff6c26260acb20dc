"""Nenyax's user cache folder, shared by every distribution (converted models, `check` results)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$NENYAX_CACHE_DIR``, else ``$XDG_CACHE_HOME/nenyax``, else ``~/.cache/nenyax``."""
    explicit = os.environ.get("NENYAX_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "nenyax"
    return Path.home() / ".cache" / "nenyax"
