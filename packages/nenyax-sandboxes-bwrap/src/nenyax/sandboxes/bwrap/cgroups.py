"""Control groups for one sandbox: its memory, process and CPU limits, and killing a command's whole tree.

cgroup v2 (one unified hierarchy with the controllers delegated) and v1 (one hierarchy per
controller, as on hybrid machines) are both detected. Every group is made under the group this
process already sits in, per controller, so a harness that put us in a memory group keeps bounding
us. Where no writable hierarchy exists (no root, nothing delegated), `CgroupTree.detect` gives None
and the backend says it enforces no limits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import attrs

from nenyax.core.toolkit.sandbox import own_cgroups

ROOT = Path("/sys/fs/cgroup")
_V1_CONTROLLERS = ("memory", "pids", "cpu", "freezer")


@attrs.frozen
class CgroupTree:
    """Where the groups of every sandbox go: per controller, a writable folder this process may use."""

    version: int
    bases: dict[str, Path]
    """v1: controller -> its folder; v2: ``""`` -> the one folder."""

    @classmethod
    def detect(cls) -> CgroupTree | None:
        """The hierarchy this machine gives us, or None when we cannot make groups in it."""
        own = own_cgroups()
        unified = ROOT / "cgroup.controllers"
        if unified.exists():  # pure v2
            base = ROOT / own.get("", "/").lstrip("/")
            wanted = {"memory", "pids"}
            enabled = set((base / "cgroup.subtree_control").read_text().split()) if base.exists() else set()
            if wanted <= enabled and os.access(base, os.W_OK):
                return cls(version=2, bases={"": base})
            return None
        bases = {}
        for controller in _V1_CONTROLLERS:
            folder = ROOT / controller
            if not (folder / "cgroup.procs").exists():
                continue
            base = folder / own.get(controller, "/").lstrip("/")
            if os.access(base, os.W_OK):
                bases[controller] = base
        if {"memory", "pids"} <= set(bases):
            return cls(version=1, bases=bases)
        return None

    def group(self, name: str) -> Group:
        """Make (empty) groups called `name` under each base."""
        folders = {controller: base / name for controller, base in self.bases.items()}
        for folder in folders.values():
            folder.mkdir(exist_ok=True)
        return Group(version=self.version, folders=folders)


@attrs.frozen
class Group:
    """One sandbox's groups (or one command's, inside them)."""

    version: int
    folders: dict[str, Path]

    def limit(self, *, memory_mb: int | None, pids: int | None, cpus: float | None) -> None:
        """Write the limits asked for (swap included in memory, so a hog cannot page out)."""
        if self.version == 2:
            folder = self.folders[""]
            if memory_mb:
                (folder / "memory.max").write_text(str(memory_mb << 20))
                with contextlib.suppress(OSError):
                    (folder / "memory.swap.max").write_text("0")
            if pids:
                (folder / "pids.max").write_text(str(pids))
            if cpus:
                (folder / "cpu.max").write_text(f"{int(cpus * 100_000)} 100000")
            return
        if memory_mb:
            memory = self.folders["memory"]
            (memory / "memory.limit_in_bytes").write_text(str(memory_mb << 20))
            # memsw >= limit is required, and absent where swap accounting is off.
            with contextlib.suppress(OSError):
                (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_mb << 20))
        if pids:
            (self.folders["pids"] / "pids.max").write_text(str(pids))
        if cpus and "cpu" in self.folders:
            (self.folders["cpu"] / "cpu.cfs_period_us").write_text("100000")
            (self.folders["cpu"] / "cpu.cfs_quota_us").write_text(str(int(cpus * 100_000)))

    def child(self, name: str) -> Group:
        """A group inside this one, to tell one command's processes from the rest (to kill them).

        In v1 only the pids and freezer groups nest: a v1 memory or cpu child escapes its parent's
        limit unless ``use_hierarchy`` is set, so commands stay in the sandbox's own there.
        """
        nested = {"", "pids", "freezer"} if self.version == 1 else set(self.folders)
        folders = {c: folder / name if c in nested else folder for c, folder in self.folders.items()}
        for folder in folders.values():
            folder.mkdir(exist_ok=True)
        return Group(version=self.version, folders=folders)

    @property
    def procs_files(self) -> list[str]:
        """The files a process writes its pid to, to join every one of these groups."""
        return [str(folder / "cgroup.procs") for folder in self.folders.values()]

    def join(self) -> None:
        """Move the calling process into these groups (called in a child before it execs)."""
        for procs in self.procs_files:
            with open(procs, "w") as handle:
                handle.write(str(os.getpid()))

    def pids(self) -> list[int]:
        """Every process in these groups now."""
        folder = self.folders["" if self.version == 2 else "pids"]
        found: set[int] = set()
        for procs in folder.rglob("cgroup.procs"):
            with contextlib.suppress(OSError):
                found.update(int(line) for line in procs.read_text().split())
        return sorted(found)

    def kill(self, within: float = 5.0) -> None:
        """SIGKILL every process in the groups, frozen first where a freezer is there, so a forking
        process cannot outrun the kill; returns once they are gone (or `within` seconds passed)."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                (self.folders[""] / "cgroup.kill").write_text("1")
        freezer = self.folders.get("freezer")
        if freezer is not None:  # frozen, nothing forks between reading the list and the kill
            with contextlib.suppress(OSError):
                (freezer / "freezer.state").write_text("FROZEN")
            try:
                self._signal_all()
            finally:
                with contextlib.suppress(OSError):
                    (freezer / "freezer.state").write_text("THAWED")  # the kills land as they thaw
        deadline = time.monotonic() + within
        while self.pids() and time.monotonic() < deadline:
            self._signal_all()
            time.sleep(0.02)

    def _signal_all(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Kill what is left and delete the groups, children first."""
        self.kill(within=2.0)
        for folder in self.folders.values():
            for inner in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
                with contextlib.suppress(OSError):
                    inner.rmdir()
            with contextlib.suppress(OSError):
                folder.rmdir()
