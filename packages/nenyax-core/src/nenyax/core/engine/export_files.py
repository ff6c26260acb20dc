"""Destinations an export writes beside, then moves into place whole: a killed export never leaves half a file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from nenyax.core.errors import UsageError


class PartialFile:
    """A file written beside its destination and moved there whole at `finish` (a killed export leaves none)."""

    def __init__(self, destination: str | Path) -> None:
        """Prepare to write `destination`; refuse one whose folder cannot be made, in one sentence."""
        self.destination = Path(destination)
        if self.destination.is_dir():
            raise UsageError(f"{self.destination} is a directory; name a file to export to.")
        try:
            self.destination.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"Cannot create {self.destination.parent} ({exc.strerror}); name another --out.") from exc
        self.partial = self.destination.with_name(f".{self.destination.name}.partial-{os.getpid()}")

    def finish(self) -> str:
        """Move the written file to its destination; return the destination."""
        os.replace(self.partial, self.destination)
        return str(self.destination)

    def drop(self) -> None:
        """Remove the partial file, if any."""
        self.partial.unlink(missing_ok=True)


class PartialDir:
    """A folder (a saved dataset) made beside its destination and moved there whole at `finish`."""

    def __init__(self, destination: str | Path) -> None:
        """Prepare to make `destination`; refuse a file in its place, in one sentence."""
        self.destination = Path(destination)
        if self.destination.exists() and not self.destination.is_dir():
            raise UsageError(f"{self.destination} is a file; name a folder to save the dataset in.")
        try:
            self.destination.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"Cannot create {self.destination.parent} ({exc.strerror}); name another --out.") from exc
        self.partial = self.destination.with_name(f".{self.destination.name}.partial-{os.getpid()}")

    def finish(self) -> str:
        """Replace the destination with the folder made; return the destination."""
        if self.destination.exists():
            shutil.rmtree(self.destination)
        os.replace(self.partial, self.destination)
        return str(self.destination)

    def drop(self) -> None:
        """Remove the partial folder, if any."""
        shutil.rmtree(self.partial, ignore_errors=True)
