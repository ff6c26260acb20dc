"""Writing an export atomically: a file or folder that appears whole, or not at all."""

from __future__ import annotations

from nenyax.core.engine.export_files import PartialDir, PartialFile

__all__ = ["PartialDir", "PartialFile"]
