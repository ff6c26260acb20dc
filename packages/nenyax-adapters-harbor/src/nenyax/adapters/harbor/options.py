"""What a ``harbor:`` URI names: a task folder or a dataset folder, and how its trials run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from nenyax.core import BadURIError, EnvURI
from nenyax.core.toolkit.options import Option, Options

OPTIONS = Options(
    "harbor",
    Option("sandbox", str, default="bwrap", help="The sandbox plugin trials run in (bwrap, docker...)."),
    Option("sandbox_options", dict, default={}, help="The sandbox's own options, as a JSON object."),
    Option("image", str, help="The image trials start from, instead of the task's own environment."),
    Option("max_turns", int, positive=True, help="The agent's turn limit (harbor's default when unset)."),
    Option("trials_dir", str, help="Where harbor writes its trials (default: a temporary folder)."),
    Option("agent_timeout", float, positive=True, help="Seconds the agent may take (the task's own when unset)."),
)
"""The query keys (and ``[adapters.harbor]`` config keys) the adapter reads; any other is refused."""


@attrs.frozen(kw_only=True)
class HarborSpec:
    """A parsed ``harbor:<folder>?...`` URI."""

    uri: str
    target: str
    """The task or dataset folder."""
    sandbox: str = "bwrap"
    """The Nenyax sandbox plugin the trials run in."""
    sandbox_options: dict[str, Any] = attrs.field(factory=dict)
    """Options of that plugin's factory (``{"bwrap": "/usr/bin/bwrap"}``)."""
    image: str | None = None
    """An image for the sandbox instead of its default (a sandbox that builds images builds the task's)."""
    max_turns: int | None = None
    """terminus-2's turn limit for a model policy (harbor's default: unbounded)."""
    trials_dir: Path | None = None
    """Where harbor's trial folders are kept (logs, rewards); None: a temporary folder per episode."""
    agent_timeout: float | None = None
    """Seconds the agent may take, instead of task.toml's ``[agent] timeout_sec``."""


def parse_spec(uri: EnvURI, config: Mapping[str, Any] | None = None) -> HarborSpec:
    """The URI's folder and options; the run config's ``[adapters.harbor]`` table gives defaults."""
    target = uri.target.strip()
    if not target:
        raise BadURIError("Name a folder: 'harbor:<task folder>' or 'harbor:<folder of task folders>'.")
    read = OPTIONS.read(uri, defaults=config)
    trials = read["trials_dir"]
    return HarborSpec(
        uri=uri.raw,
        target=target,
        sandbox=read["sandbox"],
        sandbox_options=read["sandbox_options"],
        image=read["image"],
        max_turns=read["max_turns"],
        trials_dir=Path(trials).expanduser() if trials else None,
        agent_timeout=read["agent_timeout"],
    )
