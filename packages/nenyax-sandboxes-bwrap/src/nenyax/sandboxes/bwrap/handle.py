"""One running bwrap sandbox: a first process holding its namespaces, and commands entered into them.

`start` runs ``bwrap ... sleep infinity`` (its pid, mount, IPC, UTS and, unless the network is the
host's, network namespaces; every capability dropped; a tmpfs root holding the image read-only and
the workdir writable). Each `exec` enters those namespaces with ``nsenter`` and drops every
capability with ``setpriv`` before the command runs, so what one command starts in the background is
there for the next (docker-exec semantics). Each command runs in a control group of its own inside the
sandbox's, which is how a timeout kills everything it started, even what left its session.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from nenyax.core import MAX_OUTPUT_BYTES, NetworkPolicy, OutputCallback, SandboxImage
from nenyax.core.errors import InfraFailure
from nenyax.core.toolkit.sandbox import CapturedExec, OutputCapture, ProxyLink, kill_carrying, pack, unpack
from nenyax.sandboxes.bwrap.cgroups import Group

if TYPE_CHECKING:
    from nenyax.sandboxes.bwrap.backend import BwrapSandbox

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Host files no sandbox reads, though it runs as uid 0 without capabilities and /etc is bound read-only.
_HIDDEN = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers")
_START_TIMEOUT_S = 20.0
_READ_AFTER_EXIT_S = 1.0
"""How long a finished command's pipes are still read: what it left running (a daemon, ``cmd &``) may hold them."""
_ENTER = ["-m", "-u", "-i", "-n", "-p", "-r", "-w"]


async def _drain(stream: asyncio.StreamReader, capture: OutputCapture) -> None:
    while chunk := await stream.read(65536):
        capture.feed(chunk)
    capture.flush()


class BwrapHandle(CapturedExec):
    """A started sandbox (see the module docstring); an async context manager that stops it on exit."""

    def __init__(self, backend: BwrapSandbox, image: SandboxImage, proxy: str | None) -> None:
        self.image = image
        self.spec = image.spec
        self._backend = backend
        self._box = Path(tempfile.mkdtemp(prefix="nenyax-bwrap-", dir=backend.scratch))
        self._id = uuid.uuid4().hex[:12]
        self._group: Group | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._pid = 0
        self._counter = itertools.count(1)
        self._link = ProxyLink(proxy) if proxy and self.spec.network is NetworkPolicy.PROXY else None
        self.proxy_url: str | None = proxy
        self.unenforced: tuple[str, ...] = backend.unenforced(self.spec)
        self._stopped = False

    # ------------------------------------------------------------------ start and stop

    def _mounts(self) -> list[str]:
        # The image is this machine's /usr and /etc, read-only (`BwrapSandbox.build` resolves nothing else).
        args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), f"/{name}"]
            elif host.is_dir():
                args += ["--ro-bind", str(host), f"/{name}"]
        for hidden in _HIDDEN:
            if Path(hidden).exists():
                args += ["--ro-bind", "/dev/null", hidden]
        args += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp"]
        work = self._box / "work"
        work.mkdir()
        args += ["--bind", str(work), self.spec.workdir]
        for mount in self.spec.mounts:
            args += ["--ro-bind" if mount.read_only else "--bind", str(mount.source), mount.target]
        return args

    def _argv(self, status_fd: int) -> list[str]:
        args = [self._backend.bwrap, *self._mounts()]
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
        if self.spec.network is not NetworkPolicy.FULL:
            args.append("--unshare-net")
        if self._backend.as_root:
            # Root keeps no capability inside (without this, root can remount the host read-write).
            # No user namespace: commands can then switch to any uid (exec's `user`).
            args += ["--cap-drop", "ALL"]
        else:
            args += ["--unshare-user", "--uid", "0", "--gid", "0"]
        args += ["--die-with-parent", "--new-session", "--chdir", self.spec.workdir, "--clearenv"]
        args += ["--setenv", "PATH", PATH, "--setenv", "HOME", "/root"]
        return [*args, "--json-status-fd", str(status_fd), "--", "sleep", "infinity"]

    async def start(self) -> BwrapHandle:
        """Start the first process; returns once its namespaces exist."""
        if self._backend.cgroups is not None:
            self._group = self._backend.cgroups.group(f"nenyax-{self._id}")
            self._group.limit(memory_mb=self.spec.memory_mb, pids=self.spec.pids, cpus=self.spec.cpus)
        read_end, write_end = os.pipe()
        group = self._group
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self._argv(write_end),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=(write_end,),
                preexec_fn=group.join if group else None,  # the child joins its groups before exec
            )
        except OSError as exc:
            os.close(read_end)
            await self.stop()
            msg = f"bwrap could not start: {exc}."
            raise InfraFailure(msg) from exc
        finally:
            os.close(write_end)
        try:
            line = await asyncio.wait_for(asyncio.to_thread(_first_line, read_end), _START_TIMEOUT_S)
            self._pid = int(json.loads(line)["child-pid"])
            # bwrap says the pid (its init inside) before it has finished the mounts: commands entered
            # then would see a half-made root. It is ready once its child has become `sleep infinity`.
            await asyncio.wait_for(_until_child_runs(self._pid, b"sleep\0infinity\0"), _START_TIMEOUT_S)
        except (TimeoutError, ValueError, KeyError) as exc:
            said = b""
            if self._process.stderr is not None:
                with contextlib.suppress(TimeoutError):
                    said = await asyncio.wait_for(self._process.stderr.read(2000), 2)
            await self.stop()
            msg = f"bwrap did not start the sandbox: {said.decode(errors='replace').strip() or exc}."
            raise InfraFailure(msg) from exc
        finally:
            os.close(read_end)
        if self._link is not None:
            try:
                await self._link.open(self._pid)
            except InfraFailure:
                await self.stop()
                raise
        return self

    async def stop(self) -> None:
        """Kill everything the sandbox runs and delete its files; safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        self._backend.forget(self)
        if self._link is not None:
            await self._link.close()
        if self._group is not None:
            await asyncio.to_thread(self._group.kill)
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.send_signal(signal.SIGKILL)
            await self._process.wait()
        if self._group is not None:
            await asyncio.to_thread(self._group.remove)
        await asyncio.to_thread(shutil.rmtree, self._box, True)

    async def __aenter__(self) -> BwrapHandle:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ commands

    def _user(self, user: str | int | None) -> list[str]:
        if user is None:
            return []
        uid, gid = self._backend.resolve_user(self.image, user)
        return [f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]

    def _command(
        self, command: Sequence[str] | str, cwd: str | None, env: Mapping[str, str] | None, user: str | int | None
    ) -> tuple[list[str], str]:
        if self._stopped:
            msg = "This sandbox was stopped; start another to run commands."
            raise InfraFailure(msg)
        marker = f"{self._id}-{next(self._counter)}"
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        home = "/root" if user in (None, 0, "root") else "/"
        environment = {"PATH": PATH, "HOME": home, **self.spec.env, **(env or {}), "NENYAX_EXEC": marker}
        where = cwd or self.spec.workdir
        enter = ["nsenter", "-t", str(self._pid), *_ENTER]
        if not self._backend.as_root:
            enter += ["-U", "--preserve-credentials"]
        drop = ["setpriv", *self._user(user), "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
        run_in = ["/bin/sh", "-c", 'cd -- "$0" || exit 127; exec "$@"', where, *argv]
        env_args = ["env", "-i", *(f"{k}={v}" for k, v in environment.items())]
        return [*enter, "--", *drop, "--no-new-privs", "--", *env_args, *run_in], marker

    async def _run(
        self,
        command: Sequence[str] | str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        user: str | int | None = None,
        stdin: bytes | None = None,
        on_output: OutputCallback | None = None,
        max_output: int = MAX_OUTPUT_BYTES,
    ) -> tuple[int, OutputCapture, OutputCapture, bool, float]:
        argv, marker = self._command(command, cwd, env, user)
        group = self._group.child(f"exec-{marker}") if self._group is not None else None
        started = time.perf_counter()
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                preexec_fn=group.join if group else None,  # it joins its group before exec
            )
        except OSError as exc:
            msg = f"The bwrap sandbox could not run {command!r}: {exc}."
            raise InfraFailure(msg) from exc
        out, err = OutputCapture("stdout", max_output, on_output), OutputCapture("stderr", max_output, on_output)
        assert process.stdout is not None
        assert process.stderr is not None

        async def feed() -> None:
            if stdin is not None and process.stdin is not None:
                with contextlib.suppress(ConnectionError):
                    process.stdin.write(stdin)
                    await process.stdin.drain()
                process.stdin.close()

        async def exited() -> None:
            # Not `process.wait()`: on Python 3.11 it also waits for the pipes to close.
            while process.returncode is None:
                await asyncio.sleep(0.05)

        async def finish() -> int:
            drains = (feed(), _drain(process.stdout, out), _drain(process.stderr, err))  # type: ignore[arg-type]
            pipes: asyncio.Future[Any] = asyncio.gather(*drains)
            exit_seen: asyncio.Future[Any] = asyncio.ensure_future(exited())
            await asyncio.wait({pipes, exit_seen}, return_when=asyncio.FIRST_COMPLETED)
            exit_seen.cancel()
            # The command is over when it exits, as `docker exec`'s is: a process it left in the background
            # (tmux's server, which harbor starts) may hold its pipes open for ever. Under uvloop (uvicorn's
            # loop, NeMo Gym's agent servers) such a process did, and every harbor trial waited for its timeout.
            try:
                await asyncio.wait_for(asyncio.shield(pipes), _READ_AFTER_EXIT_S)
            except TimeoutError:
                pipes.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pipes
                out.flush()
                err.flush()
                return process.returncode if process.returncode is not None else -9
            return await process.wait()

        timed_out = False
        running = asyncio.ensure_future(finish())
        try:
            code = await asyncio.wait_for(asyncio.shield(running), timeout)
        except TimeoutError:
            timed_out = True
            await self._kill_command(process, marker, group)
            try:
                code = await asyncio.wait_for(running, 10)
            except TimeoutError:  # a pipe still held open by a process that escaped: give up on it
                running.cancel()
                code = process.returncode if process.returncode is not None else -9
        return code, out, err, timed_out, time.perf_counter() - started

    async def _kill_command(self, process: asyncio.subprocess.Process, marker: str, group: Group | None) -> None:
        """Kill the command and all it started: its control group, else what carries its marker."""
        if group is not None:
            await asyncio.to_thread(group.kill)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        kill_carrying(f"NENYAX_EXEC={marker}".encode(), passes=1)

    # ------------------------------------------------------------------ files

    async def put(self, local: Path, remote: str) -> None:
        """Copy a file or folder in, through ``tar`` inside (paths resolve in the sandbox, never the host)."""
        local, target = Path(local), PurePosixPath(remote)
        if not target.is_absolute():
            target = PurePosixPath(self.spec.workdir) / target
        if not local.exists():
            msg = f"{local} does not exist on this machine."
            raise InfraFailure(msg)
        parent = str(target.parent)
        code, _, err, _, _ = await self._run(
            ["sh", "-c", 'mkdir -p -- "$0" && tar -x --no-same-owner -f - -C "$0"', parent],
            stdin=pack(local, target.name),
        )
        if code != 0:
            msg = f"Copying {local} into the sandbox at {target} failed: {err.text()[0].strip()}."
            raise InfraFailure(msg)

    async def get(self, remote: str, local: Path) -> None:
        """Copy a file or folder out (extracted with tarfile's ``data`` filter: nothing lands outside `local`)."""
        source, local = PurePosixPath(remote), Path(local)
        if not source.is_absolute():
            source = PurePosixPath(self.spec.workdir) / source
        code, out, err, _, _ = await self._run(
            ["tar", "-c", "-f", "-", "-C", str(source.parent), source.name], max_output=1 << 34
        )
        if code != 0:
            msg = f"Copying {source} out of the sandbox failed: {err.text()[0].strip()}."
            raise InfraFailure(msg)
        if not unpack(out.data(), source.name, local, scratch=self._box):
            msg = f"Copying {source} out of the sandbox brought back nothing."
            raise InfraFailure(msg)


def _first_line(fd: int) -> bytes:
    """The first line bwrap writes to its status pipe (blocking: run on a thread)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0]


async def _until_child_runs(pid: int, cmdline: bytes) -> None:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    while True:
        try:
            kids = children.read_text().split()
        except OSError as exc:  # it died: bwrap failed
            raise ValueError(f"the sandbox's first process {pid} ended") from exc
        for kid in kids:
            with contextlib.suppress(OSError):
                if Path(f"/proc/{kid}/cmdline").read_bytes() == cmdline:
                    return
        await asyncio.sleep(0.002)
