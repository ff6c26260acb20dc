"""`DockerSandbox`: the ``docker`` sandbox plugin (the factory of the sandbox kind).

Images are an engine's images: a ready one (`SandboxSpec.image`, resolved on the engine, never
pulled) or one built from a Dockerfile context (the engine's classic builder: API 1.41, no BuildKit,
``pull=False``). Each sandbox is one long-running container (``sleep infinity``) and every command a
``docker exec`` into it (`DockerHandle`). The Docker SDK blocks, so every call runs on a thread.

What the kit proves: the network is cut (``network_mode="none"``), or the host's (``host``), or,
with a local engine and root, leads to the proxy alone; memory, process and CPU limits hold; commands
run as any user; output streams; the host's files are safe; Dockerfiles build.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import docker
import docker.errors
from nenyax.core import NetworkPolicy, SandboxCapabilities, SandboxImage, SandboxSpec
from nenyax.core.errors import InfraFailure
from nenyax.sandboxes.docker import cgroups, engine
from nenyax.sandboxes.docker.build import Build, kill_group
from nenyax.sandboxes.docker.handle import DockerHandle

DEFAULT_IMAGE = "localhost/nenyax-debian:bookworm"
BUILT = "localhost/nenyax-build"
"""The repository every built image is tagged in (by its digest): what `remove` may delete."""
_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", re.IGNORECASE | re.MULTILINE)
_BUILD_NETWORKS = ("none", "host")


class DockerSandbox:
    """Sandboxes on a Docker Engine API.

    `base_url` is the engine (default: ``DOCKER_HOST``, with its TLS settings); `base_image` the image
    `default_image` names (a Debian one: the kit's probes use ``sh`` and ``bash``). `build_network`
    is what ``RUN`` steps reach: ``none`` or ``host`` (default: ``host`` when the spec's network is
    ``full``, else ``none``); podman 4.3's service ignores it, its ``RUN`` steps always reach the host's.
    `cgroup_parent` places every container's control group (default: a group
    of its own below this process's, with a local ``cgroupfs`` engine; the engine's default elsewhere).
    `timeout` bounds each API call in seconds (never a command's or a build's own run).
    """

    def __init__(
        self,
        base_url: str | None = None,
        base_image: str = DEFAULT_IMAGE,
        build_network: str | None = None,
        cgroup_parent: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        if build_network is not None and build_network not in _BUILD_NETWORKS:
            msg = f"build_network must be one of {', '.join(_BUILD_NETWORKS)}, got {build_network!r}."
            raise ValueError(msg)
        self.base_url = base_url
        self.url = engine.engine_url(base_url)
        self.default_image = base_image
        self.build_network = build_network
        self.cgroup_parent = cgroup_parent
        self.timeout = timeout
        self.local = engine.is_local(self.url)
        self.as_root = os.geteuid() == 0
        self.capabilities = SandboxCapabilities(
            network_isolation=True,
            # The proxy's listener is opened inside the container's network namespace: only a process
            # on the engine's machine, as root, can enter it.
            proxy_network=self.local and self.as_root,
            resource_limits=True,
            persistent_session=True,
            image_build=True,
            streaming_output=True,
            exec_users=True,
            filesystem_isolation=True,
        )
        self._client: docker.DockerClient | None = None
        self._streams: docker.DockerClient | None = None
        self._driver: str | None = None
        self._lock = threading.Lock()
        self._open: set[DockerHandle] = set()
        self._pending: set[str] = set()
        """Control groups of removed containers that were still busy when tried (see `release_group`)."""

    # ------------------------------------------------------------------ the engine

    def client(self) -> docker.DockerClient:
        """The engine's client for short calls (made, and the engine pinged, on first use)."""
        with self._lock:
            if self._client is None:
                client = engine.connect(self.base_url, self.timeout)
                try:
                    client.ping()
                    self._driver = str(client.info().get("CgroupDriver", ""))
                except Exception as exc:
                    client.close()
                    raise InfraFailure(engine.unreachable(self.url, exc)) from exc
                self._client = client
                if self.local and self.as_root and self._driver == "cgroupfs" and self.cgroup_parent is None:
                    cgroups.sweep()  # what earlier sandboxes of this machine could not delete when they stopped
            return self._client

    def streams(self) -> docker.DockerClient:
        """A client whose reads never time out: a command may print nothing for an hour, a build too."""
        self.client()  # says in one sentence when no engine answers
        with self._lock:
            if self._streams is None:
                self._streams = engine.connect(self.base_url, None)
            return self._streams

    def call(self, doing: str, work: Any) -> Any:
        """`work()` on this thread, the engine's failures as one `InfraFailure` sentence."""
        return engine.call(self.url, doing, work)

    def parent_group(self, name: str) -> tuple[str | None, bool]:
        """(`cgroup_parent` for the container `name`, whether it is ours to remove afterwards)."""
        if self.cgroup_parent is not None:
            return self.cgroup_parent, False
        if self.local and self.as_root and self._driver == "cgroupfs":
            return cgroups.parent_for(name), True
        return None, False

    def unenforced(self, spec: SandboxSpec) -> tuple[str, ...]:
        """The limits `spec` asks for that this backend cannot hold (disk: the engine's storage has no quota here)."""
        said = tuple(name for name in spec.limits if name == "storage_mb")
        return (*said, "gpus") if spec.gpus else said

    # ------------------------------------------------------------------ images

    async def build(self, spec: SandboxSpec) -> SandboxImage:
        """Resolve `spec.image` on the engine, or build `spec.context`; see `SandboxImage.digest`.

        A ready image's digest is the engine's image id; a built one's covers its inputs (the context's
        files, the Dockerfile's name, the build arguments, the build network and the ids of the images
        its FROM lines name), so the same inputs give the same digest whatever the engine's layer cache did.
        """
        if spec.image is not None:
            return await asyncio.to_thread(self._resolve, spec)
        return await asyncio.to_thread(self._build, spec)

    def _resolve(self, spec: SandboxSpec) -> SandboxImage:
        assert spec.image is not None
        client = self.client()
        try:
            found = client.images.get(spec.image)
        except docker.errors.ImageNotFound as exc:
            msg = (
                f"The image {spec.image!r} is not on the Docker engine at {self.url}, and sandboxes never pull: "
                "pull, import or build it there first."
            )
            raise InfraFailure(msg) from exc
        except Exception:  # noqa: BLE001 - the same call again, for its one sentence
            found = self.call(f"to find the image {spec.image!r}", lambda: client.images.get(spec.image))
        return SandboxImage(ref=spec.image, digest=str(found.id), spec=spec)

    def _network_of_build(self, spec: SandboxSpec) -> str:
        if self.build_network is not None:
            return self.build_network
        return "host" if spec.network is NetworkPolicy.FULL else "none"

    def _digest(self, spec: SandboxSpec, network: str) -> str:
        assert spec.context is not None
        context = Path(spec.context)
        dockerfile = context / spec.dockerfile
        if not dockerfile.is_file():
            msg = f"There is no {spec.dockerfile} in the build context {context}."
            raise InfraFailure(msg)
        digest = hashlib.sha256(b"nenyax-docker-build-1\0")
        digest.update(f"{spec.dockerfile}\0{network}\0".encode())
        for name, value in sorted(spec.build_args.items()):
            digest.update(f"arg\0{name}\0{value}\0".encode())
        for path in sorted(context.rglob("*")):
            relative = path.relative_to(context).as_posix()
            if path.is_symlink():
                digest.update(f"link\0{relative}\0{os.readlink(path)}\0".encode())
            elif path.is_file():
                executable = os.access(path, os.X_OK)
                digest.update(f"file\0{relative}\0{int(executable)}\0".encode())
                with path.open("rb") as content:
                    digest.update(hashlib.file_digest(content, "sha256").digest())
            elif path.is_dir():
                digest.update(f"dir\0{relative}\0".encode())
        client = self.client()
        for base in _FROM.findall(dockerfile.read_text(errors="replace")):
            # A base that resolves here is covered by its id (a re-imported base gives another digest);
            # a stage name or an ARG-made name by its text.
            try:
                digest.update(f"from\0{base}\0{client.images.get(base).id}\0".encode())
            except Exception:  # noqa: BLE001 - not an image here: its name stands for it
                digest.update(f"from\0{base}\0".encode())
        return "sha256:" + digest.hexdigest()

    def _build(self, spec: SandboxSpec) -> SandboxImage:
        assert spec.context is not None
        self.client()  # an engine that is not there is said before anything else
        network = self._network_of_build(spec)
        digest = self._digest(spec, network)
        tag = f"{BUILT}:{digest.removeprefix('sha256:')[:32]}"
        group, ours = self.parent_group(f"nenyax-build-{uuid.uuid4().hex[:12]}")
        run = Build(self.streams().api, Path(spec.context), spec.dockerfile, tag)
        try:
            return self._await_build(spec, run, network, group, digest, ours)
        finally:
            if group is not None and ours:
                for _ in range(40):  # a step killed past the timeout takes a moment to leave its group
                    kill_group(group)
                    if cgroups.remove(group):
                        break
                    time.sleep(0.05)

    def _await_build(
        self, spec: SandboxSpec, run: Build, network: str, group: str | None, digest: str, ours: bool
    ) -> SandboxImage:
        outcome: list[BaseException | None] = []
        # A thread of its own (a daemon): the stream of a step that ignores the timeout cannot be
        # interrupted, and must not hold the caller (only killing the step's processes ends it).
        worker = threading.Thread(
            target=lambda: outcome.append(run.wait(dict(spec.build_args), network, group)),
            daemon=True,
            name="nenyax-docker-build",
        )
        worker.start()
        worker.join(spec.build_timeout)
        if worker.is_alive():
            if group is not None and ours:
                kill_group(group)  # ends the step still running, and with it the engine's stream
            msg = f"Building {spec.context} took longer than its build_timeout of {spec.build_timeout:g} s."
            raise InfraFailure(msg)
        failure = outcome[0] if outcome else None
        if isinstance(failure, InfraFailure):
            raise failure
        if failure is not None:
            raise InfraFailure(engine.unreachable(self.url, failure)) from failure
        if run.error is not None:
            last = " | ".join(run.said[-3:])
            msg = f"Building {spec.context} failed: {' '.join(run.error.split())[:300]}" + (
                f" (last output: {last[:300]})." if last else "."
            )
            raise InfraFailure(msg)
        return SandboxImage(ref=run.tag, digest=digest, spec=spec)

    async def remove(self, image: SandboxImage) -> None:
        """Delete an image `build` made (its tag); a resolved image is the engine's, and stays."""
        if not image.ref.startswith(f"{BUILT}:"):
            return
        client = self.client()

        def untag() -> None:
            with contextlib.suppress(docker.errors.ImageNotFound):
                client.images.remove(image.ref, force=True)

        await asyncio.to_thread(self.call, f"to remove the image {image.ref}", untag)

    # ------------------------------------------------------------------ sandboxes

    async def start(self, image: SandboxImage, *, proxy: str | None = None) -> DockerHandle:
        """A fresh container from `image` (see `DockerHandle`)."""
        if image.spec.network is NetworkPolicy.PROXY:
            if not self.capabilities.proxy_network:
                msg = (
                    f"The docker sandbox offers network='proxy' only with an engine on this machine and as root "
                    f"(the engine is at {self.url}); use 'none' or 'full'."
                )
                raise InfraFailure(msg)
            if not proxy:
                msg = "network='proxy' needs the proxy's URL: Sandbox.start(image, proxy='http://127.0.0.1:PORT/v1')."
                raise InfraFailure(msg)
        handle = DockerHandle(self, image, proxy)
        self._open.add(handle)
        return await handle.start()

    def forget(self, handle: DockerHandle) -> None:
        """A handle that stopped is no longer the backend's to close."""
        self._open.discard(handle)

    def release_group(self, parent: str) -> None:
        """Delete the control group a removed container had, and those of earlier ones still pending (a
        blocking call). podman's exec sessions keep a process in it for a while after the container is
        gone (conmon waits out ``exit_command_delay``), so a group still busy is tried again later."""
        with self._lock:
            self._pending.add(parent)
            pending = sorted(self._pending)
        for _ in range(10):  # the runtime deletes the container's own group just after removing it
            if cgroups.remove(parent):
                break
            time.sleep(0.05)
        gone = {group for group in pending if cgroups.remove(group)}
        with self._lock:
            self._pending -= gone

    async def close(self) -> None:
        """Stop every sandbox still running and close the engine's clients (a later call opens them again)."""
        await asyncio.gather(*(handle.stop() for handle in list(self._open)))
        with self._lock:
            pending = sorted(self._pending)
        gone = {group for group in pending if await asyncio.to_thread(cgroups.remove, group)}
        with self._lock:
            self._pending -= gone
        with self._lock:
            for client in (self._client, self._streams):
                if client is not None:
                    client.close()
            self._client = self._streams = None
