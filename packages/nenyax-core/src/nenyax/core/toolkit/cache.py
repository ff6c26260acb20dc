"""Where a plugin keeps what it caches on this machine (`NENYAX_CACHE_DIR`, else ~/.cache/nenyax)."""

from __future__ import annotations

from nenyax.core.engine.cache import cache_root

__all__ = ["cache_root"]
