"""The `acme` sandbox: each command in namespaces of its own, made by bubblewrap. This is the file to make yours.

The one image, ``host``, is this machine's /usr and /etc, read-only (the password hashes hidden); the rest
of the root is empty but for the sandbox's two writable folders, its workdir and /tmp, which last as long
as the handle. Each `exec` runs ``bwrap`` anew: pid, mount, IPC, UTS and (unless the network is the host's)
network namespaces, every capability dropped. So files persist between commands and processes do not
(`persistent_session` is not claimed); a command past its timeout dies with everything it started (its pid
namespace goes with it). It claims only what the conformance kit proves of it: the host's files and the
network are out of reach. No limit (cpus, memory, pids, storage) is enforced: each one asked for is said in
the handle's `unenforced`. Needs the ``bwrap`` program (Debian, Ubuntu: ``apt-get install bubblewrap``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import posixpath
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from nenyax.core import ExecResult, InfraFailure, NetworkPolicy, SandboxCapabilities, SandboxImage, SandboxSpec
from nenyax.core.plugins.sandbox import MAX_OUTPUT_BYTES, OutputCallback, bounded_text

IMAGE = "host"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Host files no sandbox reads: bound over with /dev/null (a command may run as uid 0, without capabilities).
HIDDEN = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers")


class BoxHandle:
    """One sandbox: its two writable folders on this machine, and a fresh bwrap per command."""

    def __init__(self, backend: AcmeSandbox, image: SandboxImage) -> None:
        """Make the sandbox's folders (nothing runs until `exec`)."""
        self.backend = backend
        self.spec = image.spec
        self.folder = Path(tempfile.mkdtemp(prefix="nenyax-acme-"))
        self.writable = {self.spec.workdir: self.folder / "work", "/tmp": self.folder / "tmp"}
        for local in self.writable.values():
            local.mkdir()
        self.proxy_url: str | None = None  # no proxy network is offered (`proxy_network` is not claimed)
        self.unenforced: tuple[str, ...] = (*self.spec.limits, *(("gpus",) if self.spec.gpus else ()))
        self.stopped = False

    def _argv(self, command: Sequence[str] | str, cwd: str | None, env: Mapping[str, str] | None) -> list[str]:
        args = [self.backend.bwrap, "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("bin", "sbin", "lib", "lib64", "lib32"):
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), f"/{name}"]
            elif host.is_dir():
                args += ["--ro-bind", str(host), f"/{name}"]
        args += [arg for hidden in HIDDEN if Path(hidden).exists() for arg in ("--ro-bind", "/dev/null", hidden)]
        args += ["--dev", "/dev", "--proc", "/proc"]
        for inside, local in self.writable.items():
            args += ["--bind", str(local), inside]
        for mount in self.spec.mounts:
            args += ["--ro-bind" if mount.read_only else "--bind", str(mount.source), mount.target]
        args += ["--unshare-all", *(["--share-net"] if self.spec.network is NetworkPolicy.FULL else [])]
        if os.geteuid() == 0:  # without this, root inside could remount the host's /usr read-write
            args += ["--cap-drop", "ALL"]
        args += ["--die-with-parent", "--new-session", "--chdir", cwd or self.spec.workdir, "--clearenv"]
        variables = {"PATH": PATH, "HOME": self.spec.workdir, **self.spec.env, **(env or {})}
        args += [arg for key, value in variables.items() for arg in ("--setenv", key, value)]
        return [*args, "--", *(["/bin/sh", "-c", command] if isinstance(command, str) else command)]

    async def exec(
        self,
        command: Sequence[str] | str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        user: str | int | None = None,
        on_output: OutputCallback | None = None,
        max_output: int = MAX_OUTPUT_BYTES,
    ) -> ExecResult:
        """Run `command` (argv, or a string for ``sh -c``) in fresh namespaces; past `timeout` all it started dies.

        `on_output` is not called (`streaming_output` is not claimed): the output comes in the result.
        """
        if self.stopped:
            msg = "This sandbox was stopped; start another to run commands."
            raise InfraFailure(msg)
        if user is not None:
            msg = f"The acme sandbox runs every command as one user; it cannot run one as {user!r}."
            raise InfraFailure(msg)
        started = time.monotonic()
        try:
            process = await asyncio.create_subprocess_exec(
                *self._argv(command, cwd, env),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            msg = f"bwrap could not start: {exc}."
            raise InfraFailure(msg) from exc
        timed_out = False
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            timed_out = True
            process.kill()  # bwrap, and with it the command's pid namespace: everything it started
            out, err = await process.communicate()
        if process.returncode != 0 and not timed_out and err.startswith(b"bwrap: "):
            msg = f"bwrap could not make the sandbox: {err.decode(errors='replace').strip()}"
            raise InfraFailure(msg)
        stdout, cut_out = bounded_text(out, max_output)
        stderr, cut_err = bounded_text(err, max_output)
        return ExecResult(
            exit_code=process.returncode if process.returncode is not None else -9,
            stdout=stdout,
            stderr=stderr,
            timed_out=timed_out,
            duration=time.monotonic() - started,
            truncated=cut_out or cut_err,
        )

    def _local(self, remote: str) -> Path:
        """Where `remote` (a path inside the sandbox) is on this machine: only its writable folders are."""
        path = posixpath.normpath(posixpath.join(self.spec.workdir, remote))
        for inside, local in self.writable.items():
            if path == inside or path.startswith(inside.rstrip("/") + "/"):
                found = local / posixpath.relpath(path, inside)
                # A symbolic link made inside must not lead a copy out of the sandbox's own folders.
                if not found.resolve().is_relative_to(local.resolve()):
                    break
                return found
        msg = f"{remote} is not in the sandbox's files ({', '.join(self.writable)}), so it cannot be copied."
        raise InfraFailure(msg)

    async def put(self, local: Path, remote: str) -> None:
        """Copy a file or a folder from this machine into the sandbox."""
        target = self._local(remote)
        target.parent.mkdir(parents=True, exist_ok=True)
        if Path(local).is_dir():
            shutil.copytree(local, target, dirs_exist_ok=True)
        else:
            shutil.copy2(local, target)

    async def get(self, remote: str, local: Path) -> None:
        """Copy a file or a folder from the sandbox to this machine (links stay links)."""
        source = self._local(remote)
        if not source.exists():
            msg = f"{remote} does not exist in the sandbox."
            raise InfraFailure(msg)
        if source.is_dir():
            shutil.copytree(source, local, symlinks=True, dirs_exist_ok=True)
        else:
            Path(local).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, local, follow_symlinks=False)

    async def stop(self) -> None:
        """Delete the sandbox's files (no process outlives its command); safe to call twice."""
        self.stopped = True
        self.backend.handles.discard(self)
        shutil.rmtree(self.folder, ignore_errors=True)

    async def __aenter__(self) -> BoxHandle:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class AcmeSandbox:
    """The `acme` sandbox backend (what the plugin's factory returns). `bwrap` names the program."""

    capabilities = SandboxCapabilities(network_isolation=True, filesystem_isolation=True, persistent_session=False)
    default_image = IMAGE

    def __init__(self, bwrap: str | None = None) -> None:
        """Find bwrap; without it the backend cannot run here, which is said at once."""
        found = bwrap or shutil.which("bwrap")
        if not found:
            msg = "bwrap is not installed here (Debian, Ubuntu: apt-get install bubblewrap)."
            raise InfraFailure(msg)
        self.bwrap = found
        done = subprocess.run([found, "--version"], capture_output=True, text=True, check=False, timeout=10)
        self.version = done.stdout.strip()
        self.handles: set[BoxHandle] = set()

    async def build(self, spec: SandboxSpec) -> SandboxImage:
        """Resolve ``host`` (nothing is built: `image_build` is not claimed); its digest names bwrap's version."""
        if spec.context is not None or (spec.image or IMAGE) != IMAGE:
            msg = f"The acme sandbox runs this machine's own /usr and /etc (image={IMAGE!r}); it builds no image."
            raise InfraFailure(msg)
        digest = "sha256:" + hashlib.sha256(f"{IMAGE}\0{self.version}".encode()).hexdigest()
        return SandboxImage(ref=IMAGE, digest=digest, spec=spec)

    async def start(self, image: SandboxImage, *, proxy: str | None = None) -> BoxHandle:
        """A fresh sandbox from `image`."""
        if image.spec.network is NetworkPolicy.PROXY:
            msg = "The acme sandbox offers no network='proxy'; use 'none' or 'full'."
            raise InfraFailure(msg)
        handle = BoxHandle(self, image)
        self.handles.add(handle)
        return handle

    async def remove(self, image: SandboxImage) -> None:
        """Nothing to delete: the image is resolved, never built."""

    async def close(self) -> None:
        """Stop every sandbox still open; safe to call twice."""
        for handle in list(self.handles):
            with contextlib.suppress(OSError):
                await handle.stop()
