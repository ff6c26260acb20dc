"""`BwrapSandbox`: the ``bwrap`` sandbox plugin (the factory of the sandbox kind).

The one image is ``host``: this machine's /usr and /etc, read-only, with everything else hidden (the
home folders, the project, /var, the password hashes); the rest of the root is a tmpfs of the
sandbox's own. Nothing is built: a Dockerfile context is refused in one sentence (`image_build` is
not claimed; a task whose Dockerfile installs packages needs a sandbox that builds, such as docker). What the kit proves
when we run as root: files outside the sandbox cannot be written, the network is cut or leads to the
proxy alone, memory and process limits hold (cgroups), commands run as any user. Without root there
are no control groups to write, so no limits are claimed, and the proxy-only network is not offered.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from nenyax.core import NetworkPolicy, SandboxCapabilities, SandboxImage, SandboxSpec
from nenyax.core.errors import InfraFailure
from nenyax.sandboxes.bwrap.cgroups import CgroupTree
from nenyax.sandboxes.bwrap.handle import BwrapHandle

HOST = "host"


def _version(bwrap: str) -> str:
    done = subprocess.run([bwrap, "--version"], capture_output=True, text=True, check=False, timeout=10)
    return done.stdout.strip()


def _os_release(root: Path) -> str:
    for candidate in ("etc/os-release", "usr/lib/os-release"):
        path = root / candidate
        if path.is_file():
            return path.read_text(errors="replace")
    return ""


class BwrapSandbox:
    """Sandboxes on bubblewrap. `bwrap` names the binary (default: the one on PATH); `scratch` the folder
    each sandbox's writable files go in (default: the system's temporary folder)."""

    default_image = HOST

    def __init__(self, bwrap: str | None = None, scratch: str | None = None) -> None:
        found = bwrap or shutil.which("bwrap")
        if not found:
            msg = "bwrap is not installed here (Debian and Ubuntu: apt-get install bubblewrap)."
            raise InfraFailure(msg)
        for tool in ("nsenter", "setpriv"):
            if not shutil.which(tool):
                msg = f"{tool} is not installed here (it comes with util-linux)."
                raise InfraFailure(msg)
        self.bwrap = found
        self.version = _version(found)
        self.scratch = scratch
        self.as_root = os.geteuid() == 0
        self.cgroups = CgroupTree.detect() if self.as_root else None
        self.capabilities = SandboxCapabilities(
            network_isolation=True,
            proxy_network=self.as_root,  # entering the sandbox's network namespace takes root
            resource_limits=self.cgroups is not None,
            persistent_session=True,
            streaming_output=True,
            exec_users=self.as_root,
            filesystem_isolation=True,
        )
        self._open: set[BwrapHandle] = set()

    def unenforced(self, spec: SandboxSpec) -> tuple[str, ...]:
        """The limits `spec` asks for that this backend cannot hold."""
        held = {"cpus", "memory_mb", "pids"} if self.cgroups is not None else set()
        said = tuple(name for name in spec.limits if name not in held)
        return (*said, "gpus") if spec.gpus else said

    async def build(self, spec: SandboxSpec) -> SandboxImage:
        """Resolve ``host``: its digest covers bwrap's version and the host's OS release (never the time)."""
        if spec.context is not None:
            msg = (
                f"The bwrap sandbox builds no Dockerfile ({spec.context}); give image='host' or a root "
                "filesystem folder, or use a sandbox that builds images (docker)."
            )
            raise InfraFailure(msg)
        name = spec.image or HOST
        if name != HOST:
            msg = f"The bwrap sandbox runs this machine's own /usr and /etc (image='host'), not {name!r}."
            raise InfraFailure(msg)
        identity = f"{HOST}\0{self.version}\0{_os_release(Path('/'))}"
        return SandboxImage(ref=HOST, digest=_sha256(identity), spec=spec)

    async def start(self, image: SandboxImage, *, proxy: str | None = None) -> BwrapHandle:
        """A fresh sandbox from `image` (see `BwrapHandle`)."""
        if image.spec.network is NetworkPolicy.PROXY and not self.capabilities.proxy_network:
            msg = "The bwrap sandbox offers network='proxy' only when run as root; use 'none' or 'full'."
            raise InfraFailure(msg)
        handle = BwrapHandle(self, image, proxy)
        self._open.add(handle)
        return await handle.start()

    def forget(self, handle: BwrapHandle) -> None:
        """A handle that stopped is no longer the backend's to close."""
        self._open.discard(handle)

    def resolve_user(self, image: SandboxImage, user: str | int) -> tuple[int, int]:
        """(uid, gid) of `user` in the image's own /etc/passwd; a bare uid not listed there gets gid = uid."""
        if not self.capabilities.exec_users and user not in (0, "root"):
            msg = f"The bwrap sandbox runs commands as another user only when run as root, not as {user!r}."
            raise InfraFailure(msg)
        entries = {}
        passwd = Path("/etc/passwd")  # the image is the host's /etc
        if passwd.is_file():
            for line in passwd.read_text(errors="replace").splitlines():
                fields = line.split(":")
                if len(fields) >= 4 and fields[2].isdigit() and fields[3].isdigit():
                    entries[fields[0]] = (int(fields[2]), int(fields[3]))
        if isinstance(user, int) or str(user).isdigit():
            uid = int(user)
            return next((ids for ids in entries.values() if ids[0] == uid), (uid, uid))
        if user not in entries:
            msg = f"There is no user {user!r} in the sandbox's /etc/passwd."
            raise InfraFailure(msg)
        return entries[user]

    async def remove(self, image: SandboxImage) -> None:
        """Nothing to delete: images are resolved, never built."""

    async def close(self) -> None:
        """Stop every sandbox still running."""
        await asyncio.gather(*(handle.stop() for handle in list(self._open)))


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
