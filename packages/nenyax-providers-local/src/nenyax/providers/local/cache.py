"""Where converted models live, how they are published safely, and how weights are fingerprinted."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from nenyax.core.toolkit.cache import cache_root

WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth")
"""Weight files, by preference: the first pattern that matches a folder is the one hashed."""


def models_dir() -> Path:
    """The folder holding converted models, one subfolder per source file hash."""
    return cache_root() / "models"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def weight_files(folder: Path) -> list[Path]:
    """A model folder's weight files in a stable order (empty when it holds none)."""
    for pattern in WEIGHT_PATTERNS:
        found = sorted(folder.glob(pattern))
        if found:
            return found
    return []


def weights_digest(folder: Path) -> str:
    """``sha256:<hex>`` of a folder's weight files concatenated in name order.

    For the usual single ``model.safetensors`` this equals ``sha256sum model.safetensors``, so
    anyone can check a recorded revision against a folder.
    """
    digest = hashlib.sha256()
    for path in weight_files(folder):
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 22):
                digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


ABANDONED_AFTER_S = 3600.0
"""A temp folder this old was left by a builder that died (a conversion takes about a minute)."""


def _sweep_abandoned(final: Path) -> None:
    # A killed conversion leaves a half-written ~500 MB temp folder; reclaim old ones. Young ones
    # may belong to a builder that is still running, so they stay.
    cutoff = time.time() - ABANDONED_AFTER_S
    for leftover in final.parent.glob(f".{final.name}.tmp-*"):
        with contextlib.suppress(OSError):
            if leftover.stat().st_mtime < cutoff:
                shutil.rmtree(leftover, ignore_errors=True)


def publish_once(final: Path, build: Callable[[Path], None]) -> bool:
    """Make `final` exist by running `build` on a fresh sibling temp folder, then renaming it into place.

    Returns True when this call built it, False when it already existed or a concurrent builder
    (another thread or process) published first. A reader therefore never sees a half-written
    folder: `final` appears complete or not at all.
    """
    if final.is_dir():
        return False
    final.parent.mkdir(parents=True, exist_ok=True)
    _sweep_abandoned(final)
    # A sibling of `final` so the rename stays on one filesystem (and so is atomic).
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-", dir=final.parent))
    try:
        build(tmp)
        try:
            tmp.rename(final)
        except OSError:
            if final.is_dir():  # lost the race: the winner's folder is as good as ours
                return False
            raise
        return True
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
