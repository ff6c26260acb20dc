"""Where a local engine puts our containers' control groups: under the group this process sits in.

A harness may bound this process's memory with a control group of its own; containers the engine puts
at the root of each hierarchy (podman's default ``/libpod_parent``) would escape that bound. So with a
local engine using the ``cgroupfs`` driver, each container gets a parent group of its own below ours
(``cgroup_parent``), removed when the container is.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from nenyax.core.toolkit.sandbox import own_cgroups

_ROOT = Path("/sys/fs/cgroup")


def own_group() -> str:
    """This process's group: the v1 memory hierarchy's (the one a harness bounds), else the v2 one."""
    found = own_cgroups()
    return found.get("memory") or found.get("") or "/"


def parent_for(name: str) -> str:
    """A parent group path for one container, below our own group."""
    return f"{own_group().rstrip('/')}/{name}"


def folders(group: str) -> list[Path]:
    """`group`'s folder in every hierarchy it exists in."""
    relative = group.strip("/")
    if not relative or not _ROOT.is_dir():
        return []
    found = [hierarchy / relative for hierarchy in [_ROOT, *(p for p in _ROOT.iterdir() if p.is_dir())]]
    return [folder for folder in found if folder.is_dir()]


def remove(parent: str) -> bool:
    """Delete `parent`'s (empty) folders, and those the engine made in it (podman leaves ``conmon``), in
    every hierarchy; what is busy stays. True when nothing of it is left."""
    relative = parent.strip("/")
    if not relative or os.geteuid() != 0 or not _ROOT.is_dir():
        return True
    gone = True
    for hierarchy in [_ROOT, *(p for p in _ROOT.iterdir() if p.is_dir())]:
        folder = hierarchy / relative
        if not folder.is_dir():
            continue
        # Deepest first: a control group folder is removed only once it has no child groups.
        for inner in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                inner.rmdir()
        try:
            folder.rmdir()
        except OSError:
            gone = False
    return gone


def sweep(older_than: float = 60.0) -> None:
    """Delete the empty groups earlier sandboxes left below ours (still busy when their container went).

    Only groups made more than `older_than` seconds ago: a container being started right now has its
    parent group made a moment before its own group inside it, and must not lose it in between.
    """
    if os.geteuid() != 0:
        return
    now = time.time()
    own = own_group().rstrip("/")
    for folder in folders(own):
        for child in folder.glob("nenyax-*"):
            with contextlib.suppress(OSError):
                if child.is_dir() and now - child.stat().st_mtime > older_than:
                    remove(f"{own}/{child.name}")
