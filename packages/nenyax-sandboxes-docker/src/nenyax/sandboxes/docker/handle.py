"""One running docker sandbox: a container running ``sleep infinity``, and commands exec'd into it.

The container runs under the engine's init (``init``: Docker's docker-init, podman's catatonit). An exec'd
command's orphans are adopted by the container's first process; ``sleep`` never reaps them, so a killed
fork bomb's processes stayed zombies holding the process table, and the next command was refused.

Every command carries a marker in its environment (``NENYAX_EXEC``), inherited by all it starts,
even what leaves its session with ``setsid``. Past its timeout, every process of the container whose
environment holds the marker is killed (scanned from inside, as root; and from this machine too when
the engine is local). Background processes of a command that ended are left alone (docker-exec semantics).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import docker.errors
from docker.types import Mount
from nenyax.core import NetworkPolicy, OutputCallback, SandboxImage
from nenyax.core.errors import InfraFailure
from nenyax.core.toolkit.sandbox import CapturedExec, ProxyLink, carrying, kill_carrying, pack, unpack
from nenyax.core.toolkit.sandbox import OutputCapture as Capture

if TYPE_CHECKING:
    from nenyax.sandboxes.docker.backend import DockerSandbox

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MARKER = "NENYAX_EXEC"
# Kills, as root inside, every process whose environment holds the marker ($0), until none is left
# (a process may fork while the first pass runs). The killer's own shells do not carry it.
_KILLER = (
    "for round in 1 2 3 4 5; do n=0; for p in /proc/[0-9]*; do "
    'if tr "\\0" "\\n" < "$p/environ" 2>/dev/null | grep -qxF -- "' + MARKER + '=$0"; then '
    'kill -9 "${p#/proc/}" 2>/dev/null && n=$((n+1)); fi; done; [ "$n" = 0 ] && break; done'
)
_AFTER_KILL_S = 10.0
_START_WAIT_S = 60.0
"""How long a command without a timeout waits for room in a full process table."""
_START_RETRY_S = 0.5
_PIDS_RESERVE = 10
"""Tasks a command needs to start: fewer free than this is a full table. The limit counts threads, and the
runtime's exec (runc's init: two clones, then Go's threads) holds about eight at once; with 4, a fork bomb's
leftovers stayed and the next command was refused for 30 s (podman, CI of 2026-12-05)."""
_NETWORK_MODE = {NetworkPolicy.NONE: "none", NetworkPolicy.PROXY: "none", NetworkPolicy.FULL: "host"}


class DockerHandle(CapturedExec):
    """A started sandbox (see the module docstring); an async context manager that stops it on exit."""

    def __init__(self, backend: DockerSandbox, image: SandboxImage, proxy: str | None) -> None:
        self.image = image
        self.spec = image.spec
        self._backend = backend
        self._id = uuid.uuid4().hex[:12]
        self._counter = itertools.count(1)
        self._container: Any = None
        self._parent: str | None = None
        self._link = ProxyLink(proxy) if proxy and self.spec.network is NetworkPolicy.PROXY else None
        self.proxy_url: str | None = proxy if self.spec.network is not NetworkPolicy.NONE else None
        self.unenforced: tuple[str, ...] = backend.unenforced(self.spec)
        self._stopped = False

    # ------------------------------------------------------------------ start and stop

    def _create(self) -> Any:
        backend, spec = self._backend, self.spec
        client = backend.client()
        name = f"nenyax-{self._id}"
        parent, ours = backend.parent_group(name)
        self._parent = parent if ours else None
        ref = self.image.ref
        config = backend.call(f"to inspect the image {ref}", lambda: client.api.inspect_image(ref))
        image_env = (config.get("Config") or {}).get("Env") or []
        env = {} if any(e.startswith("PATH=") for e in image_env) else {"PATH": PATH}  # an imported rootfs has none
        options: dict[str, Any] = {
            "image": self.image.ref,
            "entrypoint": ["sleep"],  # the image's own entrypoint would end, or serve, instead of waiting
            "command": ["infinity"],
            "name": name,
            "hostname": "sandbox",
            "init": True,  # reaps what commands leave behind (see the module docstring)
            "detach": True,
            "network_mode": _NETWORK_MODE[spec.network],
            "working_dir": spec.workdir,
            "environment": {**env, **spec.env},
            "labels": {"nenyax.sandbox": "docker"},
            "mounts": [Mount(m.target, str(m.source), type="bind", read_only=m.read_only) for m in spec.mounts],
        }
        if spec.memory_mb:
            # Swap included: a hog must not page out past its bound.
            options["mem_limit"] = options["memswap_limit"] = f"{int(spec.memory_mb)}m"
        if spec.pids:
            options["pids_limit"] = int(spec.pids)
        if spec.cpus:
            options["nano_cpus"] = int(spec.cpus * 1e9)
        if parent:
            options["cgroup_parent"] = parent
        container = backend.call(f"to start a container from {ref}", lambda: client.containers.run(**options))
        self._container = container
        container.reload()
        return container

    async def start(self) -> DockerHandle:
        """Start the container; returns once it runs (and the proxy's port listens inside, if asked)."""
        try:
            container = await asyncio.to_thread(self._create)
            if container.status != "running":
                logs = await asyncio.to_thread(container.logs, tail=5)
                said = logs.decode(errors="replace").strip()
                msg = f"The container from {self.image.ref} is {container.status}, not running: {said}."
                raise InfraFailure(msg)
            if self._link is not None:
                await self._link.open(int(container.attrs["State"]["Pid"]))
        except BaseException:
            await self.stop()
            raise
        return self

    async def stop(self) -> None:
        """Remove the container (killing all it runs); safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        self._backend.forget(self)
        if self._link is not None:
            await self._link.close()
        if self._container is not None:
            await asyncio.to_thread(self._remove)

    def _remove(self) -> None:
        with contextlib.suppress(docker.errors.NotFound):
            self._backend.call("to remove a container", lambda: self._container.remove(force=True))
        if self._parent is not None:
            self._backend.release_group(self._parent)

    async def __aenter__(self) -> DockerHandle:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ commands

    def _exec_create(self, argv: list[str], env: dict[str, str], workdir: str, user: str) -> str:
        api = self._backend.client().api
        made = self._backend.call(
            "to run a command",
            lambda: api.exec_create(
                self._container.id,
                argv,
                stdout=True,
                stderr=True,
                stdin=False,
                tty=False,
                environment=env,
                workdir=workdir,
                user=user,
            ),
        )
        return str(made["Id"])

    def _pump(self, exec_id: str, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Any]) -> None:
        """Read the command's frames (a thread): each chunk to `queue`, then None, or the failure."""
        try:
            frames: Iterator[tuple[bytes | None, bytes | None]] = self._backend.streams().api.exec_start(
                exec_id, stream=True, demux=True
            )
            for out, err in frames:
                if out:
                    loop.call_soon_threadsafe(queue.put_nowait, ("stdout", out))
                if err:
                    loop.call_soon_threadsafe(queue.put_nowait, ("stderr", err))
            loop.call_soon_threadsafe(queue.put_nowait, None)
        except Exception as exc:  # noqa: BLE001 - handed to the event loop, which raises it
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
                loop.call_soon_threadsafe(queue.put_nowait, exc)

    async def _run(
        self,
        command: Sequence[str] | str,
        *,
        cwd: str | None,
        env: Mapping[str, str] | None,
        timeout: float | None,
        user: str | int | None,
        on_output: OutputCallback | None,
        max_output: int,
    ) -> tuple[int, Capture, Capture, bool, float]:
        if self._stopped:
            msg = "This sandbox was stopped; start another to run commands."
            raise InfraFailure(msg)
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        started = time.monotonic()
        # A full process table (a fork bomb's processes still running) refuses new commands: wait for
        # room, within the command's own timeout.
        give_up = started + (timeout if timeout is not None else _START_WAIT_S)
        while True:
            marker = f"{self._id}-{next(self._counter)}"
            environment = {**self.spec.env, **(env or {}), MARKER: marker}
            code, out, err, timed_out = await self._attempt(
                argv,
                environment,
                cwd,
                user,
                marker,
                None if timeout is None else started + timeout,
                on_output,
                max_output,
            )
            refused = _refused(code, out, err)
            if refused is None:
                break
            said, busy = refused
            if not busy or time.monotonic() + _START_RETRY_S >= give_up:
                msg = f"The Docker engine at {self._backend.url} could not start a command in the sandbox: {said}."
                raise InfraFailure(msg.replace("..", "."))
            await asyncio.sleep(_START_RETRY_S)
        if self.spec.pids and not timed_out and self._backend.local and self._backend.as_root:
            # What a finished command left running fills the sandbox's process table: no command could
            # start after it, so its leftovers go (a fork bomb must not take the sandbox with it).
            left = await asyncio.to_thread(carrying, f"{MARKER}={marker}".encode())
            if len(left) >= self.spec.pids - _PIDS_RESERVE:
                await asyncio.to_thread(kill_carrying, f"{MARKER}={marker}".encode())
        return code, out, err, timed_out, time.monotonic() - started

    async def _attempt(
        self,
        argv: list[str],
        environment: dict[str, str],
        cwd: str | None,
        user: str | int | None,
        marker: str,
        deadline: float | None,
        on_output: OutputCallback | None,
        max_output: int,
    ) -> tuple[int, Capture, Capture, bool]:
        who = "root" if user is None else str(user)
        exec_id = await asyncio.to_thread(self._exec_create, argv, environment, cwd or self.spec.workdir, who)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        # A daemon thread, not asyncio.to_thread: a stream an escaped process keeps open must not hold
        # the interpreter (or asyncio.run's executor shutdown) at exit.
        threading.Thread(target=self._pump, args=(exec_id, loop, queue), daemon=True, name="nenyax-docker-exec").start()
        out, err = Capture("stdout", max_output, on_output), Capture("stderr", max_output, on_output)
        timed_out = False
        while True:
            wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            try:
                item = await asyncio.wait_for(queue.get(), wait)
            except TimeoutError:
                if timed_out:  # killed, and still a stream held open: give up on it
                    break
                timed_out = True
                await self._kill(marker)
                deadline = time.monotonic() + _AFTER_KILL_S
                continue
            if item is None:
                break
            if isinstance(item, Exception):
                if self._stopped:
                    msg = "This sandbox was stopped while a command ran."
                    raise InfraFailure(msg) from item
                if isinstance(item, docker.errors.APIError):  # refused at the start: an unknown user, say
                    said = " ".join(str(item.explanation or item).split())[:300].rstrip(".")
                    msg = f"The Docker engine at {self._backend.url} could not start a command in the sandbox: {said}."
                else:
                    msg = f"The Docker engine at {self._backend.url} lost a running command: {item}."
                raise InfraFailure(msg) from item
            (out if item[0] == "stdout" else err).feed(item[1])
        out.flush()
        err.flush()
        api = self._backend.client().api
        state = await asyncio.to_thread(self._backend.call, "to read an exit", lambda: api.exec_inspect(exec_id))
        code = state.get("ExitCode")
        if code is None or state.get("Running"):
            code = 128 + signal.SIGKILL
        return int(code), out, err, timed_out

    async def _kill(self, marker: str) -> None:
        """Kill every process carrying `marker`: from this machine when the engine is local, and from inside."""
        if self._backend.local and self._backend.as_root:
            await asyncio.to_thread(kill_carrying, f"{MARKER}={marker}".encode())
        api = self._backend.client().api

        def inside() -> None:
            made = api.exec_create(self._container.id, ["/bin/sh", "-c", _KILLER, marker], user="root")
            api.exec_start(made["Id"])

        with contextlib.suppress(Exception):  # a full process table: the host-side kill above is what is left
            await asyncio.to_thread(inside)

    # ------------------------------------------------------------------ files

    def _absolute(self, path: str) -> PurePosixPath:
        where = PurePosixPath(path)
        return where if where.is_absolute() else PurePosixPath(self.spec.workdir) / where

    async def put(self, local: Path, remote: str) -> None:
        """Copy a file or folder in (a tar through the engine; owned by root inside)."""
        local, target = Path(local), self._absolute(remote)
        if not local.exists():
            msg = f"{local} does not exist on this machine."
            raise InfraFailure(msg)
        if self._stopped:
            msg = "This sandbox was stopped; start another to copy files in."
            raise InfraFailure(msg)
        data = pack(local, target.name)
        made = await self._run(
            ["mkdir", "-p", "--", str(target.parent)],
            cwd="/",
            env=None,
            timeout=60,
            user="root",
            on_output=None,
            max_output=4096,
        )
        if made[0] != 0:
            msg = f"Copying {local} into the sandbox at {target} failed: {made[2].text()[0].strip()}."
            raise InfraFailure(msg)
        done = await asyncio.to_thread(
            self._backend.call,
            f"to copy {local} into the sandbox",
            lambda: self._container.put_archive(str(target.parent), data),
        )
        if not done:
            msg = f"Copying {local} into the sandbox at {target} failed."
            raise InfraFailure(msg)

    async def get(self, remote: str, local: Path) -> None:
        """Copy a file or folder out (extracted with tarfile's ``data`` filter: nothing lands outside `local`)."""
        source, local = self._absolute(remote), Path(local)
        if self._stopped:
            msg = "This sandbox was stopped; start another to copy files out."
            raise InfraFailure(msg)

        def fetch() -> bytes:
            try:
                chunks, _ = self._container.get_archive(str(source))
                return b"".join(chunks)
            except docker.errors.NotFound as exc:
                msg = f"There is no {source} in the sandbox to copy out."
                raise InfraFailure(msg) from exc

        data = await asyncio.to_thread(self._backend.call, f"to copy {source} out of the sandbox", fetch)
        if not unpack(data, source.name, local):
            msg = f"Copying {source} out of the sandbox brought back nothing."
            raise InfraFailure(msg)


def _refused(code: int, out: Capture, err: Capture) -> tuple[str, bool] | None:
    """The engine's own words when it could not start the command, and whether waiting may help; None
    when the command ran. Engines report this as exit 125 or 126 with their error as the output: podman
    ``Error: ...``, Docker ``OCI runtime exec failed: ...``."""
    if code not in (125, 126) or out.total + err.total > 4096:
        return None
    said = " ".join((out.data() + err.data()).decode(errors="replace").split())
    engine_said = "OCI runtime" in said or "unable to start container process" in said
    if not (engine_said or (code == 125 and said.startswith("Error: "))):
        return None
    # A full process table (the runtime's init could not fork) empties as processes end; an unknown
    # user or a missing working directory never does.
    busy = any(sign in said for sign in ("init-p", "temporarily unavailable", "fork"))
    return said[:300], busy
