"""What a ``karotte:`` URI names: an environment folder (a `karotte create-env` project), and how its runs go."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from nenyax.core import BadURIError, EnvURI
from nenyax.core.toolkit.options import Option, Options

RUNTIMES = ("podman", "docker", "docker:gvisor", "nerdctl", "firecracker", "modal", "apple-container")
"""karotte's runtimes (`karotte.runtime.Runtime`); the adapter plays on the local engines (podman, docker)."""

OPTIONS = Options(
    "karotte",
    Option("task", str, help="Only this task of the environment (its karotte task id)."),
    Option("runtime", str, default="podman", choices=RUNTIMES, help="karotte's runtime (podman or docker here)."),
    Option("turn_limit", int, positive=True, help="The agent's turn limit per run (karotte's `turn_limit`)."),
    Option("step_time_limit", float, positive=True, help="Seconds each step may take (karotte's own limit)."),
    Option("out_dir", str, help="Where each run's transcript and log are kept (default: a temporary folder)."),
)
"""The query keys (and ``[adapters.karotte]`` config keys) the adapter reads; any other is refused."""


LOCAL_ENGINES = ("podman", "docker")
"""The runtimes whose containers run on this machine's engine, where the recording proxy can be linked in."""

_ELSEWHERE = {
    "firecracker": "karotte's firecracker runtime boots a VM, which needs /dev/kvm",
    "modal": "karotte's modal runtime runs the container on Modal, which the recording proxy cannot be linked into",
    "apple-container": "karotte's apple-container runtime is macOS's",
    "docker:gvisor": "karotte's docker:gvisor runtime needs gVisor's runsc",
    "nerdctl": "karotte's nerdctl runtime needs containerd and BuildKit",
}


@attrs.frozen(kw_only=True)
class KarotteSpec:
    """A parsed ``karotte:<folder>?...`` URI."""

    uri: str
    folder: Path
    """The environment folder (its Containerfile and ``src/environment``)."""
    task: str | None = None
    runtime: str = "podman"
    turn_limit: int | None = None
    step_time_limit: float | None = None
    out_dir: Path | None = None


def parse_spec(uri: EnvURI, config: Mapping[str, Any] | None = None) -> KarotteSpec:
    """The URI's folder and options; the run config's ``[adapters.karotte]`` table gives defaults."""
    target = uri.target.strip()
    if not target:
        raise BadURIError("Name a karotte environment folder: 'karotte:<folder>' (one `karotte create-env` made).")
    read = OPTIONS.read(uri, defaults=config)
    if read["runtime"] not in LOCAL_ENGINES:
        raise BadURIError(f"{_ELSEWHERE[read['runtime']]}; Nenyax plays karotte on podman or docker (?runtime=podman).")
    out = read["out_dir"]
    return KarotteSpec(
        uri=uri.raw,
        folder=Path(target).expanduser().resolve(),
        task=read["task"],
        runtime=read["runtime"],
        turn_limit=read["turn_limit"],
        step_time_limit=read["step_time_limit"],
        out_dir=Path(out).expanduser() if out else None,
    )
