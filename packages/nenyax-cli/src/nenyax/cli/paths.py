"""Output paths are checked before any work runs: an unwritable one is a sentence, never a traceback later."""

from __future__ import annotations

import contextlib
from pathlib import Path

from nenyax.core import UsageError


def check_writable(path: Path, option: str) -> None:
    """Raise `UsageError` naming `path` unless a file can be created or appended there.

    Creates missing parent folders (writing the file would need them anyway), then opens the file for
    appending, which asks the OS itself (permission bits alone mislead: root, read-only mounts, /proc).
    A file created only to ask is removed again.
    """
    if path.is_dir():
        msg = f"{option} {path} is a folder; name a file to write."
        raise UsageError(msg)
    existing = next(p for p in path.parents if p.exists())  # the root always exists
    if not existing.is_dir():
        msg = f"{option} {path} cannot be written: {existing} is a file, not a folder."
        raise UsageError(msg)
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        msg = f"{option} {path} cannot be written ({exc.strerror or exc})."
        raise UsageError(msg) from exc
    if not existed:
        with contextlib.suppress(OSError):
            path.unlink()


def check_run_dir(path: Path, option: str) -> None:
    """Raise `UsageError` unless `path` can become a new run directory: absent or empty, and writable."""
    if path.exists() and not path.is_dir():
        msg = (
            f"{option} {path} is a file; name a new folder for the run (or a .jsonl file to append to, where offered)."
        )
        raise UsageError(msg)
    if path.is_dir() and any(path.iterdir()):
        msg = f"{option} {path} already holds files; name a new folder (a run is never written over)."
        raise UsageError(msg)
    if path.is_dir():
        check_writable(path / "run.toml", option)  # the folder exists: may a file be made in it?
    else:
        check_writable(path, option)  # asks the OS whether `path` can be made (and names it, not run.toml)
