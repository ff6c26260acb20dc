"""The `sandbox` kind: what a sandbox is asked for and answers (the data), and the backend's interface.

Images are built from a `SandboxSpec`, and isolated command sessions started from them. Many handles
may be open at once, from one backend. A command that exits non-zero is data
(`ExecResult.exit_code`); `InfraFailure` means the backend itself failed (it could not build,
start, run or copy), so the episode is ``infra_error`` and never scored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs


def _positive_or_none(_inst: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not (isinstance(value, int | float) and 0 < value < math.inf):
        msg = f"{attribute.name} must be a positive number or None, got {value!r}."
        raise ValueError(msg)


@attrs.frozen(kw_only=True)
class SandboxSpec:
    """How to build and run one isolated environment (a task's ``environment/``, say).

    Exactly one of `image` (a name the backend can resolve, e.g. ``debian:12`` or a root
    filesystem path) and `context` (a folder holding a ``Dockerfile``) is given.
    """

    image: str | None = None
    """A ready image to start from."""
    context: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))
    """A build context folder with a Dockerfile (``dockerfile`` names another file in it)."""
    dockerfile: str = "Dockerfile"
    workdir: str = "/workspace"
    """The working directory inside the sandbox; commands run there unless told otherwise."""
    env: dict[str, str] = attrs.field(factory=dict)
    """Environment variables of every command."""
    network: bool = False
    """Whether commands may reach the network (off by default: most graded tasks must not)."""
    cpus: float | None = attrs.field(default=None, validator=_positive_or_none)
    memory_mb: int | None = attrs.field(default=None, validator=_positive_or_none)
    pids: int | None = attrs.field(default=None, validator=_positive_or_none)
    """Most processes at once (a fork bomb's bound)."""

    def __attrs_post_init__(self) -> None:
        if (self.image is None) == (self.context is None):
            msg = "A SandboxSpec names exactly one of image= and context= (a folder holding a Dockerfile)."
            raise ValueError(msg)


@attrs.frozen(kw_only=True)
class SandboxImage:
    """A built (or resolved) image: what `start` runs, and the digest a trajectory records."""

    ref: str
    """The backend's own reference to the image (a tag, an id, a root filesystem path)."""
    digest: str
    """A content digest (``sha256:...``), the same whenever the same inputs were built."""
    spec: SandboxSpec


@attrs.frozen(kw_only=True)
class ExecResult:
    """How one command ended. A non-zero exit is data, never an exception."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    """The command ran past its timeout and was killed (with everything it started)."""
    duration: float = 0.0
    """Wall-clock seconds."""

    @property
    def ok(self) -> bool:
        """Exit code 0 within the time allowed."""
        return self.exit_code == 0 and not self.timed_out


@attrs.frozen(kw_only=True)
class SandboxCapabilities:
    """What a sandbox backend claims; ``nenyax sandbox-check`` proves each claim it makes."""

    network_isolation: bool = False
    """``network=False`` really cuts the network."""
    resource_limits: bool = False
    """cpus, memory_mb and pids are enforced."""
    persistent_session: bool = True
    """Files and state survive between exec calls of one handle."""
    image_build: bool = False
    """`build` accepts a Dockerfile context, not only a ready image."""
    streaming_output: bool = False
    """exec can stream output lines to a callback while the command runs."""


OutputCallback = Callable[[str, str], None]
"""Called with (stream name ``stdout``/``stderr``, line) as a command prints, where streaming is supported."""


@runtime_checkable
class SandboxHandle(Protocol):
    """One running sandbox: an async context manager (``async with await backend.start(image) as box``)."""

    async def exec(
        self,
        command: Sequence[str] | str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        on_output: OutputCallback | None = None,
    ) -> ExecResult:
        """Run `command` (an argv list, or a string for ``sh -c``) in `cwd` (default: the spec's workdir).

        Past `timeout` seconds the command and everything it started are killed and the result says
        ``timed_out``. `on_output` receives lines as they come when the backend streams output.
        """
        ...

    async def put(self, local: Path, remote: str) -> None:
        """Copy a file or a directory (recursively) from this machine to `remote` inside the sandbox."""
        ...

    async def get(self, remote: str, local: Path) -> None:
        """Copy a file or a directory from inside the sandbox to `local` on this machine."""
        ...

    async def stop(self) -> None:
        """Stop the sandbox and remove what it holds; safe to call twice."""
        ...

    async def __aenter__(self) -> SandboxHandle: ...

    async def __aexit__(self, *exc: object) -> None: ...


@runtime_checkable
class Sandbox(Protocol):
    """A sandbox backend (bwrap, docker, ...): what a sandbox plugin's factory returns."""

    capabilities: SandboxCapabilities
    """What this backend claims; each claim is proven by ``nenyax sandbox-check NAME``."""

    async def build(self, spec: SandboxSpec) -> SandboxImage:
        """Build (or resolve) the image `spec` describes; the same inputs give the same digest."""
        ...

    async def start(self, image: SandboxImage) -> SandboxHandle:
        """Start a fresh sandbox from `image`."""
        ...
