"""What a sandbox is asked for and what it answers: the data of the `sandbox` plugin kind."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

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
