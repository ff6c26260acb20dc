"""What every sandbox backend on this machine needs: tar in and out, what a command started, our cgroups.

A backend copies files through a tar stream (`pack` one way, `unpack` the other: extracted with
tarfile's ``data`` filter, so nothing lands outside the destination), finds what a command left running
by the marker in its environment (`carrying`, `kill_carrying`), and places its control groups under the
group this process sits in (`own_cgroups`), so a harness that bounds us keeps bounding them. A handle
that runs commands through one `_run` capturing both streams gets the protocol's `exec` from `CapturedExec`.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from nenyax.core.plugins.proxy_link import ProxyLink as ProxyLink  # re-exported for the sandboxes
from nenyax.core.plugins.sandbox import MAX_OUTPUT_BYTES, ExecResult, OutputCallback
from nenyax.core.plugins.sandbox_output import OutputCapture, captured_result

CGROUP_FILE = Path("/proc/self/cgroup")


def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """A tar member owned by root inside the sandbox (a `tarfile.add` filter)."""
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def pack(local: Path, name: str) -> bytes:
    """`local` (a file or a folder, recursively) as a tar stream of one member `name`, owned by root."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(local, arcname=name, filter=as_root)
    return buffer.getvalue()


def unpack(data: bytes, name: str, local: Path, *, scratch: str | Path | None = None) -> bool:
    """Extract the member `name` of the tar stream `data` to `local` (a folder merges into one there).

    Extraction goes through a temporary folder (in `scratch` when given) with tarfile's ``data`` filter.
    False when the stream holds no `name`.
    """
    with tempfile.TemporaryDirectory(prefix="nenyax-unpack-", dir=scratch) as folder:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            archive.extractall(folder, filter="data")
        landed = Path(folder) / name
        if not landed.exists():
            return False
        local.parent.mkdir(parents=True, exist_ok=True)
        if landed.is_dir():
            shutil.copytree(landed, local, dirs_exist_ok=True)
        else:
            shutil.copy2(landed, local)
    return True


def carrying(needle: bytes) -> list[int]:
    """Processes on this machine whose environment holds the entry `needle` (``KEY=value``)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        with contextlib.suppress(OSError):
            if needle in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
    return found


def kill_carrying(needle: bytes, passes: int = 5) -> None:
    """SIGKILL every process whose environment holds `needle`, a few passes over (they may fork meanwhile)."""
    for _ in range(passes):
        found = carrying(needle)
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if not found:
            return


def own_cgroups(source: Path = CGROUP_FILE) -> dict[str, str]:
    """This process's group per v1 controller (``memory`` -> ``/a/b``), and ``""`` -> the v2 one.

    Empty when `source` (``/proc/self/cgroup``) cannot be read.
    """
    try:
        lines = source.read_text().splitlines()
    except OSError:
        return {}
    found: dict[str, str] = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found


class CapturedExec:
    """`SandboxHandle.exec` for a handle whose `_run` runs a command and captures both of its streams."""

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
    ) -> tuple[int, OutputCapture, OutputCapture, bool, float]:
        """(exit code, stdout, stderr, whether it timed out, seconds it took)."""
        raise NotImplementedError

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
        """Run `command` inside (see `nenyax.core.plugins.sandbox.SandboxHandle.exec`)."""
        code, out, err, timed_out, took = await self._run(
            command, cwd=cwd, env=env, timeout=timeout, user=user, on_output=on_output, max_output=max_output
        )
        return captured_result(code, out, err, timed_out=timed_out, duration=took)
