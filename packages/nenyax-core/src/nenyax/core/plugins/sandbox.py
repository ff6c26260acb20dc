"""The `sandbox` kind: images built from a spec, and isolated command sessions started from them.

Many handles may be open at once, from one backend. A command that exits non-zero is data
(`ExecResult.exit_code`); `InfraFailure` means the backend itself failed (it could not build,
start, run or copy), so the episode is ``infra_error`` and never scored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from nenyax.core.contract.sandbox import ExecResult, SandboxCapabilities, SandboxImage, SandboxSpec

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
