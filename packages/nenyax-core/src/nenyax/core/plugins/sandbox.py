"""The `sandbox` kind: what a sandbox is asked for and answers (the data), and the backend's interface.

Images are built from a `SandboxSpec`, and isolated command sessions started from them. Many handles
may be open at once, from one backend. A command that exits non-zero is data
(`ExecResult.exit_code`); `InfraFailure` means the backend itself failed (it could not build,
start, run or copy), so the episode is ``infra_error`` and never scored.

What a backend claims (`SandboxCapabilities`) is proven by ``nenyax sandbox-check NAME``; a limit a
spec asks for and the backend cannot enforce is said in `SandboxHandle.unenforced`, never silently
dropped.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from nenyax.core.plugins.registry import Registry


def _positive_or_none(_inst: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not (isinstance(value, int | float) and 0 < value < math.inf):
        msg = f"{attribute.name} must be a positive number or None, got {value!r}."
        raise ValueError(msg)


class NetworkPolicy(enum.Enum):
    """What commands inside a sandbox may reach."""

    NONE = "none"
    """Nothing: the sandbox has a loopback of its own and no route out (the default)."""
    PROXY = "proxy"
    """Only the recording proxy the sandbox was started with (`Sandbox.start`'s ``proxy``): an agent
    inside can call its model, and nothing else."""
    FULL = "full"
    """The host's network."""


def _network(value: NetworkPolicy | str | bool) -> NetworkPolicy:
    if isinstance(value, bool):  # the spec's earlier bool: True opened the network, False cut it
        return NetworkPolicy.FULL if value else NetworkPolicy.NONE
    try:
        return NetworkPolicy(value)
    except ValueError:
        names = ", ".join(p.value for p in NetworkPolicy)
        msg = f"network must be one of {names}, got {value!r}."
        raise ValueError(msg) from None


@attrs.frozen(kw_only=True)
class Mount:
    """A folder of this machine made visible inside the sandbox."""

    source: Path = attrs.field(converter=Path)
    target: str
    """An absolute path inside the sandbox."""
    read_only: bool = True

    def __attrs_post_init__(self) -> None:
        if not self.target.startswith("/"):
            msg = f"A mount's target must be an absolute path inside the sandbox, got {self.target!r}."
            raise ValueError(msg)


@attrs.frozen(kw_only=True)
class SandboxSpec:
    """How to build and run one isolated environment (a task's ``environment/``, say).

    Exactly one of `image` (a name the backend can resolve, e.g. ``debian:12`` or a root
    filesystem path) and `context` (a folder holding a ``Dockerfile``) is given. The build inputs
    (`image`/`context`, `dockerfile`, `build_args`) decide the image's digest; the rest is how it runs.
    """

    image: str | None = None
    """A ready image to start from."""
    context: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))
    """A build context folder with a Dockerfile (``dockerfile`` names another file in it)."""
    dockerfile: str = "Dockerfile"
    build_args: dict[str, str] = attrs.field(factory=dict)
    """The Dockerfile's ``ARG`` values."""
    build_timeout: float | None = attrs.field(default=None, validator=_positive_or_none)
    """Seconds a build may take before it is an `InfraFailure`."""
    workdir: str = "/workspace"
    """The working directory inside the sandbox; commands run there unless told otherwise."""
    env: dict[str, str] = attrs.field(factory=dict)
    """Environment variables of every command."""
    network: NetworkPolicy = attrs.field(default=NetworkPolicy.NONE, converter=_network)
    """What commands may reach (nothing by default: most graded tasks must not)."""
    cpus: float | None = attrs.field(default=None, validator=_positive_or_none)
    memory_mb: int | None = attrs.field(default=None, validator=_positive_or_none)
    pids: int | None = attrs.field(default=None, validator=_positive_or_none)
    """Most processes at once (a fork bomb's bound)."""
    storage_mb: int | None = attrs.field(default=None, validator=_positive_or_none)
    """Most disk the sandbox's own writes may take."""
    gpus: int = 0
    """GPUs made visible inside (0: none)."""
    mounts: tuple[Mount, ...] = attrs.field(default=(), converter=tuple)

    def __attrs_post_init__(self) -> None:
        if (self.image is None) == (self.context is None):
            msg = "A SandboxSpec names exactly one of image= and context= (a folder holding a Dockerfile)."
            raise ValueError(msg)
        if not self.workdir.startswith("/"):
            msg = f"workdir must be an absolute path inside the sandbox, got {self.workdir!r}."
            raise ValueError(msg)
        if self.gpus < 0:
            msg = f"gpus must be 0 or more, got {self.gpus!r}."
            raise ValueError(msg)

    @property
    def limits(self) -> dict[str, float]:
        """The resource limits asked for, by field name (those left unset are not in it)."""
        asked = {"cpus": self.cpus, "memory_mb": self.memory_mb, "pids": self.pids, "storage_mb": self.storage_mb}
        return {name: value for name, value in asked.items() if value is not None}


@attrs.frozen(kw_only=True)
class SandboxImage:
    """A built (or resolved) image: what `start` runs, and the digest a trajectory records."""

    ref: str
    """The backend's own reference to the image (a tag, an id, a root filesystem path)."""
    digest: str
    """A content digest (``sha256:...``), the same whenever the same inputs were built."""
    spec: SandboxSpec


MAX_OUTPUT_BYTES = 1 << 20
"""How much of each stream an `ExecResult` keeps by default (its head and its tail); the rest is cut."""


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
    truncated: bool = False
    """A stream was longer than the bound asked for: its middle was cut (`bounded_text` says where)."""

    @property
    def ok(self) -> bool:
        """Exit code 0 within the time allowed."""
        return self.exit_code == 0 and not self.timed_out


def bounded_text(data: bytes, limit: int = MAX_OUTPUT_BYTES) -> tuple[str, bool]:
    """`data` decoded, at most `limit` bytes of it: its head and tail around a line saying how much was
    cut (a log's start says what ran, its end how it failed); and whether anything was cut."""
    if len(data) <= limit:
        return data.decode(errors="replace"), False
    half = limit // 2
    cut = len(data) - 2 * half
    head, tail = data[:half].decode(errors="replace"), data[-half:].decode(errors="replace")
    return f"{head}\n[... {cut} bytes cut ...]\n{tail}", True


@attrs.frozen(kw_only=True)
class SandboxCapabilities:
    """What a sandbox backend claims; ``nenyax sandbox-check`` proves each claim it makes."""

    network_isolation: bool = False
    """``network="none"`` really cuts the network."""
    proxy_network: bool = False
    """``network="proxy"`` reaches the proxy given to `Sandbox.start`, and nothing else."""
    resource_limits: bool = False
    """cpus, memory_mb and pids are enforced (a memory hog is killed, a fork bomb bounded)."""
    storage_limit: bool = False
    """storage_mb is enforced."""
    persistent_session: bool = True
    """Files, and processes started in the background, survive between exec calls of one handle."""
    image_build: bool = False
    """`build` accepts a Dockerfile context, not only a ready image."""
    streaming_output: bool = False
    """exec can stream output lines to a callback while the command runs."""
    exec_users: bool = False
    """exec's ``user`` runs the command as another user of the sandbox."""
    filesystem_isolation: bool = False
    """Nothing outside the sandbox's own files can be written from inside (the host's files are safe)."""


OutputCallback = Callable[[str, str], None]
"""Called with (stream name ``stdout``/``stderr``, line) as a command prints, where streaming is supported."""


@runtime_checkable
class SandboxHandle(Protocol):
    """One running sandbox: an async context manager (``async with await backend.start(image) as box``)."""

    proxy_url: str | None
    """Where commands inside reach the proxy `start` was given (None: no proxy was given)."""
    unenforced: tuple[str, ...]
    """The spec's limits this backend could not enforce (``("storage_mb",)``); empty when all hold."""

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
        """Run `command` (an argv list, or a string for ``sh -c``) in `cwd` (default: the spec's workdir).

        Past `timeout` seconds the command and everything it started are killed and the result says
        ``timed_out``. `user` (a name or uid inside the sandbox) runs it as that user, where the backend
        declares ``exec_users`` (elsewhere a user other than the default is an `InfraFailure`). Each
        stream keeps at most `max_output` bytes (`bounded_text`). `on_output` receives lines as they
        come when the backend streams output.
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
    default_image: str
    """An image `start` runs here with no network (a spec naming no other; what the kit starts)."""

    async def build(self, spec: SandboxSpec) -> SandboxImage:
        """Build (or resolve) the image `spec` describes; the same inputs give the same digest.

        A context needs ``image_build``; past ``spec.build_timeout`` the build is an `InfraFailure`.
        """
        ...

    async def start(self, image: SandboxImage, *, proxy: str | None = None) -> SandboxHandle:
        """Start a fresh sandbox from `image`.

        `proxy` is the URL of a recording proxy on this machine (``http://127.0.0.1:PORT/v1``); with
        the spec's network policy ``proxy``, commands inside reach it at the handle's `proxy_url`.
        """
        ...

    async def remove(self, image: SandboxImage) -> None:
        """Delete what `build` made for `image` (safe for an image already removed, or only resolved)."""
        ...

    async def close(self) -> None:
        """Stop every handle still open and release the backend's own resources; safe to call twice."""
        ...


def create_sandbox(name: str, registry: Registry | None = None, **options: Any) -> Sandbox:
    """The sandbox plugin `name` (``bwrap``, ``docker``...), made by its factory from `options`.

    An unknown name or option is one `UsageError` sentence; a backend that cannot run here raises
    `InfraFailure` saying why: at once where it is a missing program (no bwrap binary), at its first
    call where it is a service (no Docker API at ``DOCKER_HOST``).
    """
    from nenyax.core.plugins.registry import default_registry

    sandbox: Sandbox = (registry or default_registry()).create("sandbox", name, **options)
    return sandbox
