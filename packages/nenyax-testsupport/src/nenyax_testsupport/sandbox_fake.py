"""`LocalProcessSandbox`: the sandbox interface over plain subprocesses in a temporary folder.

A harness double, not a sandbox: nothing is isolated (no namespaces, no limits, the network is
reachable). It exists so task-mode code can be exercised through the real `Sandbox` interface in
core's own tests, where no isolating backend is installed; the real backends (bwrap, docker over
podman) are separate distributions with their own conformance checks.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from nenyax.core.errors import InfraFailure
from nenyax.core.plugins.sandbox import (
    MAX_OUTPUT_BYTES,
    ExecResult,
    NetworkPolicy,
    OutputCallback,
    SandboxCapabilities,
    SandboxImage,
    SandboxSpec,
    bounded_text,
)


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


class LocalProcessHandle:
    """A temporary folder standing in for the sandbox's filesystem; commands run there."""

    def __init__(self, image: SandboxImage, proxy: str | None = None) -> None:
        """Copy the image's context (if any) into a fresh folder."""
        self.image = image
        self.proxy_url = proxy  # the host's network: the proxy is reached where it is
        # It enforces nothing: every limit asked for, and any network policy but the host's, is said so.
        cut_off = ("network",) if image.spec.network is not NetworkPolicy.FULL else ()
        self.unenforced: tuple[str, ...] = (*image.spec.limits, *cut_off)
        self.root = Path(tempfile.mkdtemp(prefix="nenyax-localbox-"))
        if image.spec.context is not None:
            shutil.copytree(image.spec.context, self.root, dirs_exist_ok=True)

    def _local(self, remote: str) -> Path:
        # The spec's workdir maps to the folder itself; absolute paths are taken inside it.
        workdir = self.image.spec.workdir.rstrip("/")
        relative = remote[len(workdir) :] if remote.startswith(workdir) else remote
        return self.root / relative.lstrip("/")

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
        """Run `command` in the folder; past `timeout` the whole process group is killed."""
        if user is not None:
            msg = f"The local sandbox runs every command as this process's user; it cannot run one as {user!r}."
            raise InfraFailure(msg)
        started = time.perf_counter()
        where = self._local(cwd) if cwd else self.root
        environment = {**os.environ, **self.image.spec.env, **(env or {})}
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        # Output goes to files, not pipes: a child that leaves the process group cannot hold the call open.
        with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv, cwd=where, env=environment, stdout=out_file, stderr=err_file, start_new_session=True
                )
            except OSError as exc:
                msg = f"The local sandbox could not start {command!r}: {exc}."
                raise InfraFailure(msg) from exc
            timed_out = False
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
            out_file.seek(0)
            err_file.seek(0)
            out, err = out_file.read(), err_file.read()
        stdout, cut_out = bounded_text(out, max_output)
        stderr, cut_err = bounded_text(err, max_output)
        return ExecResult(
            exit_code=proc.returncode if proc.returncode is not None else -9,
            stdout=stdout,
            stderr=stderr,
            timed_out=timed_out,
            duration=time.perf_counter() - started,
            truncated=cut_out or cut_err,
        )

    async def put(self, local: Path, remote: str) -> None:
        """Copy a file or folder in."""
        target = self._local(remote)
        target.parent.mkdir(parents=True, exist_ok=True)
        if Path(local).is_dir():
            shutil.copytree(local, target, dirs_exist_ok=True)
        else:
            shutil.copy2(local, target)

    async def get(self, remote: str, local: Path) -> None:
        """Copy a file or folder out."""
        source = self._local(remote)
        if not source.exists():
            msg = f"{remote} does not exist in the sandbox."
            raise InfraFailure(msg)
        if source.is_dir():
            shutil.copytree(source, local, dirs_exist_ok=True)
        else:
            Path(local).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, local)

    async def stop(self) -> None:
        """Remove the folder (twice is fine)."""
        shutil.rmtree(self.root, ignore_errors=True)

    async def __aenter__(self) -> LocalProcessHandle:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class LocalProcessSandbox:
    """The backend: images are folders (their digest is the content's), handles are temporary folders."""

    capabilities = SandboxCapabilities(persistent_session=True)
    default_image = "local"

    async def build(self, spec: SandboxSpec) -> SandboxImage:
        """Resolve the spec; a context folder is hashed, a named image is taken as it is."""
        if spec.context is not None:
            if not spec.context.is_dir():
                msg = f"The sandbox context {spec.context} is not a folder."
                raise InfraFailure(msg)
            return SandboxImage(ref=str(spec.context), digest=_tree_digest(spec.context), spec=spec)
        name = spec.image or ""
        return SandboxImage(ref=name, digest="sha256:" + hashlib.sha256(name.encode()).hexdigest(), spec=spec)

    async def start(self, image: SandboxImage, *, proxy: str | None = None) -> LocalProcessHandle:
        """A fresh folder from `image`."""
        return LocalProcessHandle(image, proxy)

    async def remove(self, image: SandboxImage) -> None:
        """Nothing to delete: an image is the context folder itself."""

    async def close(self) -> None:
        """Nothing held: each handle removes its own folder."""


class ClaimsIsolation(LocalProcessSandbox):
    """Flaw (for the kit's own tests): claims isolation, limits and users, and enforces none of them."""

    capabilities = SandboxCapabilities(
        network_isolation=True, resource_limits=True, filesystem_isolation=True, exec_users=True
    )
